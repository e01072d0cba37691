package projection

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/vmihailenco/msgpack/v5"
)

// history builds a log of a realistic shape, as the engine writes it
// (the shape of flow's time-travel benchmark generator, ttGen): each
// project works through its tasks one at a time, task created (in the
// current plan, depending on up to two earlier tasks) -> doing -> three
// steps, each added, started, half done and completed -> six context
// merges -> two notes -> three exec records -> an approval requested and
// granted -> done: 28 events a task. A new plan every 40 tasks, a
// checkpoint every 5000 events of a project; projects take turns at
// random. Payloads are encoded as flow encodes them (msgpack, sorted map
// keys).
type history struct {
	tb       testing.TB
	rng      *rand.Rand
	records  []*eventlog.Record
	versions map[string]uint64
	clock    time.Time
	projects []*histProject
	stdout   Output
}

type histProject struct {
	name                     string
	tasks, plans, approvals  int
	execs, checkpoints, evts int
	todo                     []func()
}

// genHistory returns at least n records over projects projects.
func genHistory(tb testing.TB, projects, n int) []*eventlog.Record {
	out := "ok  \tgithub.com/example/app/parser\t0.412s\nok  \tgithub.com/example/app/render\t0.207s\n"
	sum := sha256.Sum256([]byte(out))
	h := &history{tb: tb, rng: rand.New(rand.NewPCG(1, 2)), versions: map[string]uint64{},
		clock:  time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		stdout: Output{Head: out, Bytes: int64(len(out)), SHA256: hex.EncodeToString(sum[:])}}
	for i := range projects {
		p := &histProject{name: fmt.Sprintf("proj%03d", i)}
		h.projects = append(h.projects, p)
		h.emit(ProjectStream(p.name), p.name, TypeProjectCreated, ProjectCreated{Name: p.name, Description: "benchmark project " + p.name})
	}
	for len(h.records) < n {
		p := h.projects[h.rng.IntN(len(h.projects))]
		if len(p.todo) == 0 {
			p.todo = h.taskLife(p)
		}
		op := p.todo[0]
		p.todo = p.todo[1:]
		op()
		if p.evts++; p.evts >= 5000 {
			p.evts = 0
			p.checkpoints++
			h.emit(ProjectStream(p.name), p.name, TypeCheckpointCreated, CheckpointCreated{
				ID: ShortID(PrefixCheckpoint, p.checkpoints), Label: "bench", AtSeq: uint64(len(h.records))})
		}
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

func (h *history) taskLife(p *histProject) []func() {
	var ops []func()
	if p.tasks%40 == 0 {
		p.plans++
		plan := ShortID(PrefixPlan, p.plans)
		ops = append(ops, func() {
			h.emit(PlanStream(p.name, plan), p.name, TypePlanCreated, PlanCreated{ID: plan, Title: "milestone " + plan, Description: "work planned for " + plan})
		})
	}
	p.tasks++
	n := p.tasks
	task, ts := ShortID(PrefixTask, n), TaskStream(p.name, ShortID(PrefixTask, n))
	in := TaskCreated{ID: task, Plan: ShortID(PrefixPlan, p.plans), Title: fmt.Sprintf("implement part %d of the feature", n),
		Description: "a description of the work, as an assistant would write it, a sentence or two long.",
		Owner:       "agent", Tags: []string{"bench", "feature"}, Priority: n % 4}
	for _, d := range []int{n - 1 - h.rng.IntN(20), n - 1 - h.rng.IntN(20)} {
		if d >= 1 {
			in.Deps = append(in.Deps, ShortID(PrefixTask, d))
		}
	}
	ops = append(ops,
		func() { h.emit(ts, p.name, TypeTaskCreated, in) },
		func() {
			h.emit(ts, p.name, TypeTaskStatusChanged, TaskStatusChanged{From: StatusTodo, To: StatusDoing})
		})
	for s := 1; s <= 3; s++ {
		step, half := StepID(task, s), 50
		ops = append(ops,
			func() {
				h.emit(ts, p.name, TypeStepAdded, StepAdded{ID: step, Title: fmt.Sprintf("step %d: edit, build and test", s)})
			},
			func() { h.emit(ts, p.name, TypeStepStatusChanged, StepStatusChanged{ID: step, To: StepInProgress}) },
			func() {
				h.emit(ts, p.name, TypeStepStatusChanged, StepStatusChanged{ID: step, To: StepInProgress, Progress: &half, Note: "halfway"})
			},
			func() {
				h.emit(ts, p.name, TypeStepStatusChanged, StepStatusChanged{ID: step, To: StepCompleted, Result: "done, tests pass"})
			})
	}
	for c := range 6 {
		ops = append(ops, func() { h.emit(ts, p.name, TypeTaskContextMerged, TaskContextMerged{Patch: histContextPatch(n, c)}) })
	}
	for range 2 {
		ops = append(ops, func() {
			h.emit(ts, p.name, TypeNoteAdded, NoteAdded{Task: task, Kind: "note",
				Text: "found that the parser needs a second pass for nested blocks; noted for the reviewer"})
		})
	}
	for x := range 3 {
		ops = append(ops, func() {
			p.execs++
			h.emit(ts, p.name, TypeExecRecorded, ExecRecorded{ID: ShortID(PrefixExec, p.execs), Task: task, Step: StepID(task, x+1),
				Command: "go test ./...", Cwd: "/src/app", Success: true, ElapsedMS: 1234.5, Stdout: h.stdout, AddedVars: []string{"result"}})
		})
	}
	var approval string
	ops = append(ops,
		func() {
			p.approvals++
			approval = ShortID(PrefixApproval, p.approvals)
			action := `{"cmd":"git push origin feature"}`
			sum := sha256.Sum256([]byte(action))
			h.emit(ts, p.name, TypeApprovalRequested, ApprovalRequested{ID: approval, Task: task, Message: "push the branch?",
				Action: action, ActionHash: hex.EncodeToString(sum[:])})
		},
		func() {
			h.emit(ts, p.name, TypeApprovalDecided, ApprovalDecided{ID: approval, Decision: ApprovalGranted, By: "agent", Comment: "ok"})
		},
		func() {
			h.emit(ts, p.name, TypeTaskStatusChanged, TaskStatusChanged{From: StatusDoing, To: StatusDone})
		})
	return ops
}

// histContextPatch is the c-th context merge of task n: a few keys that
// keep changing, and one that grows per merge.
func histContextPatch(n, c int) string {
	patch := map[string]any{
		"phase":               []string{"explore", "plan", "implement", "test", "review", "wrap-up"}[c],
		"files":               []string{fmt.Sprintf("parser/part%d.go", n), fmt.Sprintf("parser/part%d_test.go", n)},
		fmt.Sprintf("k%d", c): map[string]any{"decision": "use a table-driven parser", "merge": c},
	}
	b, err := json.Marshal(patch)
	if err != nil {
		panic(err)
	}
	return string(b)
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
// reflection, sorted keys) equals what the fold before the hand-written
// codecs and merge gave (reflection decode, encoding/json merge).
func TestReplay_Golden(t *testing.T) {
	m := replay(t, genHistory(t, 3, 20000))
	for project, want := range map[string]string{
		"proj000": "15bae05d10ab8235b81f221e640cacb0005154e993d9c01bc92c1621f02e0e11",
		"proj001": "82b2e2e890bdd18caf6d08e89b7783b95033923819378d2b3a2af1947f524cd2",
		"proj002": "954e52be8604b4d7949d8e24551f32cba1bb7985f843f611e752b437cd6fd5fe",
	} {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.SetSortMapKeys(true)
		if err := enc.Encode(m.Scope(project)); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(buf.Bytes())); got != want {
			t.Errorf("state of %s: SHA-256 %s, want %s", project, got, want)
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
