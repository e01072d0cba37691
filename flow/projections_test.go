package flow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// setProjectionVersion overwrites the stored projection version, as a
// file written by another flowctl would have it.
func setProjectionVersion(t *testing.T, e *Engine, v uint32) {
	t.Helper()
	err := e.log.Update(func(tx store.Tx) error {
		return tx.Put(projstore.BucketMeta, projstore.KeyVersion, binary.BigEndian.AppendUint32(nil, v))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func seedTasks(t *testing.T, e *Engine) {
	t.Helper()
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"a", "b"} {
		if _, err := e.AddTask(NewTask{Project: "p", Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.MoveTask(Move{Project: "p", ID: "T-2", To: "doing"}); err != nil {
		t.Fatal(err)
	}
}

func TestProjections_StaleVersion(t *testing.T) {
	t.Run("ReadOnlyReadsAReplay", func(t *testing.T) {
		e := mustOpen(t)
		seedTasks(t, e)
		setProjectionVersion(t, e, 999)
		path := e.Path()
		e.Close()
		ro, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		task, err := ro.Task("p", "T-2")
		if err != nil || task.Status != "doing" {
			t.Fatalf("Task = %+v, %v; want T-2 doing from a replay", task, err)
		}
		rep, err := ro.Verify()
		if err != nil || rep.Projections != "stale" {
			t.Fatalf("Verify = %+v, %v; want projections stale", rep, err)
		}
		ro.Close()
		if err := e.acquire(); err != nil { // for the cleanup's Verify
			t.Fatal(err)
		}
	})
	t.Run("WritableOpenRebuilds", func(t *testing.T) {
		e := mustOpen(t)
		seedTasks(t, e)
		setProjectionVersion(t, e, 999)
		if err := e.log.Update(func(tx store.Tx) error { return tx.DeleteBucket(projstore.BucketTasks) }); err != nil {
			t.Fatal(err)
		}
		e.Close()
		if err := e.acquire(); err != nil {
			t.Fatal(err)
		}
		if err := e.syncProjections(); err != nil {
			t.Fatal(err)
		}
		rep, err := e.Verify()
		if err != nil || rep.Projections != "ok" {
			t.Fatalf("Verify after reopen = %+v, %v; want rebuilt projections", rep, err)
		}
		if task, err := e.Task("p", "T-1"); err != nil || task.Title != "a" {
			t.Fatalf("Task after rebuild = %+v, %v", task, err)
		}
	})
}

func TestVerify_ProjectionDamage(t *testing.T) {
	e := mustOpen(t)
	seedTasks(t, e)
	b, err := marshal(struct{ ID string }{"T-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.log.Update(func(tx store.Tx) error { return tx.Put(projstore.BucketTasks, []byte("p/T-1"), b) }); err != nil {
		t.Fatal(err)
	}
	_, err = e.Verify()
	var ce *eventlog.CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("Verify = %v, want a corruption naming the entity", err)
	}
	if _, err := e.Rebuild(); err != nil {
		t.Fatal(err)
	}
	// The cleanup's Verify now passes: rebuild repaired the projection.
}

func TestRebuild_ReportsProgress(t *testing.T) {
	e := mustOpen(t)
	seedTasks(t, e)
	var calls [][2]uint64
	e.opts.Progress = func(done, total uint64) { calls = append(calls, [2]uint64{done, total}) }
	rep, err := e.Rebuild()
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || calls[len(calls)-1] != [2]uint64{rep.Events, rep.Events} {
		t.Fatalf("progress calls %v, want the last to be %d of %d", calls, rep.Events, rep.Events)
	}
}

// unsealProjections makes e's file as a flowctl before the checksums
// wrote it: every entity and index entry without its seal, and proj_meta
// holding only projection.Version.
func unsealProjections(t *testing.T, e *Engine) {
	t.Helper()
	err := e.log.Update(func(tx store.Tx) error {
		for _, b := range append(slices.Clone(projstore.EntityBuckets), projstore.BucketSummaries) {
			old := map[string][]byte{}
			if err := tx.Scan(b, nil, func(k, v []byte) error {
				old[string(k)] = bytes.Clone(v[:len(v)-projstore.SealSize])
				return nil
			}); err != nil {
				return err
			}
			for k, v := range old {
				if err := tx.Put(b, []byte(k), v); err != nil {
					return err
				}
			}
		}
		return tx.Put(projstore.BucketMeta, projstore.KeyVersion, binary.BigEndian.AppendUint32(nil, projection.Version))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestProjections_UnsealedFile: a file whose projection records predate
// the checksums is read through a replay by a read-only engine and has its
// projections rebuilt, sealed, by a writable one; never a checksum error.
func TestProjections_UnsealedFile(t *testing.T) {
	e := mustOpen(t)
	seedTasks(t, e)
	unsealProjections(t, e)
	path := e.Path()
	e.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if tasks, err := ro.Tasks("p", TaskFilter{}); err != nil || len(tasks) != 2 {
		t.Fatalf("read-only Tasks = %d tasks, %v; want 2 from a replay", len(tasks), err)
	}
	ro.Close()
	if err := e.acquire(); err != nil {
		t.Fatal(err)
	}
	if err := e.syncProjections(); err != nil {
		t.Fatal(err)
	}
	if st, err := e.Status("p"); err != nil || st.Tasks.Total != 2 {
		t.Fatalf("Status after the writable open = %+v, %v; want 2 tasks", st, err)
	}
	// The cleanup's Verify checks that the rebuilt records are sealed.
}
