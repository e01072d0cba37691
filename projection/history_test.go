package projection

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/vmihailenco/msgpack/v5"
)

// history builds a log of a realistic shape, as the engine writes it: the
// shared benchmark workload (internal/workload, which flowbench gen and
// flow's benchmarks write through the engine), turned into the events
// the engine appends for its ops (the same streams, versions, types and
// payload bytes as a file that flowrun writes, checked when this moved). Payloads are encoded as flow encodes
// them (msgpack, sorted map keys).
type history struct {
	tb       testing.TB
	records  []*eventlog.Record
	versions map[string]uint64
	clock    time.Time
	stdout   Output
}

// genHistory returns the records of the first n ops of the workload of
// projects projects (seed 1), at least one per project.
func genHistory(tb testing.TB, projects, n int) []*eventlog.Record {
	return genHistorySeed(tb, projects, n, 1)
}

// genHistorySeed is genHistory of the workload of seed.
func genHistorySeed(tb testing.TB, projects, n int, seed uint64) []*eventlog.Record {
	sum := sha256.Sum256([]byte(workload.ExecStdout))
	h := &history{tb: tb, versions: map[string]uint64{}, clock: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		stdout: Output{Head: workload.ExecStdout, Bytes: int64(len(workload.ExecStdout)), SHA256: hex.EncodeToString(sum[:])}}
	g := workload.New(workload.Options{Projects: projects, Seed: seed})
	for len(h.records) < max(n, projects) {
		h.emitOp(g.Next())
	}
	return h.records
}

// marshalPayload encodes a payload as flow's writer does.
func marshalPayload(tb testing.TB, v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.SetCustomStructTag("msgpack")
	if err := enc.Encode(v); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func (h *history) emit(stream, project, typ string, payload any) {
	h.versions[stream]++
	h.clock = h.clock.Add(time.Second)
	h.records = append(h.records, &eventlog.Record{Seq: uint64(len(h.records) + 1), Stream: stream, Version: h.versions[stream],
		Event: eventlog.Event{Type: typ, Schema: SchemaVersion, Time: h.clock, Actor: "agent", Session: "bench",
			Project: project, Data: marshalPayload(h.tb, payload)}})
}

// emitOp appends the event the engine appends for op.
func (h *history) emitOp(op workload.Op) {
	p, ts := op.Project, TaskStream(op.Project, op.Task)
	switch op.Kind {
	case workload.CreateProject:
		h.emit(ProjectStream(p), p, TypeProjectCreated, ProjectCreated{Name: op.ID, Description: op.Text})
	case workload.AddPlan:
		h.emit(PlanStream(p, op.ID), p, TypePlanCreated, PlanCreated{ID: op.ID, Title: op.Title, Description: op.Text})
	case workload.AddTask:
		h.emit(TaskStream(p, op.ID), p, TypeTaskCreated, TaskCreated{ID: op.ID, Plan: op.Plan, Title: op.Title,
			Description: op.Text, Owner: workload.Owner, Tags: workload.Tags(), Priority: op.Priority, Deps: op.Deps})
	case workload.StartTask:
		h.emit(ts, p, TypeTaskStatusChanged, TaskStatusChanged{From: StatusTodo, To: StatusDoing})
	case workload.AddStep:
		h.emit(ts, p, TypeStepAdded, StepAdded{ID: op.ID, Title: op.Title})
	case workload.StartStep:
		h.emit(ts, p, TypeStepStatusChanged, StepStatusChanged{ID: op.ID, To: StepInProgress})
	case workload.ProgressStep:
		half := workload.StepProgress
		h.emit(ts, p, TypeStepStatusChanged, StepStatusChanged{ID: op.ID, To: StepInProgress, Progress: &half, Note: workload.StepNote})
	case workload.CompleteStep:
		done := 100
		h.emit(ts, p, TypeStepStatusChanged, StepStatusChanged{ID: op.ID, To: StepCompleted, Progress: &done, Result: workload.StepResult})
	case workload.MergeContext:
		h.emit(ts, p, TypeTaskContextMerged, TaskContextMerged{Patch: op.Text})
	case workload.AddNote:
		h.emit(ts, p, TypeNoteAdded, NoteAdded{Task: op.Task, Kind: "note", Text: op.Text})
	case workload.RecordExec:
		h.emit(ts, p, TypeExecRecorded, ExecRecorded{ID: op.ID, Task: op.Task, Step: op.Step, Plan: op.Plan, Command: workload.ExecCommand,
			Cwd: workload.ExecCwd, Success: true, ElapsedMS: workload.ExecElapsedMS, Stdout: h.stdout, AddedVars: []string{workload.ExecAddedVar}})
	case workload.RequestApproval:
		sum := sha256.Sum256([]byte(workload.ApprovalAction))
		h.emit(ts, p, TypeApprovalRequested, ApprovalRequested{ID: op.ID, Task: op.Task, Message: workload.ApprovalMessage,
			Action: workload.ApprovalAction, ActionHash: hex.EncodeToString(sum[:])})
	case workload.GrantApproval:
		h.emit(ts, p, TypeApprovalDecided, ApprovalDecided{ID: op.ID, Decision: ApprovalGranted, By: "agent", Comment: workload.ApprovalComment})
	case workload.FinishTask:
		h.emit(ts, p, TypeTaskStatusChanged, TaskStatusChanged{From: StatusDoing, To: StatusDone})
	case workload.Checkpoint:
		h.emit(ProjectStream(p), p, TypeCheckpointCreated, CheckpointCreated{ID: op.ID, Label: workload.CheckpointLabel, AtSeq: uint64(len(h.records))})
	default:
		h.tb.Fatalf("history: no event for op %s", op.Kind)
	}
}

// replay folds records into a fresh Memory.
func replay(tb testing.TB, records []*eventlog.Record) *Memory {
	tb.Helper()
	m := NewMemory()
	for _, r := range records {
		if err := Apply(m, r); err != nil {
			tb.Fatalf("Apply: %v", err)
		}
	}
	return m
}

// BenchmarkReplay measures the fold alone (payload decode and Apply,
// no record decode) of a realistic history into a fresh Memory.
//
//	go test -run '^$' -bench Replay -count 5 ./projection
func BenchmarkReplay(b *testing.B) {
	records := genHistory(b, 10, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		replay(b, records)
	}
	b.ReportMetric(float64(b.N)*float64(len(records))/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkReflectDecode is DESIGN.md §11's baseline: a reflection-based
// msgpack decode of the same payloads into their types, and nothing else.
func BenchmarkReflectDecode(b *testing.B) {
	records := genHistory(b, 10, 100_000)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, r := range records {
			v := newPayload(r.Type)
			if err := msgpack.Unmarshal(r.Data, v); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(records))/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}

// newPayload returns a new payload value of an event type.
func newPayload(typ string) any {
	switch typ {
	case TypeProjectCreated:
		return &ProjectCreated{}
	case TypeProjectArchived:
		return &ProjectArchived{}
	case TypePlanCreated:
		return &PlanCreated{}
	case TypePlanClosed:
		return &PlanClosed{}
	case TypeTaskCreated:
		return &TaskCreated{}
	case TypeTaskUpdated:
		return &TaskUpdated{}
	case TypeTaskDepsChanged:
		return &TaskDepsChanged{}
	case TypeTaskStatusChanged:
		return &TaskStatusChanged{}
	case TypeTaskClaimed, TypeTaskLeaseRenewed:
		return &TaskClaimed{}
	case TypeTaskReleased:
		return &TaskReleased{}
	case TypeTaskContextMerged:
		return &TaskContextMerged{}
	case TypeStepAdded:
		return &StepAdded{}
	case TypeStepStatusChanged:
		return &StepStatusChanged{}
	case TypeNoteAdded:
		return &NoteAdded{}
	case TypeApprovalRequested:
		return &ApprovalRequested{}
	case TypeApprovalDecided:
		return &ApprovalDecided{}
	case TypeExecRecorded:
		return &ExecRecorded{}
	case TypeCheckpointCreated:
		return &CheckpointCreated{}
	case TypeRollbackApplied:
		return &RollbackApplied{}
	case TypeRollbackMarked:
		return &RollbackMarked{}
	}
	panic("unknown type " + typ)
}

// TestReplay_Golden pins the state a replay of the generated history
// folds to: the SHA-256 of each project's state as msgpack (by
// reflection, sorted keys). The fold before the hand-written codecs and
// merge (reflection decode, encoding/json merge) gave the former pins on
// the former, local copy of the workload; the fold that matched them
// gave these when the history moved to internal/workload.
//
// Fold version 5 derives the times and attempts of steps from the events
// that were there before (the history has no parents, due dates or
// structured results): with those derived fields cleared, the state is
// the one version 4 folded, pinned by the former pins; the new pins are
// the whole state.
func TestReplay_Golden(t *testing.T) {
	m := replay(t, genHistory(t, 3, 20000))
	sum := func(s *Scope) string {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.SetSortMapKeys(true)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(buf.Bytes()))
	}
	for project, want := range map[string][2]string{
		"proj000": {"ad92eb6151af503f949c622ba837b50b205cdf834f32c371e6557b68cfe9a95e", "7b76c0aefc6e307a9784adb8e51ab9a6782dfd82194f5ca5ea7cf66b48b9e111"},
		"proj001": {"853a54c2fbe688ded69bdd243dc6f19bfdbd5ce4e53a9e5c84832625d54384b7", "ea754cfe9cae70252e1098b0f54191fc8ea8f18a056f8ee8662b364c0d871401"},
		"proj002": {"1f92b9dca98c955a0bb79ceae138b81da671a55b831bc1178b1d3f2a3c27be54", "8f701e6788f6d89e6c94da6cd5b96376a75bd8580e28c5365a83ee3113445157"},
	} {
		if got := sum(m.Scope(project)); got != want[1] {
			t.Errorf("state of %s: SHA-256 %s, want %s", project, got, want[1])
		}
		old := m.Scope(project)
		for i, task := range old.Tasks {
			c := task.Clone()
			for j := range c.Steps {
				s := &c.Steps[j]
				if s.Attempt == 0 && s.StartedAt != 0 {
					t.Fatalf("%s %s: started at %d in attempt 0", project, s.ID, s.StartedAt)
				}
				s.StartedAt, s.CompletedAt, s.Attempt = 0, 0, 0
			}
			old.Tasks[i] = c
		}
		if got := sum(old); got != want[0] {
			t.Errorf("state of %s without step times: SHA-256 %s, want %s (fold version 4's)", project, got, want[0])
		}
	}
}

func TestKindOf(t *testing.T) {
	seen := map[int]string{}
	for _, k := range kindsByFrequency {
		if got := kindOf(k.typ); got != k.kind {
			t.Errorf("kindOf(%q) = %d, want %d", k.typ, got, k.kind)
		}
		if other, ok := seen[kindSlot(k.typ)]; ok {
			t.Errorf("%q and %q share a slot of the kind table", k.typ, other)
		}
		seen[kindSlot(k.typ)] = k.typ
	}
	for _, typ := range []string{"", "x", "task", "task.createe", "Task.created", "task.created.v2", "rollback.appliee"} {
		if got := kindOf(typ); got != kindUnknown {
			t.Errorf("kindOf(%q) = %d, want unknown", typ, got)
		}
	}
}

// BenchmarkAppendScope and BenchmarkDecodeScope measure the state codec
// (what a snapshot body holds) on the state of one project of a
// realistic history: about 10000 events' worth of entities.
func BenchmarkAppendScope(b *testing.B) {
	s := replay(b, genHistory(b, 10, 100_000)).Scope("proj000")
	buf := AppendScope(nil, s)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf = AppendScope(buf[:0], s)
	}
}

func BenchmarkDecodeScope(b *testing.B) {
	body := AppendScope(nil, replay(b, genHistory(b, 10, 100_000)).Scope("proj000"))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := DecodeScope(body); err != nil {
			b.Fatal(err)
		}
	}
}
