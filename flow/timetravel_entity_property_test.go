package flow

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// TestProperty_EntityAtEqualsWholeStateAt checks the fast path of
// point-in-time reads (history.Source, history.EntityAt) against the whole state: for
// random histories of two projects (tasks, deps, edits, claims, context
// merges and replacements, steps, notes, approvals, exec records, plans,
// archiving, checkpoints, rollbacks of a project or of one task, to seqs
// or checkpoints, and rollbacks of rollbacks, with automatic snapshots
// every few events), at every seq from 0 to the head, every task, plan,
// approval, exec record and checkpoint id (and the next one, which never
// existed) reads alike, encoded byte for byte (msgpack and JSON):
//
//   - history.EntityAt's fold of a task's or plan's own stream and the project's
//     rollbacks, always (not only when the entity changed after the seq);
//   - history.Source, which also answers from the projections when the entity
//     did not change after the seq, and folds approvals and exec records
//     with their task; it must not fall back to the whole state for a
//     task or a plan;
//   - the engine's public reads through At (Task, Plan, Approval, Exec,
//     Checkpoint), with the same error codes;
//
// and the whole state is Engine.stateAt: the nearest snapshot and the
// events after it. The rollback index matches the log, and finds the
// same rollbacks as reading the project's stream, for random windows.
func TestProperty_EntityAtEqualsWholeStateAt(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newTTMachine(t, rt)
		defer m.e.Close()
		actions := m.actions()
		actions["Rollback2"], actions["Context2"], actions["AddStep2"] = m.Rollback, m.Context, m.AddStep
		rt.Repeat(actions)
		m.checkPlacements(rt)
		m.checkEntitiesAtEverySeq(rt)
		m.checkRollbackWindows(rt)
		m.finish(rt)
	})
}

// checkPlacements checks that every event the commands wrote is where
// checkPlacement says it belongs, in the state before it.
func (m *ttMachine) checkPlacements(t *rapid.T) {
	mem := projection.NewMemory()
	err := m.e.view(func(tx store.Tx) error {
		return tx.ReadRange(1, 0, func(r *eventlog.Record) error {
			if err := checkPlacement(mem, r); err != nil {
				return err
			}
			return ttApply(mem, r)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ttIDs returns the ids of a kind a project has used, and the next one.
func ttIDs(prefix string, used int) []string {
	ids := make([]string, used+1)
	for i := range ids {
		ids[i] = projection.ShortID(prefix, i+1)
	}
	return ids
}

func (m *ttMachine) checkEntitiesAtEverySeq(t *rapid.T) {
	head := m.head(t)
	for _, p := range ttProjects {
		c := m.counters(t, p)
		for seq := uint64(0); seq <= head; seq++ {
			var whole *projection.Memory
			err := m.e.view(func(tx store.Tx) error {
				var err error
				if whole, err = m.e.stateAt(tx, p, seq); err != nil {
					return err
				}
				return m.checkEntitiesAt(tx, whole, p, seq, c)
			})
			if err != nil {
				t.Fatalf("%s at seq %d: %v", p, seq, err)
			}
			m.checkPublicReadsAt(t, whole, p, seq, c)
		}
	}
}

// checkEntitiesAt compares every entity of project at seq with whole, in
// tx (a failure is an error: rapid's t.Fatal panics, which a transaction
// would report as a damaged page).
func (m *ttMachine) checkEntitiesAt(tx store.Tx, whole *projection.Memory, p string, seq uint64, c projection.Counters) error {
	at := func() *history.Source { return history.NewSource(tx, p, seq, m.e.warn) }
	for _, id := range ttIDs(projection.PrefixTask, c.Tasks) {
		want := whole.Tasks[projection.Key(p, id)]
		mem, err := history.EntityAt(tx, p, projection.TaskStream(p, id), seq, m.e.warn)
		if err != nil {
			return err
		}
		if mem == nil {
			return fmt.Errorf("%s %s at seq %d: history.EntityAt's fold failed", p, id, seq)
		}
		if err := ttSameEntity("history.EntityAt", p, id, seq, mem.Tasks[projection.Key(p, id)], want); err != nil {
			return err
		}
		a := at()
		got, err := a.Task(p, id)
		if err != nil {
			return err
		}
		if a.Whole() {
			return fmt.Errorf("%s %s at seq %d: history.Source fell back to the whole state", p, id, seq)
		}
		if err := ttSameEntity("history.Source", p, id, seq, got, want); err != nil {
			return err
		}
	}
	for _, id := range ttIDs(projection.PrefixPlan, c.Plans) {
		want := whole.Plans[projection.Key(p, id)]
		mem, err := history.EntityAt(tx, p, projection.PlanStream(p, id), seq, m.e.warn)
		if err != nil {
			return err
		}
		if mem == nil {
			return fmt.Errorf("%s %s at seq %d: history.EntityAt's fold failed", p, id, seq)
		}
		if err := ttSameEntity("history.EntityAt", p, id, seq, mem.Plans[projection.Key(p, id)], want); err != nil {
			return err
		}
		a := at()
		got, err := a.Plan(p, id)
		if err != nil {
			return err
		}
		if a.Whole() {
			return fmt.Errorf("%s %s at seq %d: history.Source fell back to the whole state", p, id, seq)
		}
		if err := ttSameEntity("history.Source", p, id, seq, got, want); err != nil {
			return err
		}
	}
	for _, id := range ttIDs(projection.PrefixApproval, c.Approvals) {
		got, err := at().Approval(p, id)
		if err != nil {
			return err
		}
		if err := ttSameEntity("history.Source", p, id, seq, got, whole.Approvals[projection.Key(p, id)]); err != nil {
			return err
		}
	}
	for _, id := range ttIDs(projection.PrefixExec, c.Execs) {
		got, err := at().Exec(p, id)
		if err != nil {
			return err
		}
		if err := ttSameEntity("history.Source", p, id, seq, got, whole.Execs[projection.Key(p, id)]); err != nil {
			return err
		}
	}
	for _, id := range ttIDs(projection.PrefixCheckpoint, c.Checkpoints) {
		got, err := at().Checkpoint(p, id)
		if err != nil {
			return err
		}
		if err := ttSameEntity("history.Source", p, id, seq, got, whole.Checkpoints[projection.Key(p, id)]); err != nil {
			return err
		}
	}
	return nil
}

// checkPublicReadsAt reads every entity through the engine's public API
// at seq, as `--at` does, and compares it (or its error) with whole.
func (m *ttMachine) checkPublicReadsAt(t *rapid.T, whole *projection.Memory, p string, seq uint64, c projection.Counters) {
	v := m.e.At(p, Point{Seq: seq})
	for _, id := range ttIDs(projection.PrefixTask, c.Tasks) {
		got, err := v.Task(p, id)
		ttSameRead(t, "Task", p, id, seq, got, err, whole.Tasks[projection.Key(p, id)])
	}
	for _, id := range ttIDs(projection.PrefixPlan, c.Plans) {
		got, err := v.Plan(p, id)
		ttSameRead(t, "Plan", p, id, seq, got, err, whole.Plans[projection.Key(p, id)])
	}
	for _, id := range ttIDs(projection.PrefixApproval, c.Approvals) {
		got, err := v.Approval(p, id)
		if got != nil && got.Status == ApprovalStatusExpired { // shown by the clock; stored pending
			c := *got
			c.Status = projection.ApprovalPending
			got = &c
		}
		ttSameRead(t, "Approval", p, id, seq, got, err, whole.Approvals[projection.Key(p, id)])
	}
	for _, id := range ttIDs(projection.PrefixExec, c.Execs) {
		got, err := v.Exec(p, id)
		ttSameRead(t, "Exec", p, id, seq, got, err, whole.Execs[projection.Key(p, id)])
	}
	for _, id := range ttIDs(projection.PrefixCheckpoint, c.Checkpoints) {
		got, err := v.Checkpoint(p, id)
		ttSameRead(t, "Checkpoint", p, id, seq, got, err, whole.Checkpoints[projection.Key(p, id)])
	}
}

// ttSameEntity fails unless got and want are both absent, or encode alike
// in msgpack and in JSON.
func ttSameEntity[T any](how, p, id string, seq uint64, got, want *T) error {
	g, err := ttCanonical(got)
	if err != nil {
		return err
	}
	w, err := ttCanonical(want)
	if err != nil {
		return err
	}
	if !bytes.Equal(g, w) {
		return fmt.Errorf("%s: %s %s at seq %d differs from the whole state's:\n got %s\nwant %s", how, p, id, seq, g, w)
	}
	return nil
}

// ttCanonical encodes an entity (or its absence) as msgpack and as JSON.
func ttCanonical[T any](v *T) ([]byte, error) {
	if v == nil {
		return []byte("absent"), nil
	}
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	j, err := json.Marshal(v)
	return append(append(j, " msgpack "...), hex.EncodeToString(b)...), err
}

// ttSameRead fails unless a public read gave want, or ErrNotFound when
// want is absent.
func ttSameRead[T any](t *rapid.T, how, p, id string, seq uint64, got *T, err error, want *T) {
	if want == nil {
		if ErrorCode(err) != CodeNotFound {
			t.Fatalf("%s(%s %s) at seq %d = %s, %v; want not found", how, p, id, seq, ttJSON(t, got), err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s(%s %s) at seq %d: %v", how, p, id, seq, err)
	}
	if err := ttSameEntity(how, p, id, seq, got, want); err != nil {
		t.Fatal(err)
	}
}

// checkRollbackWindows checks the rollback index against the log, and
// history.ProjectRollbacks against a read of the project's stream, for random
// windows: with the index, and with the index dropped (a file an older
// flowctl wrote), and with it behind the stream (events an import
// appended).
func (m *ttMachine) checkRollbackWindows(t *rapid.T) {
	if err := m.e.view(history.CheckIndex); err != nil {
		t.Fatalf("history.CheckIndex: %v", err)
	}
	head := m.head(t)
	windows := rapid.SliceOfN(rapid.Uint64Range(0, head), 2, 16).Draw(t, "windows")
	check := func(how string) {
		err := m.e.view(func(tx store.Tx) error {
			for _, p := range ttProjects {
				all, err := ttStreamRollbacks(tx, p)
				if err != nil {
					return err
				}
				for i := 0; i+1 < len(windows); i += 2 {
					after, upTo := min(windows[i], windows[i+1]), max(windows[i], windows[i+1])
					got, err := history.ProjectRollbacks(tx, p, after, upTo, m.e.warn)
					if err != nil {
						return err
					}
					want := slices.DeleteFunc(slices.Clone(all), func(s uint64) bool { return s <= after || s > upTo })
					if gs := ttSeqs(got); !slices.Equal(gs, want) {
						return fmt.Errorf("%s: rollbacks of %s in (%d, %d] = %v, the stream has %v", how, p, after, upTo, gs, want)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check("indexed")
	err := m.e.log.Update(func(tx store.Tx) error {
		// Behind: p's mark taken back to its stream's first event.
		if err := history.DropIndex(tx, "p"); err != nil {
			return err
		}
		v, seq := uint64(1), m.created["p"]
		if err := tx.Put(history.BucketRollbacks, history.Key("p", 0), history.Mark{Version: v, Seq: seq}.Bytes()); err != nil {
			return err
		}
		return history.DropIndex(tx, "q") // q: none at all
	})
	if err != nil {
		t.Fatal(err)
	}
	check("behind or none")
	if err := m.e.view(history.CheckIndex); err != nil {
		t.Fatalf("history.CheckIndex of an index behind the log: %v", err)
	}
}

// ttStreamRollbacks lists the seqs of the rollbacks of the whole project
// on its stream.
func ttStreamRollbacks(tx store.Tx, project string) ([]uint64, error) {
	var out []uint64
	err := tx.ReadStream(projection.ProjectStream(project), 1, func(r *eventlog.Record) error {
		if r.Type == projection.TypeRollbackApplied {
			out = append(out, r.Seq)
		}
		return nil
	})
	return out, err
}

func ttSeqs(rs []*eventlog.Record) []uint64 {
	out := []uint64{}
	for _, r := range rs {
		out = append(out, r.Seq)
	}
	return out
}

// TestProjectRollbacks_DamagedIndexIsNotTrusted damages the rollback
// index in each way a reader can tell (an entry dropped, an entry added,
// a mark of another history) and checks that reads of an entity at a
// point still equal the whole state's, with a warning, and that
// history.CheckIndex reports the damage.
func TestProjectRollbacks_DamagedIndexIsNotTrusted(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(tx store.Tx, rollbacks []uint64) error
	}{
		{"EntryDropped", func(tx store.Tx, rbs []uint64) error {
			return tx.Delete(history.BucketRollbacks, history.Key("p", rbs[0]))
		}},
		{"EntryAdded", func(tx store.Tx, rbs []uint64) error {
			return tx.Put(history.BucketRollbacks, history.Key("p", rbs[0]+1), []byte{0, 0, 0, 0, 0, 0, 0, 1})
		}},
		{"MarkOfAnotherHistory", func(tx store.Tx, rbs []uint64) error {
			m, _, err := history.ReadMark(tx, "p")
			m.Seq++
			if err == nil {
				err = tx.Put(history.BucketRollbacks, history.Key("p", 0), m.Bytes())
			}
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := snapsOpen(t, 5)
			e := s.Engine
			mustDo(t)(e.CreateProject(NewProject{Name: "p"}))
			mustDo(t)(e.AddTask(NewTask{Project: "p", Title: "a"}))
			mustDo(t)(e.CreateCheckpoint(NewCheckpoint{Project: "p"}))
			mustDo(t)(e.MoveTask(Move{Project: "p", ID: "T-1", To: "doing"}))
			mustDo(t)(e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}}))
			mustDo(t)(e.AddNote(NewNote{Project: "p", Text: "n", Kind: NoteKindNote}))
			head := snapsHead(t, e)
			var rbs []uint64
			err := e.log.Update(func(tx store.Tx) error {
				var err error
				if rbs, err = ttStreamRollbacks(tx, "p"); err != nil || len(rbs) != 1 {
					return fmt.Errorf("rollbacks %v, %v: want one", rbs, err)
				}
				return tt.damage(tx, rbs)
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.view(history.CheckIndex); ErrorCode(err) != CodeCorrupt {
				t.Errorf("history.CheckIndex = %v, want corruption", err)
			}
			for seq := uint64(0); seq <= head; seq++ {
				got, err := e.At("p", Point{Seq: seq}).Task("p", "T-1")
				var want *projection.Task
				if err := e.view(func(tx store.Tx) error {
					mem, err := e.stateAt(tx, "p", seq)
					want = mem.Tasks[projection.Key("p", "T-1")]
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if want == nil {
					if ErrorCode(err) != CodeNotFound {
						t.Fatalf("T-1 at seq %d = %+v, %v; want not found", seq, got, err)
					}
					continue
				}
				if err != nil || !bytes.Equal(ttMarshal(t, got), ttMarshal(t, want)) {
					t.Fatalf("T-1 at seq %d = %+v, %v; want %+v", seq, got, err, want)
				}
			}
			if len(s.warned()) == 0 {
				t.Errorf("no warning about the damaged index")
			}
			if _, err := e.Verify(); ErrorCode(err) != CodeCorrupt || !strings.Contains(err.Error(), "rollback index") {
				t.Errorf("Verify = %v, want the damaged rollback index reported", err)
			}
			// A rebuild drops the index; the next command fills it again.
			mustDo(t)(e.Rebuild())
			mustDo(t)(e.AddNote(NewNote{Project: "p", Text: "after", Kind: NoteKindNote}))
			if err := e.view(history.CheckIndex); err != nil {
				t.Errorf("after a rebuild and a command: history.CheckIndex = %v", err)
			}
		})
	}
}

func TestCheckPlacement(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 5).Engine
	mustDo(t)(e.CreateProject(NewProject{Name: "p"}))
	mustDo(t)(e.AddTask(NewTask{Project: "p", Title: "a"}))
	mustDo(t)(e.AddTask(NewTask{Project: "p", Title: "b"}))
	mustDo(t)(e.AddPlan(NewPlan{Project: "p", Title: "plan"}))
	mustDo(t)(e.RequestApproval(NewApproval{Project: "p", Task: "T-1", Message: "ok?"}))
	mustDo(t)(e.RecordExec(NewExec{Project: "p", Task: "T-1", Command: "make", Success: true}))
	var src projection.Store
	err := e.view(func(tx store.Tx) error {
		var err error
		src, err = e.stateAt(tx, "p", snapsHead(t, e))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(stream, typ string, payload any) *eventlog.Record {
		b, err := marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		schema, _ := projection.Schema(typ)
		return &eventlog.Record{Seq: 99, Stream: stream, Event: eventlog.Event{Type: typ, Schema: schema, Project: "p", Data: b}}
	}
	task1, task2, proj := projection.TaskStream("p", "T-1"), projection.TaskStream("p", "T-2"), projection.ProjectStream("p")
	restored := func(ids ...string) []projection.Task {
		var out []projection.Task
		for _, id := range ids {
			out = append(out, projection.Task{Project: "p", ID: id})
		}
		return out
	}
	for _, tt := range []struct {
		name string
		r    *eventlog.Record
		ok   bool
	}{
		{"NoteOnItsTask", rec(task1, projection.TypeNoteAdded, projection.NoteAdded{Task: "T-1", Text: "n"}), true},
		{"NoteOfATaskOnTheProject", rec(proj, projection.TypeNoteAdded, projection.NoteAdded{Task: "T-1", Text: "n"}), false},
		{"NoteOfATaskOnAnother", rec(task2, projection.TypeNoteAdded, projection.NoteAdded{Task: "T-1", Text: "n"}), false},
		{"NoteOfTheProjectOnATask", rec(task1, projection.TypeNoteAdded, projection.NoteAdded{Text: "n"}), false},
		{"DecisionOnItsTask", rec(task1, projection.TypeApprovalDecided, projection.ApprovalDecided{ID: "A-1", Decision: "granted"}), true},
		{"DecisionOnTheProject", rec(proj, projection.TypeApprovalDecided, projection.ApprovalDecided{ID: "A-1", Decision: "granted"}), false},
		{"ExecOnAnotherTask", rec(task2, projection.TypeExecRecorded, projection.ExecRecorded{ID: "X-2", Task: "T-1"}), false},
		{"TaskCreatedOnAnotherStream", rec(task2, projection.TypeTaskCreated, projection.TaskCreated{ID: "T-3"}), false},
		{"PlanClosedOnAnotherPlan", rec(projection.PlanStream("p", "P-2"), projection.TypePlanClosed, projection.PlanClosed{ID: "P-1"}), false},
		{"TaskEventOnThePlan", rec(projection.PlanStream("p", "P-1"), projection.TypeTaskUpdated, projection.TaskUpdated{}), false},
		{"AnotherProjectsStream", rec(projection.TaskStream("q", "T-1"), projection.TypeTaskReleased, projection.TaskReleased{}), false},
		{"OutsideTheCatalog", rec("misc", projection.TypeNoteAdded, projection.NoteAdded{Text: "n"}), false},
		{"UnknownTypeAnywhere", &eventlog.Record{Stream: "misc", Event: eventlog.Event{Type: "x.y", Project: "p"}}, true},
		{"ProjectRollback", rec(proj, projection.TypeRollbackApplied, projection.RollbackApplied{Tasks: restored("T-1", "T-2"),
			Removed: []projection.Removed{{Kind: projection.KindPlan, ID: "P-1"}}}), true},
		{"TaskRollback", rec(task1, projection.TypeRollbackApplied, projection.RollbackApplied{Task: "T-1", Tasks: restored("T-1"),
			Removed: []projection.Removed{{Kind: projection.KindApproval, ID: "A-1"}, {Kind: projection.KindExec, ID: "X-1"}}}), true},
		{"TaskRollbackOfAnotherTask", rec(task1, projection.TypeRollbackApplied, projection.RollbackApplied{Task: "T-1", Tasks: restored("T-2")}), false},
		{"TaskRollbackOnAnotherStream", rec(task2, projection.TypeRollbackApplied, projection.RollbackApplied{Task: "T-1", Tasks: restored("T-1")}), false},
		{"TaskRollbackRemovingAnotherTasksApproval", rec(task2, projection.TypeRollbackApplied, projection.RollbackApplied{Task: "T-2",
			Removed: []projection.Removed{{Kind: projection.KindApproval, ID: "A-1"}}}), false},
		{"TaskRollbackOfAPlan", rec(task1, projection.TypeRollbackApplied, projection.RollbackApplied{Task: "T-1",
			Plans: []projection.Plan{{Project: "p", ID: "P-1"}}}), false},
		{"RollbackOnAPlan", rec(projection.PlanStream("p", "P-1"), projection.TypeRollbackApplied, projection.RollbackApplied{}), false},
		{"RollbackRestoringAnotherProject", rec(proj, projection.TypeRollbackApplied, projection.RollbackApplied{
			Tasks: []projection.Task{{Project: "q", ID: "T-1"}}}), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkPlacement(src, tt.r)
			if tt.ok && err != nil || !tt.ok && ErrorCode(err) != CodeInvalid {
				t.Fatalf("checkPlacement = %v, want ok: %v", err, tt.ok)
			}
		})
	}
}

// mustDo fails the test on a command's error.
func mustDo(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}
