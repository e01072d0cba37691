package flow

import (
	"errors"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
)

func TestBatch(t *testing.T) {
	t.Run("AllCommit", func(t *testing.T) {
		e := mustOpen(t)
		if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
			t.Fatal(err)
		}
		err := e.Batch(func(b *Engine) error {
			t1, err := b.AddTask(NewTask{Project: "p", Title: "one"})
			if err != nil {
				return err
			}
			if _, err := b.AddTask(NewTask{Project: "p", Title: "two", Deps: []string{t1.ID}}); err != nil {
				return err
			}
			_, err = b.AddNote(NewNote{Project: "p", Task: t1.ID, Kind: NoteKindNote, Text: "inside a batch"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := e.Tasks("p", TaskFilter{})
		if err != nil || len(tasks) != 2 || tasks[1].Deps[0] != "T-1" {
			t.Fatalf("tasks after the batch = %v, %v", tasks, err)
		}
	})
	t.Run("NoneCommitOnError", func(t *testing.T) {
		e := mustOpen(t)
		if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
			t.Fatal(err)
		}
		before, _, _ := storeHead(e.log)
		err := e.Batch(func(b *Engine) error {
			if _, err := b.AddTask(NewTask{Project: "p", Title: "one"}); err != nil {
				return err
			}
			_, err := b.MoveTask(Move{Project: "p", ID: "T-1", To: "done"}) // todo -> done is refused
			return err
		})
		if !errors.Is(err, eventlog.ErrConflict) {
			t.Fatalf("Batch = %v, want the refused move's conflict", err)
		}
		if after, _, _ := storeHead(e.log); after != before {
			t.Fatalf("a failed batch appended: head %d -> %d", before, after)
		}
		if _, err := e.Task("p", "T-1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("T-1 after a failed batch: %v, want not found", err)
		}
	})
}
