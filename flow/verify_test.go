package flow

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// TestVerify_ByProject: verify compares the projections project by
// project and still names each kind of damage, as the comparison with a
// replay of the whole log does; a clean file is settled without it. It
// does with every project folded from the walk (the Stream's budget) and
// with all but one replayed beside it.
func TestVerify_ByProject(t *testing.T) {
	seal := func(k, body string) []byte { return projstore.Seal([]byte(k), []byte(body)) }
	cases := []struct {
		name, entity string
		damage       func(tx store.Tx) error
	}{
		{"Differs", "a/T-1", func(tx store.Tx) error {
			return tx.Put(projstore.BucketTasks, []byte("a/T-1"), seal("a/T-1", "x"))
		}},
		{"Missing", "a.b/T-1", func(tx store.Tx) error { return tx.Delete(projstore.BucketTasks, []byte("a.b/T-1")) }},
		{"StrayOfNoProject", "zz/T-1", func(tx store.Tx) error {
			return tx.Put(projstore.BucketTasks, []byte("zz/T-1"), seal("zz/T-1", "x"))
		}},
		{"StrayOfAProject", "a/T-99", func(tx store.Tx) error {
			return tx.Put(projstore.BucketTasks, []byte("a/T-99"), seal("a/T-99", "x"))
		}},
		{"SummaryStray", "done", func(tx store.Tx) error {
			k := "sproj_task\x00a\x00done\x00T-1"
			return tx.Put(projstore.BucketSummaries, []byte(k), seal(k, ""))
		}},
		{"SummaryMissing", "todo", func(tx store.Tx) error {
			return tx.Delete(projstore.BucketSummaries, append(projstore.SummaryCountPrefix(projstore.BucketTasks, "a.b"), "todo"...))
		}},
		{"ExecDiffers", "c/X-1", func(tx store.Tx) error {
			return tx.Put(projstore.BucketExecs, []byte("c/X-1"), seal("c/X-1", "x"))
		}},
		{"DoneTaskDiffers", "a/T-3", func(tx store.Tx) error {
			return tx.Put(projstore.BucketTasks, []byte("a/T-3"), seal("a/T-3", "x"))
		}},
		{"DoneTaskTitle", "a/T-3", func(tx store.Tx) error {
			// A done task rewritten whole (its index entries with it):
			// only the entity itself differs.
			s := projstore.NewTx(tx)
			t, err := s.Task("a", "T-3")
			if err != nil || t == nil {
				return errors.Join(err, errors.New("no a/T-3"))
			}
			t.Description = "changed" // not in the status index
			if err := s.PutTask(t); err != nil {
				return err
			}
			return s.Flush()
		}},
		{"DoneTaskMissing", "c/T-3", func(tx store.Tx) error { return tx.Delete(projstore.BucketTasks, []byte("c/T-3")) }},
		{"DoneTaskAsChanged", "a.b/T-3", func(tx store.Tx) error {
			// Another done task's value under T-3's key.
			v, err := tx.Get(projstore.BucketTasks, []byte("a.b/T-4"))
			if err != nil {
				return err
			}
			return tx.Put(projstore.BucketTasks, []byte("a.b/T-3"), bytes.Clone(v))
		}},
		{"ChangedAfterDoneDiffers", "c/T-4", func(tx store.Tx) error {
			v, err := tx.Get(projstore.BucketTasks, []byte("c/T-3"))
			if err != nil {
				return err
			}
			return tx.Put(projstore.BucketTasks, []byte("c/T-4"), bytes.Clone(v))
		}},
		{"PlanDiffers", "a.b/P-1", func(tx store.Tx) error {
			return tx.Put(projstore.BucketPlans, []byte("a.b/P-1"), seal("a.b/P-1", "x"))
		}},
		{"CheckpointMissing", "a/C-1", func(tx store.Tx) error { return tx.Delete(projstore.BucketCheckpts, []byte("a/C-1")) }},
		{"CheckpointStray", "c/C-2", func(tx store.Tx) error {
			v, err := tx.Get(projstore.BucketCheckpts, []byte("c/C-1"))
			if err != nil {
				return err
			}
			return tx.Put(projstore.BucketCheckpts, []byte("c/C-2"), bytes.Clone(v))
		}},
		{"ExecMissing", "a.b/X-1", func(tx store.Tx) error { return tx.Delete(projstore.BucketExecs, []byte("a.b/X-1")) }},
		{"ExecStray", "a/X-7", func(tx store.Tx) error {
			v, err := tx.Get(projstore.BucketExecs, []byte("a/X-1"))
			if err != nil {
				return err
			}
			return tx.Put(projstore.BucketExecs, []byte("a/X-7"), bytes.Clone(v))
		}},
		{"TaskBeforeChildIndex", "a/T-1", func(tx store.Tx) error {
			// The child index is scanned beside the walk; the tasks'
			// difference is still the one reported.
			if err := tx.Put(projstore.BucketChildren, projstore.ChildKey("c", "T-1", "T-9"), nil); err != nil {
				return err
			}
			return tx.Put(projstore.BucketTasks, []byte("a/T-1"), seal("a/T-1", "x"))
		}},
		{"ChildIndexStray", "children", func(tx store.Tx) error {
			return tx.Put(projstore.BucketChildren, projstore.ChildKey("c", "T-1", "T-9"), nil)
		}},
		{"ProjectMissing", "c", func(tx store.Tx) error { return tx.Delete(projstore.BucketProjects, []byte("c")) }},
		{"PlanCountMissing", "a.b", func(tx store.Tx) error {
			return tx.Delete(projstore.BucketSummaries, projstore.PlanCountKey("a.b", "P-1"))
		}},
		{"LogIndexChunkDropped", logidx.Bucket, func(tx store.Tx) error {
			var first []byte
			err := tx.Scan(logidx.Bucket, nil, func(k, _ []byte) error {
				if first == nil && strings.Contains(string(k), "task.created") {
					first = k
				}
				return nil
			})
			if err != nil || first == nil {
				return errors.Join(err, errors.New("no task.created chunk in the log index"))
			}
			return tx.Delete(logidx.Bucket, first)
		}},
		{"LogIndexPendingChanged", logidx.PendingBucket, func(tx store.Tx) error {
			var key []byte
			err := tx.Scan(logidx.PendingBucket, nil, func(k, v []byte) error {
				if key == nil && len(v) > 1 && k[0] == 'a' {
					key = bytes.Clone(k)
				}
				return nil
			})
			if err != nil || key == nil {
				return errors.Join(err, errors.New("no pending actor list of two seqs in the log index"))
			}
			v, err := tx.Get(logidx.PendingBucket, key)
			if err != nil {
				return err
			}
			return tx.Put(logidx.PendingBucket, key, append(bytes.Clone(v[:len(v)-1]), v[len(v)-1]+1))
		}},
	}
	for _, budget := range []uint64{0, 1} {
		if budget != 0 {
			defer projstore.SetStreamEvents(budget)()
		}
		for _, c := range cases {
			verifyDamage(t, fmt.Sprintf("%s/streamed=%d", c.name, budget), c.entity, c.damage)
		}
	}
}

// verifyDamage makes a file of three projects, checks that it verifies,
// damages it and checks that Verify names entity.
func verifyDamage(t *testing.T, name, entity string, damage func(tx store.Tx) error) {
	t.Run(name, func(t *testing.T) {
		e := mustOpen(t)
		for _, p := range []string{"a", "a.b", "c"} {
			if _, err := e.CreateProject(NewProject{Name: p}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.AddTask(NewTask{Project: p, Title: "t"}); err != nil {
				t.Fatal(err)
			}
			pl, err := e.AddPlan(NewPlan{Project: p, Title: "plan"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.AddTask(NewTask{Project: p, Title: "planned", Plan: pl.ID}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.RecordExec(NewExec{Project: p, Task: "T-1", Command: "make", Success: true}); err != nil {
				t.Fatal(err)
			}
			// A task done (T-3) and one changed after it was done (T-4), a
			// checkpoint: the Stream drops what it has compared as it goes.
			for _, id := range []string{"T-3", "T-4"} {
				if _, err := e.AddTask(NewTask{Project: p, Title: "finished", Plan: pl.ID}); err != nil {
					t.Fatal(err)
				}
				for _, to := range []string{projection.StatusDoing, projection.StatusDone} {
					if _, err := e.MoveTask(Move{Project: p, ID: id, To: to}); err != nil {
						t.Fatal(err)
					}
				}
			}
			if _, err := e.AddNote(NewNote{Project: p, Task: "T-4", Text: "after"}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.CreateCheckpoint(NewCheckpoint{Project: p, Label: "c"}); err != nil {
				t.Fatal(err)
			}
		}
		err := e.log.View(func(tx store.Tx) error {
			settled, err := projstore.VerifyByProject(tx, e.warn)
			if !settled || err != nil {
				t.Errorf("VerifyByProject of a clean file = %v, %v; want settled, nil", settled, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := e.Verify(); err != nil || rep.Projections != "ok" {
			t.Fatalf("Verify of a clean file = %+v, %v", rep, err)
		}
		if err := e.log.Update(damage); err != nil {
			t.Fatal(err)
		}
		_, err = e.Verify()
		var ce *eventlog.CorruptionError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), entity) {
			t.Errorf("Verify = %v, want a corruption naming %q", err, entity)
		}
		whole := e.log.View(func(tx store.Tx) error { return e.compareProjections(tx) })
		if !errors.As(whole, &ce) {
			t.Errorf("the whole replay's comparison = %v, want a corruption too", whole)
		}
		if _, err := e.Rebuild(); err != nil { // for the cleanup's Verify
			t.Fatal(err)
		}
	})
}

// TestVerify_Stream: the projections' check fed by one walk of the log
// settles every project of a clean file itself, its execs compared as
// they are recorded, and leaves to the per-project replay only a project
// with a rollback (which may restore or remove execs it dropped).
func TestVerify_Stream(t *testing.T) {
	e := rollbackFixture(t) // project "p"
	for _, p := range []string{"a", "b"} {
		if _, err := e.CreateProject(NewProject{Name: p}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.AddTask(NewTask{Project: p, Title: "t"}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if _, err := e.RecordExec(NewExec{Project: p, Task: "T-1", Command: "make", ExitCode: 2}); err != nil {
				t.Fatal(err)
			}
		}
		// A task done, then noted: the Stream must not drop it when it
		// is done (the stored one differs), or the note's fold fails.
		if _, err := e.AddTask(NewTask{Project: p, Title: "finished"}); err != nil {
			t.Fatal(err)
		}
		for _, to := range []string{projection.StatusDoing, projection.StatusDone} {
			if _, err := e.MoveTask(Move{Project: p, ID: "T-2", To: to}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.RecordExec(NewExec{Project: p, Task: "T-2", Command: "make", Success: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.CreateCheckpoint(NewCheckpoint{Project: p, Label: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	stream := func(workers int) (unsure []string) {
		foldStream(t, e, workers, func(tx store.Tx, s *projstore.Stream) {
			settled, err := s.Verify(tx, e.log.View, 2, e.warn)
			if !settled || err != nil {
				t.Errorf("Stream.Verify = %v, %v; want settled, nil", settled, err)
			}
			unsure = s.Unsure()
		})
		return unsure
	}
	for _, workers := range []int{1, 2, 3, 8} {
		if got := stream(workers); len(got) != 0 {
			t.Errorf("unsure = %q before a rollback (%d workers), want none", got, workers)
		}
	}
	// Past its budget of events, the Stream replays the projects it
	// does not fold beside the walk, and still settles.
	restore := projstore.SetStreamEvents(1)
	for _, workers := range []int{1, 2} {
		if got := stream(workers); len(got) != 0 {
			t.Errorf("unsure = %q with one project folded from the walk (%d workers), want none", got, workers)
		}
	}
	restore()
	if _, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}}); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{1, 2, 3, 8} {
		if got := stream(workers); len(got) != 1 || got[0] != "p" {
			t.Errorf("unsure = %q after a rollback of p (%d workers), want [p]", got, workers)
		}
	}
	if rep, err := e.Verify(); err != nil || rep.Projections != "ok" {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
}

// TestVerify_StreamDroppedApprovals: the Stream drops a decided approval
// once it has compared it, keeping only a sum of the stored entries it
// dropped; a stored approval that differs from the replay's, or that no
// replay makes, is still found, whether or not it was dropped.
func TestVerify_StreamDroppedApprovals(t *testing.T) {
	for _, damage := range []string{"decided changed", "pending changed", "extra"} {
		t.Run(damage, func(t *testing.T) {
			e := mustOpen(t)
			if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.AddTask(NewTask{Project: "p", Title: "t"}); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := e.RequestApproval(NewApproval{Project: "p", Task: "T-1", Message: "approve-me"}); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range []string{"A-1", "A-2"} { // A-3 stays pending
				if _, err := e.As("reviewer", "r1").DecideApproval(Decision{Project: "p", ID: id, Grant: true}); err != nil {
					t.Fatal(err)
				}
			}
			if rep, err := e.Verify(); err != nil || rep.Projections != "ok" {
				t.Fatalf("Verify before the damage = %+v, %v", rep, err)
			}
			from, to := "p/A-1", "p/A-1"
			switch damage {
			case "pending changed":
				from, to = "p/A-3", "p/A-3"
			case "extra":
				to = "p/A-9"
			}
			err := e.log.Update(func(tx store.Tx) error {
				v, err := tx.Get(projstore.BucketApprovals, []byte(from))
				if err != nil || v == nil {
					return fmt.Errorf("get %s: %v, %v", from, v, err)
				}
				body := bytes.Clone(v[:len(v)-projstore.SealSize])
				if damage != "extra" {
					if !bytes.Contains(body, []byte("approve-me")) {
						return fmt.Errorf("%s's body %q has no message", from, body)
					}
					body = bytes.Replace(body, []byte("approve-me"), []byte("approve-it"), 1)
				}
				return tx.Put(projstore.BucketApprovals, []byte(to), projstore.Seal([]byte(to), body))
			})
			if err != nil {
				t.Fatal(err)
			}
			// The Stream, which dropped, must not settle p;
			// Verify then names the approval (the per-project replay).
			foldStream(t, e, 1, func(_ store.Tx, s *projstore.Stream) {
				if unsure := s.Unsure(); len(unsure) != 1 || unsure[0] != "p" {
					t.Errorf("Stream unsure = %q after the damage, want [p]", unsure)
				}
			})
			var ce *eventlog.CorruptionError
			if _, err := e.Verify(); !errors.As(err, &ce) || !strings.Contains(err.Error(), to) {
				t.Errorf("Verify = %v, want a corruption naming %s", err, to)
			}
			if _, err := e.Rebuild(); err != nil { // for the cleanup's Verify
				t.Fatal(err)
			}
		})
	}
}

// foldStream folds e's whole log through a verify Stream of workers
// goroutines, as Verify's walk feeds it, and calls fn with it once the
// walk has ended, in the same transaction.
func foldStream(t *testing.T, e *Engine, workers int, fn func(tx store.Tx, s *projstore.Stream)) {
	t.Helper()
	err := e.log.View(func(tx store.Tx) error {
		s, err := projstore.NewStream(tx, e.log.View, workers, e.warn)
		if err != nil {
			return err
		}
		err = tx.Replay(1, 0, func(r *store.Record) error { s.Add(r); return nil })
		s.End(err != nil)
		if err != nil {
			return err
		}
		fn(tx, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
