package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/capture"
	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/scopediff"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
	"github.com/vmihailenco/msgpack/v5"
	"pgregory.net/rapid"
)

// ttMachine drives random histories through the engine over two projects:
// tasks, status moves, deps, edits, claims, context merges, steps, notes,
// approvals, exec records, plans, archiving, checkpoints, and rollbacks
// (of the project or of one task) to random earlier seqs or checkpoints,
// with automatic snapshots every few events. Every refused command must
// append nothing and fail with a user-facing code, never internal or
// corrupt. Every rollback is checked as it happens (ttCheckRollback).
type ttMachine struct {
	e        *Engine
	every    int // Options.SnapshotEvery
	clock    time.Time
	created  map[string]uint64 // seq of each project's project.created
	warnings []string
}

var ttProjects = []string{"p", "q"}

func newTTMachine(t *testing.T, rt *rapid.T) *ttMachine {
	m := &ttMachine{
		every:   rapid.IntRange(2, 7).Draw(rt, "snapshotEvery"),
		clock:   time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		created: map[string]uint64{},
	}
	path := filepath.Join(t.TempDir(), DefaultDir, DefaultFile)
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: m.now,
		SnapshotEvery: m.every, Warn: func(msg string) { m.warnings = append(m.warnings, msg) }})
	if err != nil {
		rt.Fatal(err)
	}
	m.e = e
	for _, p := range ttProjects {
		if _, err := e.CreateProject(NewProject{Name: p, Description: "project " + p}); err != nil {
			rt.Fatal(err)
		}
		m.created[p] = m.head(rt)
		for range rapid.IntRange(0, 3).Draw(rt, "tasks") {
			if _, err := e.AddTask(NewTask{Project: p, Title: "first"}); err != nil {
				rt.Fatal(err)
			}
		}
	}
	return m
}

func (m *ttMachine) now() time.Time {
	m.clock = m.clock.Add(time.Minute)
	return m.clock
}

func (m *ttMachine) head(t *rapid.T) uint64 {
	seq, _, err := storeHead(m.e.log)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func (m *ttMachine) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"AddTask": m.AddTask, "AddTask2": m.AddTask, "Move": m.Move, "Dep": m.Dep, "Edit": m.Edit, "Claim": m.Claim,
		"Context": m.Context, "AddStep": m.AddStep, "MoveStep": m.MoveStep, "Note": m.Note,
		"Approval": m.Approval, "Decide": m.Decide, "Exec": m.Exec, "Plan": m.Plan,
		"Archive": m.Archive, "Checkpoint": m.Checkpoint, "Rollback": m.Rollback,
	}
}

// do runs one command and checks that a refusal left the log as it was.
func (m *ttMachine) do(t *rapid.T, run func() error) {
	before := m.head(t)
	if err := run(); err != nil {
		if c := ErrorCode(err); c == CodeInternal || c == CodeCorrupt {
			t.Fatalf("command failed with %s: %v", c, err)
		}
		if after := m.head(t); after != before {
			t.Fatalf("refused command (%v) moved the head from %d to %d", err, before, after)
		}
	}
}

func (m *ttMachine) project(t *rapid.T) string {
	return rapid.SampledFrom(ttProjects).Draw(t, "project")
}

func (m *ttMachine) counters(t *rapid.T, project string) projection.Counters {
	p, err := m.e.Project(project)
	if err != nil {
		t.Fatal(err)
	}
	return p.Counters
}

// id draws a short id among those used so far or, now and then (and
// always when none is), the next one, which does not exist yet.
func (m *ttMachine) id(t *rapid.T, prefix string, used int, label string) string {
	if used == 0 || rapid.IntRange(0, 9).Draw(t, label+"Unknown") == 0 {
		return projection.ShortID(prefix, used+1)
	}
	return projection.ShortID(prefix, rapid.IntRange(1, used).Draw(t, label))
}

func (m *ttMachine) taskID(t *rapid.T, project, label string) string {
	return m.id(t, projection.PrefixTask, m.counters(t, project).Tasks, label)
}

func (m *ttMachine) AddTask(t *rapid.T) {
	project := m.project(t)
	c := m.counters(t, project)
	var deps []string
	for _, d := range rapid.SliceOfN(rapid.IntRange(1, max(c.Tasks, 1)), 0, 2).Draw(t, "deps") {
		deps = append(deps, projection.ShortID(projection.PrefixTask, d))
	}
	plan := ""
	if c.Plans > 0 && rapid.Bool().Draw(t, "inPlan") {
		plan = m.id(t, projection.PrefixPlan, c.Plans-1, "plan")
	}
	m.do(t, func() error {
		_, err := m.e.AddTask(NewTask{Project: project, Title: "t", Deps: deps, Plan: plan, Due: m.due(t),
			Tags: rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b"}), 0, 2).Draw(t, "tags")})
		return err
	})
}

// due draws a due date: none, one already past (the task is overdue at
// every later check while it is open) or one far ahead.
func (m *ttMachine) due(t *rapid.T) projection.Time {
	switch rapid.IntRange(0, 2).Draw(t, "due") {
	case 1:
		return projection.TimeOf(m.clock.Add(-time.Hour))
	case 2:
		return projection.TimeOf(m.clock.Add(365 * 24 * time.Hour))
	}
	return 0
}

func (m *ttMachine) Move(t *rapid.T) {
	project := m.project(t)
	id := m.taskID(t, project, "task")
	to := rapid.SampledFrom([]string{"todo", "doing", "done", "blocked", "cancelled"}).Draw(t, "to")
	force := rapid.Bool().Draw(t, "force")
	m.do(t, func() error {
		_, err := m.e.MoveTask(Move{Project: project, ID: id, To: to, Force: force})
		return err
	})
}

func (m *ttMachine) Dep(t *rapid.T) {
	project := m.project(t)
	in := DepChange{Project: project, ID: m.taskID(t, project, "task"), Dep: m.taskID(t, project, "dep")}
	add := rapid.Bool().Draw(t, "add")
	m.do(t, func() error {
		var err error
		if add {
			_, err = m.e.AddDep(in)
		} else {
			_, err = m.e.RemoveDep(in)
		}
		return err
	})
}

func (m *ttMachine) Edit(t *rapid.T) {
	project := m.project(t)
	id := m.taskID(t, project, "task")
	title := rapid.SampledFrom([]string{"t", "renamed"}).Draw(t, "title")
	owner := rapid.SampledFrom([]string{"", "ann"}).Draw(t, "owner")
	due := m.due(t)
	m.do(t, func() error {
		_, err := m.e.EditTask(TaskEdit{Project: project, ID: id, Title: &title, Owner: &owner, Due: &due})
		return err
	})
}

func (m *ttMachine) Claim(t *rapid.T) {
	project := m.project(t)
	in := Claim{Project: project, ID: m.taskID(t, project, "task"), Lease: time.Duration(rapid.IntRange(1, 5).Draw(t, "minutes")) * time.Minute}
	release := rapid.Bool().Draw(t, "release")
	m.do(t, func() error {
		var err error
		if release {
			_, err = m.e.ReleaseTask(in)
		} else {
			_, err = m.e.ClaimTask(in)
		}
		return err
	})
}

var ttPatches = []string{`{"a":1}`, `{"a":null}`, `{"b":{"c":[1,2]}}`, `{"b":{"c":null,"d":true}}`, `{"e":"x"}`}

func (m *ttMachine) Context(t *rapid.T) {
	project := m.project(t)
	in := ContextPatch{Project: project, ID: m.taskID(t, project, "task"),
		Patch: rapid.SampledFrom(ttPatches).Draw(t, "patch"), Replace: rapid.IntRange(0, 4).Draw(t, "replace") == 0}
	m.do(t, func() error {
		_, err := m.e.MergeContext(in)
		return err
	})
}

func (m *ttMachine) AddStep(t *rapid.T) {
	project := m.project(t)
	task := m.taskID(t, project, "task")
	m.do(t, func() error {
		_, err := m.e.AddStep(NewStep{Project: project, Task: task, Title: "s"})
		return err
	})
}

func (m *ttMachine) MoveStep(t *rapid.T) {
	project := m.project(t)
	step := projection.StepID(m.taskID(t, project, "task"), rapid.IntRange(1, 3).Draw(t, "step"))
	to := rapid.SampledFrom([]string{"in_progress", "completed", "failed", "skipped"}).Draw(t, "to")
	var progress *int
	if rapid.Bool().Draw(t, "withProgress") {
		p := rapid.IntRange(0, 100).Draw(t, "progress")
		progress = &p
	}
	m.do(t, func() error {
		_, err := m.e.MoveStep(StepMove{Project: project, ID: step, To: to, Progress: progress, Note: "n"})
		return err
	})
}

func (m *ttMachine) Note(t *rapid.T) {
	project := m.project(t)
	task := ""
	if rapid.Bool().Draw(t, "onTask") {
		task = m.taskID(t, project, "task")
	}
	kind := rapid.SampledFrom([]string{NoteKindNote, NoteKindMemory}).Draw(t, "kind")
	m.do(t, func() error {
		_, err := m.e.AddNote(NewNote{Project: project, Task: task, Kind: kind, Text: "note"})
		return err
	})
}

func (m *ttMachine) Approval(t *rapid.T) {
	project := m.project(t)
	in := NewApproval{Project: project, Message: "ok?",
		Action: rapid.SampledFrom([]string{"", `{"cmd":"deploy"}`}).Draw(t, "action"),
		TTL:    time.Duration(rapid.IntRange(0, 3).Draw(t, "ttlMinutes")) * time.Minute}
	if rapid.Bool().Draw(t, "onTask") {
		in.Task = m.taskID(t, project, "task")
	}
	m.do(t, func() error {
		_, err := m.e.RequestApproval(in)
		return err
	})
}

func (m *ttMachine) Decide(t *rapid.T) {
	project := m.project(t)
	in := Decision{Project: project, ID: m.id(t, projection.PrefixApproval, m.counters(t, project).Approvals, "approval"),
		Grant: rapid.Bool().Draw(t, "grant")}
	m.do(t, func() error {
		_, err := m.e.As("reviewer", "r1").DecideApproval(in)
		return err
	})
}

func (m *ttMachine) Exec(t *rapid.T) {
	project := m.project(t)
	code := rapid.SampledFrom([]int{0, 0, 1}).Draw(t, "exitCode")
	in := NewExec{Project: project, Command: "make test", ExitCode: code, Success: code == 0,
		ElapsedMS: 12.5, Stdout: capture.String("ok\n"), AddedVars: []string{"x"}}
	if rapid.IntRange(0, 3).Draw(t, "onTask") > 0 {
		in.Task = m.taskID(t, project, "task")
	}
	m.do(t, func() error {
		_, err := m.e.RecordExec(in)
		return err
	})
}

func (m *ttMachine) Plan(t *rapid.T) {
	project := m.project(t)
	closeOne := rapid.Bool().Draw(t, "close")
	id := m.id(t, projection.PrefixPlan, m.counters(t, project).Plans, "plan")
	m.do(t, func() error {
		var err error
		if closeOne {
			_, err = m.e.ClosePlan(ClosePlan{Project: project, ID: id})
		} else {
			_, err = m.e.AddPlan(NewPlan{Project: project, Title: "plan"})
		}
		return err
	})
}

// Archive archives a project, rarely: it refuses most later commands
// until a rollback brings the project back.
func (m *ttMachine) Archive(t *rapid.T) {
	project := m.project(t)
	if rapid.IntRange(0, 4).Draw(t, "archive") != 0 {
		return
	}
	m.do(t, func() error {
		_, err := m.e.ArchiveProject(ArchiveProject{Name: project})
		return err
	})
}

func (m *ttMachine) Checkpoint(t *rapid.T) {
	project := m.project(t)
	in := NewCheckpoint{Project: project, Label: rapid.SampledFrom([]string{"", "before"}).Draw(t, "label")}
	if rapid.IntRange(0, 3).Draw(t, "onTask") == 0 {
		in.Task = m.taskID(t, project, "task")
	}
	m.do(t, func() error {
		_, err := m.e.CreateCheckpoint(in)
		return err
	})
}

// Rollback rolls a project, or one of its tasks, back to a random seq
// since the project was created or to one of its checkpoints, checks the
// result, and sometimes rolls the rollback itself back.
func (m *ttMachine) Rollback(t *rapid.T) {
	project := m.project(t)
	in := RollbackInput{Project: project, Reason: "property"}
	from := m.created[project]
	if rapid.Bool().Draw(t, "oneTask") {
		in.Task = m.taskID(t, project, "task")
		if rapid.IntRange(0, 3).Draw(t, "sinceTask") > 0 {
			from = max(from, m.firstSeq(t, projection.TaskStream(project, in.Task)))
		}
	}
	if c := m.counters(t, project).Checkpoints; c > 0 && rapid.Bool().Draw(t, "toCheckpoint") {
		in.To = Point{Checkpoint: projection.ShortID(projection.PrefixCheckpoint, rapid.IntRange(1, c).Draw(t, "checkpoint"))}
	} else {
		in.To = Point{Seq: rapid.Uint64Range(from, m.head(t)).Draw(t, "to")}
	}
	before := m.scopeNow(t, project)
	r := m.rollback(t, in, false)
	if r == nil || !rapid.Bool().Draw(t, "undo") {
		return
	}
	// Undo it: roll back to the seq just before it. A task rollback that
	// brought back a task an earlier rollback had removed cannot be undone
	// for the task alone (the task did not exist there: refused, "cancel
	// it instead"); the project's rollback undoes it.
	in.To, in.Reason = Point{Seq: r.Seq - 1}, "undo"
	if in.Task != "" && len(ttTaskPart(before, in.Task).Tasks) == 0 {
		in.Task = ""
	}
	m.rollback(t, in, true)
	if after := m.scopeNow(t, project); !bytes.Equal(ttEncode(t, ttNormalize(t, after)), ttEncode(t, ttNormalize(t, before))) {
		t.Fatalf("rolling back the rollback at seq %d did not restore the state before it: %s", r.Seq, ttJSON(t, scopediff.Of(before, after)))
	}
}

// firstSeq returns the seq of a stream's first event (0 when it has none).
func (m *ttMachine) firstSeq(t *rapid.T, stream string) uint64 {
	var seq uint64
	err := m.e.view(func(tx store.Tx) error {
		return tx.ReadStream(stream, 1, func(r *eventlog.Record) error {
			seq = r.Seq
			return eventlog.ErrStop
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// rollback runs in dry, then for real, checks what it did, and returns
// its rollback.applied record (nil when it was refused or had nothing to
// do). With mustApply, a refusal fails the test.
func (m *ttMachine) rollback(t *rapid.T, in RollbackInput, mustApply bool) *eventlog.Record {
	head := m.head(t)
	before := m.scopeNow(t, in.Project)
	dryIn := in
	dryIn.DryRun = true
	dry, err := m.e.Rollback(dryIn)
	if m.head(t) != head {
		t.Fatalf("a dry-run rollback moved the head from %d", head)
	}
	if err != nil {
		if mustApply || !errors.Is(err, eventlog.ErrConflict) && !errors.Is(err, ErrNotFound) {
			t.Fatalf("rollback %+v refused: %v", in, err)
		}
		m.do(t, func() error {
			_, err := m.e.Rollback(in)
			if err == nil {
				t.Fatalf("rollback %+v applied after its dry run was refused", in)
			}
			return err
		})
		return nil
	}
	res, err := m.e.Rollback(in)
	if err != nil {
		t.Fatalf("rollback %+v failed after its dry run succeeded: %v", in, err)
	}
	if dj, rj := ttJSON(t, dry.Changes), ttJSON(t, res.Changes); !bytes.Equal(dj, rj) || dry.ToSeq != res.ToSeq {
		t.Fatalf("dry run said %s at %d, the rollback %s at %d", dj, dry.ToSeq, rj, res.ToSeq)
	}
	if !res.Applied {
		if after := m.scopeNow(t, in.Project); m.head(t) != head || !bytes.Equal(ttEncode(t, before), ttEncode(t, after)) {
			t.Fatalf("a rollback that applied nothing changed the file")
		}
		return nil
	}
	var r *eventlog.Record
	if err := m.e.view(func(tx store.Tx) error { r, err = tx.Record(res.Seq); return err }); err != nil || r == nil {
		t.Fatalf("rollback record %d: %v", res.Seq, err)
	}
	target := ttReplayScope(t, m.e, in.Project, res.ToSeq)
	after := m.scopeNow(t, in.Project)
	ttCheckRollback(t, before, target, after, r, in.Task, m.marks(t, r))
	m.checkVersions(t, after)
	return r
}

// marks returns the events appended after the rollback.applied event r,
// by stream: each must be a rollback.marked event of r on a stream of r's
// project, one per stream.
func (m *ttMachine) marks(t *rapid.T, r *eventlog.Record) map[string]*eventlog.Record {
	out := map[string]*eventlog.Record{}
	head := m.head(t)
	err := m.e.view(func(tx store.Tx) error {
		for seq := r.Seq + 1; seq <= head; seq++ {
			mark, err := tx.Record(seq)
			if err != nil {
				return err
			}
			var p projection.RollbackMarked
			if err := msgpack.Unmarshal(mark.Data, &p); err != nil {
				return err
			}
			if mark.Type != projection.TypeRollbackMarked || mark.Project != r.Project || p.Rollback != r.Seq || out[mark.Stream] != nil {
				t.Fatalf("seq %d after the rollback at seq %d is %s on %s (%+v), not its one mark of that stream", mark.Seq, r.Seq, mark.Type, mark.Stream, p)
			}
			out[mark.Stream] = mark
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkVersions checks that the project and every plan and task record
// their stream's head version: the --if-version a caller gives to change
// them, which `task show` prints. (It caught a rollback that brought back
// a task an earlier rollback had removed with its version at the target,
// which --if-version could then never match.)
func (m *ttMachine) checkVersions(t *rapid.T, s *projection.Scope) {
	streams := map[string]uint64{projection.ProjectStream(s.Project.Name): s.Project.Version}
	for _, p := range s.Plans {
		streams[projection.PlanStream(p.Project, p.ID)] = p.Version
	}
	for _, task := range s.Tasks {
		streams[projection.TaskStream(task.Project, task.ID)] = task.Version
	}
	heads := map[string]uint64{}
	err := m.e.view(func(tx store.Tx) error {
		for stream := range streams {
			heads[stream], _ = tx.StreamVersion(stream)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for stream, got := range streams {
		if got != heads[stream] {
			t.Fatalf("%s: the projection says version %d, the stream is at %d", stream, got, heads[stream])
		}
	}
}

func (m *ttMachine) scopeNow(t *rapid.T, project string) *projection.Scope {
	var s *projection.Scope
	err := m.e.read(func(src source) error {
		var err error
		s, err = snapstore.ScopeOf(src, project)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ttCheckRollback checks the state after a rollback against the state at
// its target and the state before it.
//
// What must equal the target's state (the headline property, compared
// through ttNormalize): every plan, task, approval and exec record of the
// scope — the same set of ids, and every field: title, status, deps,
// tags, claim, steps, context and its version, pending approvals, the
// notes and execs counts of tasks, decisions, exec results, created_at
// and created_by — and the project's description and archived flag.
//
// What a rollback legitimately keeps, and so ttNormalize ignores (checked
// exactly by ttExpectedAfter instead):
//   - each entity's stream position: Meta.Version (streams never go
//     back, and --if-version must keep working), Meta.Seq and
//     Meta.UpdatedAt (the rollback is the entity's last change);
//   - the project's Counters (ids are never reused) and Events (the
//     rollback is one more event of the project);
//   - checkpoints: they are points of the history, which is kept.
//
// For a task rollback the scope is that task with its approvals and exec
// records; every other entity must be byte-identical to before.
func ttCheckRollback(t *rapid.T, before, target, after *projection.Scope, r *eventlog.Record, task string, marks map[string]*eventlog.Record) {
	got, want := after, target
	if task != "" {
		got, want = ttTaskPart(after, task), ttTaskPart(target, task)
		if a, b := ttEncode(t, ttNormalize(t, ttOtherPart(after, task))), ttEncode(t, ttNormalize(t, ttOtherPart(before, task))); !bytes.Equal(a, b) {
			t.Fatalf("task rollback of %s at seq %d changed other entities: %s", task, r.Seq, ttJSON(t, scopediff.Of(ttOtherPart(before, task), ttOtherPart(after, task))))
		}
	}
	if a, b := ttEncode(t, ttNormalize(t, got)), ttEncode(t, ttNormalize(t, want)); !bytes.Equal(a, b) {
		t.Fatalf("after the rollback at seq %d the state differs from the target's: %s", r.Seq, ttJSON(t, scopediff.Of(want, got)))
	}
	exp := ttExpectedAfter(t, before, target, after, r, task)
	if task == "" {
		ttMarked(t, before, target, exp, r, marks)
	} else if len(marks) > 0 {
		t.Fatalf("the rollback of task %s at seq %d marked %d streams", task, r.Seq, len(marks))
	}
	if a, b := ttEncode(t, after), ttEncode(t, exp); !bytes.Equal(a, b) {
		t.Fatalf("after the rollback at seq %d:\n got %s\nwant %s", r.Seq, ttJSON(t, after), ttJSON(t, exp))
	}
}

// ttNormalize returns a copy of s without what a rollback keeps from the
// present (see ttCheckRollback).
func ttNormalize(t *rapid.T, s *projection.Scope) *projection.Scope {
	c := ttClone(t, s)
	if c.Project != nil {
		c.Project.Counters, c.Project.Events = projection.Counters{}, 0
		ttForgetPosition(&c.Project.Meta)
	}
	for _, v := range c.Plans {
		ttForgetPosition(&v.Meta)
	}
	for _, v := range c.Tasks {
		ttForgetPosition(&v.Meta)
	}
	for _, v := range c.Approvals {
		ttForgetPosition(&v.Meta)
	}
	for _, v := range c.Execs {
		ttForgetPosition(&v.Meta)
	}
	c.Checkpoints = []*projection.Checkpoint{}
	return c
}

func ttForgetPosition(m *projection.Meta) { m.Version, m.Seq, m.UpdatedAt = 0, 0, 0 }

// ttExpectedAfter is the exact state a rollback recorded by r must leave.
// A whole-project rollback: the target's entities; the project keeps its
// counters, counts r, and r (on its stream) is its last change;
// checkpoints are those of before. A task rollback: before, with the task
// and its approvals and exec records as at the target, the task's stream
// position that of r (on its stream), and the project counting r.
// Restored entities whose content differed from before take r as their
// last change and keep their stream version from before; the others are
// exactly as they were before. The version of an entity brought back
// (gone before) is taken from after: checkVersions checks it. A
// whole-project rollback's marks on the streams of the plans and tasks
// it changed come after, in ttMarked.
func ttExpectedAfter(t *rapid.T, before, target, after *projection.Scope, r *eventlog.Record, task string) *projection.Scope {
	touch := func(m *projection.Meta) { m.Seq, m.UpdatedAt = r.Seq, projection.TimeOf(r.Time) }
	before = ttClone(t, before)
	if task == "" {
		exp := ttClone(t, target)
		exp.Project.Counters, exp.Project.Events = before.Project.Counters, before.Project.Events+1
		exp.Project.Version = r.Version
		touch(&exp.Project.Meta)
		exp.Plans = ttRestored(t, exp.Plans, before.Plans, after.Plans, touch)
		exp.Tasks = ttRestored(t, exp.Tasks, before.Tasks, after.Tasks, touch)
		exp.Approvals = ttRestored(t, exp.Approvals, before.Approvals, after.Approvals, touch)
		exp.Execs = ttRestored(t, exp.Execs, before.Execs, after.Execs, touch)
		exp.Checkpoints = before.Checkpoints
		return exp
	}
	want, exp := ttClone(t, ttTaskPart(target, task)), ttClone(t, ttOtherPart(before, task))
	exp.Project.Events++
	want.Tasks[0].Version = r.Version
	touch(&want.Tasks[0].Meta)
	want.Approvals = ttRestored(t, want.Approvals, before.Approvals, after.Approvals, touch)
	want.Execs = ttRestored(t, want.Execs, before.Execs, after.Execs, touch)
	exp.Tasks = ttSortByID(append(exp.Tasks, want.Tasks...))
	exp.Approvals = ttSortByID(append(exp.Approvals, want.Approvals...))
	exp.Execs = ttSortByID(append(exp.Execs, want.Execs...))
	return exp
}

// ttMarked checks that a rollback of the whole project marked exactly the
// streams of the plans and tasks it changed (their content, presence, or
// the content or presence of a task's approvals and exec records), and
// records each mark on its entity in exp: the mark is its last change,
// and its version that of the mark.
func ttMarked(t *rapid.T, before, target, exp *projection.Scope, r *eventlog.Record, marks map[string]*eventlog.Record) {
	want := map[string]bool{}
	changed := func(stream string, a, b []byte) {
		if !bytes.Equal(a, b) {
			want[stream] = true
		}
	}
	p := r.Project
	ttEachPair(t, before.Plans, target.Plans, func(id string, a, b []byte) { changed(projection.PlanStream(p, id), a, b) })
	ttEachPair(t, before.Tasks, target.Tasks, func(id string, a, b []byte) { changed(projection.TaskStream(p, id), a, b) })
	taskOf := map[string]string{}
	for _, s := range []*projection.Scope{before, target} {
		for _, v := range s.Approvals {
			taskOf["a"+v.ID] = v.Task
		}
		for _, v := range s.Execs {
			taskOf["x"+v.ID] = v.Task
		}
	}
	ttEachPair(t, before.Approvals, target.Approvals, func(id string, a, b []byte) {
		if task := taskOf["a"+id]; task != "" {
			changed(projection.TaskStream(p, task), a, b)
		}
	})
	ttEachPair(t, before.Execs, target.Execs, func(id string, a, b []byte) {
		if task := taskOf["x"+id]; task != "" {
			changed(projection.TaskStream(p, task), a, b)
		}
	})
	if len(want) != len(marks) {
		t.Fatalf("the rollback at seq %d marked %d streams, want %d: %v", r.Seq, len(marks), len(want), want)
	}
	for stream := range want {
		if marks[stream] == nil {
			t.Fatalf("the rollback at seq %d did not mark %s", r.Seq, stream)
		}
	}
	touch := func(stream string, m *projection.Meta) {
		if mark := marks[stream]; mark != nil {
			m.Version, m.Seq, m.UpdatedAt = mark.Version, mark.Seq, max(m.UpdatedAt, projection.TimeOf(mark.Time))
		}
	}
	for _, v := range exp.Plans {
		touch(projection.PlanStream(p, v.ID), &v.Meta)
	}
	for _, v := range exp.Tasks {
		touch(projection.TaskStream(p, v.ID), &v.Meta)
	}
	exp.Project.Events += uint64(len(marks))
}

// ttEachPair calls fn with the content (all but Version, Seq and
// UpdatedAt; nil when absent) of each id of a and b in either.
func ttEachPair[T ttEntity](t *rapid.T, a, b []T, fn func(id string, x, y []byte)) {
	content := func(items []T) map[string][]byte {
		out := map[string][]byte{}
		for _, v := range items {
			m := v.EntityMeta()
			saved := *m
			ttForgetPosition(m)
			out[v.EntityID()] = ttMarshal(t, v)
			*m = saved
		}
		return out
	}
	ca, cb := content(a), content(b)
	for id, x := range ca {
		fn(id, x, cb[id])
	}
	for id, y := range cb {
		if _, ok := ca[id]; !ok {
			fn(id, nil, y)
		}
	}
}

// ttEntity is what ttRestored needs of a projected entity.
type ttEntity interface {
	EntityID() string
	EntityMeta() *projection.Meta
}

// ttRestored applies to the target's entities what restoring them does:
// one whose content (all but Version, Seq and UpdatedAt) equals its
// state before is left exactly as it was; another takes the rollback as
// its last change, and keeps its version from before (from after when it
// was gone before).
func ttRestored[T ttEntity](t *rapid.T, items, before, after []T, touch func(*projection.Meta)) []T {
	content := func(v T) []byte {
		m := v.EntityMeta()
		saved := *m
		ttForgetPosition(m)
		defer func() { *m = saved }()
		return ttMarshal(t, v)
	}
	was, now := ttByID(before), ttByID(after)
	for i, v := range items {
		cur, existed := was[v.EntityID()]
		if existed && bytes.Equal(content(cur), content(v)) {
			items[i] = cur
			continue
		}
		if existed {
			v.EntityMeta().Version = cur.EntityMeta().Version
		} else if back, ok := now[v.EntityID()]; ok {
			v.EntityMeta().Version = back.EntityMeta().Version
		}
		touch(v.EntityMeta())
	}
	return items
}

func ttByID[T ttEntity](items []T) map[string]T {
	out := map[string]T{}
	for _, v := range items {
		out[v.EntityID()] = v
	}
	return out
}

func ttSortByID[T ttEntity](items []T) []T {
	slices.SortFunc(items, func(a, b T) int { return projection.CompareIDs(a.EntityID(), b.EntityID()) })
	return items
}

// ttTaskPart is the part of s a rollback of task covers: the task, its
// approvals and its exec records.
func ttTaskPart(s *projection.Scope, task string) *projection.Scope {
	return &projection.Scope{
		Plans:       []*projection.Plan{},
		Tasks:       filter(s.Tasks, func(v *projection.Task) bool { return v.ID == task }),
		Approvals:   filter(s.Approvals, func(v *projection.Approval) bool { return v.Task == task }),
		Execs:       filter(s.Execs, func(v *projection.Exec) bool { return v.Task == task }),
		Checkpoints: []*projection.Checkpoint{},
	}
}

// ttOtherPart is s without ttTaskPart.
func ttOtherPart(s *projection.Scope, task string) *projection.Scope {
	return &projection.Scope{
		Project:     s.Project,
		Plans:       s.Plans,
		Tasks:       filter(s.Tasks, func(v *projection.Task) bool { return v.ID != task }),
		Approvals:   filter(s.Approvals, func(v *projection.Approval) bool { return v.Task != task }),
		Execs:       filter(s.Execs, func(v *projection.Exec) bool { return v.Task != task }),
		Checkpoints: s.Checkpoints,
	}
}

// ttReplayScope folds the log's events 1..seq into a fresh memory, without
// any snapshot, and returns project's state there.
func ttReplayScope(t ttTB, e *Engine, project string, seq uint64) *projection.Scope {
	mem := projection.NewMemory()
	err := e.view(func(tx store.Tx) error {
		if seq == 0 {
			return nil
		}
		return tx.ReadRange(1, seq, func(r *eventlog.Record) error { return ttApply(mem, r) })
	})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	return mem.Scope(project)
}

func ttApply(mem *projection.Memory, r *eventlog.Record) error {
	if err := projection.Apply(mem, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
		return err
	}
	return nil
}

// tb is what these helpers need of *testing.T and *rapid.T.
type ttTB interface {
	Fatalf(format string, args ...any)
}

func ttEncode(t ttTB, s *projection.Scope) []byte {
	b, err := snapshot.EncodeState(s)
	if err != nil {
		t.Fatalf("EncodeState: %v", err)
	}
	return b
}

func ttClone(t ttTB, s *projection.Scope) *projection.Scope {
	var c projection.Scope
	if err := msgpack.Unmarshal(ttEncode(t, s), &c); err != nil {
		t.Fatalf("decoding a scope: %v", err)
	}
	return snapstore.Normalize(&c)
}

func ttMarshal(t ttTB, v any) []byte {
	b, err := marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

func ttJSON(t ttTB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	return b
}

// checkEverySeq checks that, for each project and at every seq from 0 to
// the head, the state a point-in-time view answers from (nearest snapshot
// plus the events after it) encodes byte for byte like a full replay of
// events 1..seq without snapshots; and that each checkpoint reads as the
// state at its seq.
func (m *ttMachine) checkEverySeq(t *rapid.T) {
	head := m.head(t)
	want := map[string][][]byte{}       // project -> seq -> encoded state
	wantStatus := map[string][]string{} // project -> seq -> status JSON (or error) of the whole state
	mem := projection.NewMemory()
	now := m.clock
	err := m.e.view(func(tx store.Tx) error {
		for s := uint64(0); s <= head; s++ {
			if s > 0 {
				r, err := tx.Record(s)
				if err != nil {
					return err
				}
				if err := ttApply(mem, r); err != nil {
					return err
				}
			}
			for _, p := range ttProjects {
				b, err := snapshot.EncodeState(mem.Scope(p))
				if err != nil {
					return err
				}
				want[p] = append(want[p], b)
				wantStatus[p] = append(wantStatus[p], ttStatusJSON(statusOf(projstore.Mem{Memory: mem}, p, "tester", s, now)))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ttProjects {
		for s := uint64(0); s <= head; s++ {
			if got := m.stateVia(t, p, Point{Seq: s}); !bytes.Equal(got, want[p][s]) {
				t.Fatalf("project %s at seq %d (snapshots every %d): the snapshot path differs from a full replay", p, s, m.every)
			}
			var got string
			err := m.e.At(p, Point{Seq: s}).readHead(func(src source, at uint64) error {
				got = ttStatusJSON(statusOf(src, p, "tester", at, now))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != wantStatus[p][s] {
				t.Fatalf("project %s at seq %d (snapshots every %d): status %s, the whole state's %s", p, s, m.every, got, wantStatus[p][s])
			}
		}
		cps, err := m.e.Checkpoints(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cps {
			if got := m.stateVia(t, p, Point{Checkpoint: c.ID}); !bytes.Equal(got, want[p][c.AtSeq]) {
				t.Fatalf("project %s at %s (seq %d) differs from a full replay", p, c.ID, c.AtSeq)
			}
		}
	}
	m.checkScopes(t, want)
}

// checkScopes checks Engine.Scopes at random pairs of seqs: each state
// encodes like a full replay to its seq, read after both were built (a
// state folded on from another, or resolved on through deltas, shares
// its unchanged entities and must not have changed the other's); and the
// comparison of the two is the comparison of two replays.
func (m *ttMachine) checkScopes(t *rapid.T, want map[string][][]byte) {
	head := m.head(t)
	for _, p := range ttProjects {
		for range 6 {
			a := rapid.Uint64Range(0, head).Draw(t, "a")
			b := rapid.Uint64Range(0, head).Draw(t, "b")
			got, err := m.e.Scopes(p, Point{Seq: a}, Point{Seq: b})
			if err != nil {
				t.Fatalf("Scopes(%s, %d, %d): %v", p, a, b, err)
			}
			for i, seq := range []uint64{a, b} {
				if got[i].Seq != seq || !bytes.Equal(ttEncode(t, got[i].Scope), want[p][seq]) {
					t.Fatalf("Scopes(%s, %d, %d): the state at %d differs from a full replay", p, a, b, seq)
				}
			}
			anyOrder, err := m.e.ScopesUnordered(p, Point{Seq: a}, Point{Seq: b})
			if err != nil {
				t.Fatalf("ScopesUnordered(%s, %d, %d): %v", p, a, b, err)
			}
			for i, seq := range []uint64{a, b} {
				sorted := projection.NewMemory()
				sorted.Load(anyOrder[i].Scope)
				if anyOrder[i].Seq != seq || !bytes.Equal(ttEncode(t, sorted.Scope(p)), want[p][seq]) {
					t.Fatalf("ScopesUnordered(%s, %d, %d): the state at %d, sorted, differs from a full replay", p, a, b, seq)
				}
			}
			diff := scopediff.Of(got[0].Scope, got[1].Scope)
			old := scopediff.Of(ttReplayScope(t, m.e, p, a), ttReplayScope(t, m.e, p, b))
			if !bytes.Equal(ttJSON(t, diff), ttJSON(t, old)) {
				t.Fatalf("%s from %d to %d: %s, two replays give %s", p, a, b, ttJSON(t, diff), ttJSON(t, old))
			}
			ds, err := m.e.DiffScopes(p, Point{Seq: a}, Point{Seq: b})
			if err != nil {
				t.Fatalf("DiffScopes(%s, %d, %d): %v", p, a, b, err)
			}
			if ds[0].Seq != a || ds[1].Seq != b {
				t.Fatalf("DiffScopes(%s, %d, %d) at %d, %d", p, a, b, ds[0].Seq, ds[1].Seq)
			}
			if d := scopediff.Of(ds[0].Scope, ds[1].Scope); !bytes.Equal(ttJSON(t, d), ttJSON(t, old)) {
				t.Fatalf("%s from %d to %d by DiffScopes: %s, two replays give %s", p, a, b, ttJSON(t, d), ttJSON(t, old))
			}
			m.checkDiff(t, p, a, b)
		}
	}
}

// checkDiff checks that the diff of project from a to b (DiffChanges,
// all of it and a page; history.Between folds the events between the
// points when they are not both from snapshots) lists what comparing
// two replays lists.
func (m *ttMachine) checkDiff(t *rapid.T, project string, a, b uint64) {
	// folded between the points however many events are between them,
	// or by Between's own measure (small histories: mostly from snapshots)
	defer history.SetFoldAny(history.SetFoldAny(rapid.Bool().Draw(t, "foldAny")))
	want, total := DiffPage(ttReplayScope(t, m.e, project, a), ttReplayScope(t, m.e, project, b), 0, 0)
	_, _, got, n, err := m.e.DiffChanges(project, Point{Seq: a}, Point{Seq: b}, 0, 0)
	if err != nil {
		t.Fatalf("DiffChanges(%s, %d, %d): %v", project, a, b, err)
	}
	if n != total || !bytes.Equal(ttJSON(t, got), ttJSON(t, want)) {
		t.Fatalf("diff of %s from %d to %d: %d changes %s, two replays give %d: %s", project, a, b, n, ttJSON(t, got), total, ttJSON(t, want))
	}
	offset := rapid.IntRange(0, len(want)).Draw(t, "offset")
	limit := rapid.IntRange(1, 3).Draw(t, "limit")
	_, _, page, n, err := m.e.DiffChanges(project, Point{Seq: a}, Point{Seq: b}, offset, limit)
	if err != nil {
		t.Fatalf("DiffChanges(%s, %d, %d, %d, %d): %v", project, a, b, offset, limit, err)
	}
	if wantPage := want[offset:min(offset+limit, len(want))]; n != total || !bytes.Equal(ttJSON(t, page), ttJSON(t, wantPage)) {
		t.Fatalf("diff of %s from %d to %d, page %d+%d: %d changes %s, two replays give %d: %s", project, a, b, offset, limit, n, ttJSON(t, page), total, ttJSON(t, wantPage))
	}
	var x, y *projection.Scope
	err = m.e.view(func(tx store.Tx) error {
		x, y, err = history.Between(tx, project, min(a, b), max(a, b), m.e.warn)
		return err
	})
	switch {
	case errors.Is(err, history.ErrNotBetween):
	case err != nil:
		t.Fatalf("Between(%s, %d, %d): %v", project, a, b, err)
	case a > b:
		x, y = y, x
		fallthrough
	default:
		if got, _ := DiffPage(x, y, 0, 0); !bytes.Equal(ttJSON(t, got), ttJSON(t, want)) {
			t.Fatalf("Between(%s, %d, %d): %s, two replays give %s", project, a, b, ttJSON(t, got), ttJSON(t, want))
		}
	}
}

// stateVia reads project's whole state through a point-in-time view.
func (m *ttMachine) stateVia(t *rapid.T, project string, p Point) []byte {
	var s *projection.Scope
	err := m.e.At(project, p).read(func(src source) error {
		var err error
		s, err = snapstore.ScopeOf(src, project)
		return err
	})
	if err != nil {
		t.Fatalf("state of %s at %s: %v", project, p, err)
	}
	return ttEncode(t, s)
}

// ttSnapshots counts the stored snapshots of project.
func ttSnapshots(t ttTB, e *Engine, project string) int {
	n := 0
	err := e.view(func(tx store.Tx) error {
		return tx.Scan(snapstore.Bucket, snapstore.Prefix(project), func(k, v []byte) error { n++; return nil })
	})
	if err != nil {
		t.Fatalf("scanning snapshots: %v", err)
	}
	return n
}

func (m *ttMachine) finish(t *rapid.T) {
	if _, err := m.e.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if _, err := m.e.VerifySnapshots(""); err != nil {
		t.Fatalf("VerifySnapshots: %v", err)
	}
	for _, p := range ttProjects {
		proj, err := m.e.Project(p)
		if err != nil {
			t.Fatal(err)
		}
		if proj.Events >= uint64(m.every) && ttSnapshots(t, m.e, p) == 0 {
			t.Fatalf("project %s has %d events and no snapshot (every %d)", p, proj.Events, m.every)
		}
	}
	if len(m.warnings) > 0 {
		t.Fatalf("warnings: %s", strings.Join(m.warnings, "; "))
	}
}

func TestProperty_SnapshotPlusTailEqualsReplayAtEverySeq(t *testing.T) {
	// Scopes resolves a later state through deltas whenever a snapshot
	// lies past the earlier one, not only 10,000 seqs past.
	defer snapstore.SetJumpGap(snapstore.SetJumpGap(1))
	rapid.Check(t, func(rt *rapid.T) {
		m := newTTMachine(t, rt)
		defer m.e.Close()
		rt.Repeat(m.actions())
		m.checkEverySeq(rt)
		m.finish(rt)
	})
}

func TestProperty_RollbackRestoresTheStateAtItsTarget(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newTTMachine(t, rt)
		defer m.e.Close()
		actions := m.actions()
		// Roll back, and make what a rollback flags (exec records,
		// approvals), more often than the other commands run.
		actions["Rollback2"], actions["Rollback3"] = m.Rollback, m.Rollback
		actions["Exec2"], actions["Approval2"] = m.Exec, m.Approval
		rt.Repeat(actions)
		m.finish(rt)
	})
}

func TestAt_TimeResolvesToTheLastEventAtOrBeforeIt(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	now := t0
	path := filepath.Join(t.TempDir(), DefaultDir, DefaultFile)
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := e.Verify(); err != nil {
			t.Errorf("Verify: %v", err)
		}
		e.Close()
	}()
	steps := []struct {
		after time.Duration
		run   func() error
	}{
		{0, func() error { _, err := e.CreateProject(NewProject{Name: "p"}); return err }},                                // seq 1
		{10 * time.Second, func() error { _, err := e.AddTask(NewTask{Project: "p", Title: "a"}); return err }},           // seq 2
		{10 * time.Second, func() error { _, err := e.AddTask(NewTask{Project: "p", Title: "b"}); return err }},           // seq 3, same time
		{20 * time.Second, func() error { _, err := e.MoveTask(Move{Project: "p", ID: "T-1", To: "doing"}); return err }}, // seq 4
		{30 * time.Second, func() error { _, err := e.AddNote(NewNote{Project: "p", Text: "n"}); return err }},            // seq 5
	}
	for _, s := range steps {
		now = t0.Add(s.after)
		if err := s.run(); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		at   time.Time
		want uint64
	}{
		{"BeforeTheFirstEvent", t0.Add(-time.Nanosecond), 0},
		{"AtTheFirstEvent", t0, 1},
		{"BetweenTwoEvents", t0.Add(5 * time.Second), 1},
		{"AtTwoEventsOfOneTime", t0.Add(10 * time.Second), 3},
		{"JustAfterThem", t0.Add(10*time.Second + time.Nanosecond), 3},
		{"JustBeforeAnEvent", t0.Add(20*time.Second - time.Nanosecond), 3},
		{"AtAnEvent", t0.Add(20 * time.Second), 4},
		{"AtTheLastEvent", t0.Add(30 * time.Second), 5},
		{"AfterTheLastEvent", t0.Add(time.Hour), 5},
		{"InAnotherZone", t0.Add(5 * time.Second).In(time.FixedZone("CEST", 2*3600)), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got uint64
			err := e.view(func(tx store.Tx) error {
				var err error
				got, err = resolvePoint(tx, projstore.NewTx(tx), "p", Point{Time: c.at})
				return err
			})
			if err != nil || got != c.want {
				t.Fatalf("resolvePoint(%s) = %d, %v; want seq %d", c.at.Format(time.RFC3339Nano), got, err, c.want)
			}
			// The same point written as the CLI's --at takes it.
			p, err := ParsePoint(c.at.Format(time.RFC3339Nano))
			if err != nil {
				t.Fatal(err)
			}
			proj, err := e.At("p", p).Project("p")
			if c.want == 0 {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("project before the first event = %+v, %v; want ErrNotFound (the empty state)", proj, err)
				}
				return
			}
			if err != nil || proj.Events != c.want {
				t.Fatalf("project at %s = %+v, %v; want it as of seq %d", p, proj, err, c.want)
			}
		})
	}
}

// ttStatusJSON is a status as JSON, or its error's code.
func ttStatusJSON(st *Status, err error) string {
	if err != nil {
		return "error " + string(ErrorCode(err))
	}
	b, _ := json.Marshal(st)
	return string(b)
}
