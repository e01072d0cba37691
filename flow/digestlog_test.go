package flow

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
)

// digestFixture writes project p with a task, notes of both kinds on the
// task and on the project, and returns the engine.
func digestFixture(t *testing.T) *Engine {
	t.Helper()
	path := filepath.Join(t.TempDir(), DefaultDir, DefaultFile)
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	mustDo(t)(e.CreateProject(NewProject{Name: "p"}))
	mustDo(t)(e.AddTask(NewTask{Project: "p", Title: "one"}))
	for _, n := range []NewNote{{Task: "T-1", Kind: NoteKindMemory, Text: "a"}, {Text: "b"}, {Kind: NoteKindMemory, Text: "c"}, {Task: "T-1", Text: "d"}} {
		n.Project = "p"
		mustDo(t)(e.AddNote(n))
	}
	return e
}

func digestLog(t *testing.T, e *Engine) (ProjectLog, []uint64) {
	t.Helper()
	var log ProjectLog
	var memory []uint64
	err := e.Read(func(r *Reader) error {
		var err error
		log, err = r.ProjectLog("p", func(seq uint64) error { memory = append(memory, seq); return nil })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return log, memory
}

func TestEngine_ProjectLog(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := digestFixture(t)
		log, memory := digestLog(t, e)
		// project.created, task.created, 4 notes; streams: the project's and T-1's
		if want := (ProjectLog{Events: 6, Streams: 2, Memory: 2}); log != want {
			t.Errorf("log = %+v, want %+v", log, want)
		}
		if len(memory) != 2 || memory[0] != 5 || memory[1] != 3 {
			t.Errorf("memory notes = %v, want [5 3] (newest first)", memory)
		}
		if _, err := e.Verify(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("RebuildWritesIt", func(t *testing.T) {
		e := digestFixture(t)
		var before, after projstore.DigestMark
		_ = e.log.View(func(tx store.Tx) error { before, _ = projstore.ReadDigestMark(tx, "p"); return nil })
		_, wantMemory := digestLog(t, e)
		if _, err := e.Rebuild(); err != nil {
			t.Fatal(err)
		}
		_ = e.log.View(func(tx store.Tx) error { after, _ = projstore.ReadDigestMark(tx, "p"); return nil })
		if after != before || after.Seq == 0 {
			t.Errorf("mark after rebuild = %+v, want %+v as before", after, before)
		}
		var indexed []uint64
		_ = e.log.View(func(tx store.Tx) error {
			return projstore.DigestMemory(tx, "p", func(seq uint64) error { indexed = append(indexed, seq); return nil })
		})
		if !slices.Equal(indexed, wantMemory) {
			t.Errorf("memory notes indexed after rebuild = %v, want %v", indexed, wantMemory)
		}
		if _, err := e.Verify(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ImportWritesIt", func(t *testing.T) {
		src := digestFixture(t)
		var want projstore.DigestMark
		_ = src.log.View(func(tx store.Tx) error { want, _ = projstore.ReadDigestMark(tx, "p"); return nil })
		var exported bytes.Buffer
		if _, err := src.Export(&exported, 0); err != nil {
			t.Fatal(err)
		}
		for _, batch := range []int{importBatch, 2} { // one transaction; staged, several
			dst := mustOpen(t)
			if _, err := dst.importWith(bytes.NewReader(exported.Bytes()), importLimits{line: maxImportLine, batch: batch, batchBytes: importBatchBytes}); err != nil {
				t.Fatal(err)
			}
			var got projstore.DigestMark
			_ = dst.view(func(tx store.Tx) error { got, _ = projstore.ReadDigestMark(tx, "p"); return nil })
			if got != want {
				t.Errorf("batches of %d: mark after the import = %+v, want the source's %+v", batch, got, want)
			}
		}
	})
	t.Run("WithoutIndex", func(t *testing.T) {
		// A file no command of this flowctl wrote to has no index: a
		// reader reads the project's events instead, and the next
		// command writes it.
		e := digestFixture(t)
		wantLog, wantMemory := digestLog(t, e)
		if err := e.log.Update(func(tx store.Tx) error { return projstore.DropDigestLog(tx, "p") }); err != nil {
			t.Fatal(err)
		}
		var m projstore.DigestMark
		_ = e.log.View(func(tx store.Tx) error { m, _ = projstore.ReadDigestMark(tx, "p"); return nil })
		if m != (projstore.DigestMark{}) {
			t.Fatalf("mark after the drop = %+v, want none", m)
		}
		log, memory := digestLog(t, e)
		if log != wantLog || len(memory) != len(wantMemory) || memory[0] != wantMemory[0] || memory[1] != wantMemory[1] {
			t.Errorf("without the index: %+v %v, want %+v %v", log, memory, wantLog, wantMemory)
		}
		mustDo(t)(e.AddNote(NewNote{Project: "p", Kind: NoteKindMemory, Text: "e"}))
		_ = e.log.View(func(tx store.Tx) error { m, _ = projstore.ReadDigestMark(tx, "p"); return nil })
		if want := (projstore.DigestMark{Seq: 7, Events: 7, Streams: 2, Memory: 3}); m != want {
			t.Errorf("mark after a command = %+v, want %+v", m, want)
		}
		if _, err := e.Verify(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Batch", func(t *testing.T) {
		// A batch counts its events as it appends them, after catching
		// up from the mark a rebuild dropped, and writes the index once
		// at its end: what a replay of the log counts.
		e := digestFixture(t)
		if _, err := e.Rebuild(); err != nil {
			t.Fatal(err)
		}
		err := e.Batch(func(b *Engine) error {
			for _, n := range []NewNote{{Kind: NoteKindMemory, Text: "e"}, {Text: "f"}, {Task: "T-1", Kind: NoteKindMemory, Text: "g"}} {
				n.Project = "p"
				if _, err := b.AddNote(n); err != nil {
					return err
				}
			}
			_, err := b.AddTask(NewTask{Project: "p", Title: "two"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var m projstore.DigestMark
		_ = e.log.View(func(tx store.Tx) error { m, _ = projstore.ReadDigestMark(tx, "p"); return nil })
		if want := (projstore.DigestMark{Seq: 10, Events: 10, Streams: 3, Memory: 4}); m != want {
			t.Errorf("mark after a batch = %+v, want %+v", m, want)
		}
		log, memory := digestLog(t, e)
		if want := (ProjectLog{Events: 10, Streams: 3, Memory: 4}); log != want || !slices.Equal(memory, []uint64{9, 7, 5, 3}) {
			t.Errorf("log = %+v %v, want %+v [9 7 5 3]", log, memory, want)
		}
		if _, err := e.Verify(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ForeignMark", func(t *testing.T) {
		// A mark past the project's events is not this log's: the next
		// command drops the index and counts the project from its start.
		e := digestFixture(t)
		err := e.log.Update(func(tx store.Tx) error {
			k := []byte("p\x00\x00")
			b := make([]byte, 32)
			b[7], b[15] = 99, 99
			return tx.Put(projstore.BucketDigestLog, k, projstore.Seal(k, b))
		})
		if err != nil {
			t.Fatal(err)
		}
		mustDo(t)(e.AddNote(NewNote{Project: "p", Text: "e"}))
		var m projstore.DigestMark
		_ = e.log.View(func(tx store.Tx) error { m, _ = projstore.ReadDigestMark(tx, "p"); return nil })
		if want := (projstore.DigestMark{Seq: 7, Events: 7, Streams: 2, Memory: 2}); m != want {
			t.Errorf("mark = %+v, want %+v", m, want)
		}
		if _, err := e.Verify(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("VerifyFindsDamage", func(t *testing.T) {
		for name, damage := range map[string]func(tx store.Tx) error{
			"count": func(tx store.Tx) error {
				m, err := projstore.ReadDigestMark(tx, "p")
				if err != nil {
					return err
				}
				m.Memory++
				k := []byte("p\x00\x00")
				b := make([]byte, 0, 32)
				for _, n := range []uint64{m.Seq, m.Events, m.Streams, m.Memory} {
					b = append(b, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
				}
				return tx.Put(projstore.BucketDigestLog, k, projstore.Seal(k, b))
			},
			"memory note": func(tx store.Tx) error {
				var first []byte
				_ = tx.Scan(projstore.BucketDigestLog, projstore.DigestMemoryPrefix("p"), func(k, v []byte) error {
					first = k
					return store.ErrStop
				})
				return tx.Delete(projstore.BucketDigestLog, first)
			},
		} {
			t.Run(name, func(t *testing.T) {
				e := digestFixture(t)
				if err := e.log.Update(damage); err != nil {
					t.Fatal(err)
				}
				if _, err := e.Verify(); !errors.Is(err, store.ErrCorrupt) {
					t.Errorf("Verify = %v, want ErrCorrupt", err)
				}
			})
		}
	})
}

func TestReader_ProjectEventsBack(t *testing.T) {
	e := mustOpen(t)
	for _, p := range []string{"p", "q"} {
		mustDo(t)(e.CreateProject(NewProject{Name: p}))
	}
	for i := range 400 { // more seqs than the first windows hold, the projects interleaved
		mustDo(t)(e.AddTask(NewTask{Project: []string{"p", "q", "q"}[i%3], Title: "t"}))
	}
	head := uint64(402)
	for _, until := range []uint64{head, 300, 2, 0} {
		want := seqs(collect(t, e, Filter{Project: "p", UntilSeq: max(until, 1)}))
		if until == 0 {
			want = nil
		}
		slices.Reverse(want)
		var got []uint64
		err := e.Read(func(r *Reader) error {
			return r.ProjectEventsBack("p", until, func(ev Event) error {
				if ev.Project != "p" || len(ev.Raw) == 0 {
					t.Errorf("event %d: project %q, %d bytes of payload", ev.Seq, ev.Project, len(ev.Raw))
				}
				got = append(got, ev.Seq)
				return nil
			})
		})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("until %d: %v, %v; want %v", until, got, err, want)
		}
	}
	var got []uint64
	err := e.Read(func(r *Reader) error {
		return r.ProjectEventsBack("q", head, func(ev Event) error {
			if got = append(got, ev.Seq); len(got) == 3 {
				return ErrStop
			}
			return nil
		})
	})
	if err != nil || !slices.Equal(got, []uint64{401, 400, 398}) {
		t.Errorf("q, stopped after 3: %v, %v", got, err)
	}
}
