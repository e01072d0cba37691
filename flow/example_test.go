package flow_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	_ "github.com/flowctl/flowctl/eventlog" // the bbolt backend: Open finds it by the path
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
)

// openTemp opens a new file in a temporary directory; cleanup closes the
// engine and removes the directory.
func openTemp() (e *flow.Engine, cleanup func()) {
	dir, err := os.MkdirTemp("", "flow-example")
	if err != nil {
		log.Fatal(err)
	}
	e, err = flow.Open(filepath.Join(dir, flow.DefaultDir, flow.DefaultFile), flow.Options{
		Create: true,
		Actor:  "example",
	})
	if err != nil {
		log.Fatal(err)
	}
	return e, func() { e.Close(); os.RemoveAll(dir) }
}

// Open a file (created on the first open), make a project and a task, and
// read the task back.
func Example() {
	dir, err := os.MkdirTemp("", "flow-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// Open finds the backend from the path: a file path is the bbolt
	// backend, linked in by the blank import of package eventlog.
	e, err := flow.Open(filepath.Join(dir, ".flow", "flow.db"), flow.Options{Create: true, Actor: "alice"})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	if _, err := e.CreateProject(flow.NewProject{Name: "demo"}); err != nil {
		log.Fatal(err)
	}
	t, err := e.AddTask(flow.NewTask{Project: "demo", Title: "Write the parser"})
	if err != nil {
		log.Fatal(err)
	}
	got, err := e.Task("demo", t.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.ID, got.Status, got.Title, "by", got.CreatedBy)
	// Output: T-1 todo Write the parser by alice
}

// Every write may name the version of the entity it read (the task's
// Version field, 'flowctl task show' prints it): a writer that read an
// older version gets a conflict instead of overwriting a change it has
// not seen.
func ExampleWrite() {
	e, cleanup := openTemp()
	defer cleanup()
	if _, err := e.CreateProject(flow.NewProject{Name: "demo"}); err != nil {
		log.Fatal(err)
	}
	t, err := e.AddTask(flow.NewTask{Project: "demo", Title: "Draft"})
	if err != nil {
		log.Fatal(err)
	}
	read := t.Version // what both writers read

	title := "Final"
	t, err = e.EditTask(flow.TaskEdit{Project: "demo", ID: t.ID, Title: &title, Write: flow.Write{IfVersion: read}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first writer:", t.Title, "now at version", t.Version)

	_, err = e.MoveTask(flow.Move{Project: "demo", ID: t.ID, To: "doing", Write: flow.Write{IfVersion: read}})
	fmt.Println("second writer, stale version:", errors.Is(err, store.ErrConflict), flow.ErrorCode(err))
	// Output:
	// first writer: Final now at version 2
	// second writer, stale version: true conflict
}

// Read a project as it was at a checkpoint, then roll it back there. The
// rollback is itself an event: the history keeps what was undone.
func ExampleEngine_At() {
	e, cleanup := openTemp()
	defer cleanup()
	if _, err := e.CreateProject(flow.NewProject{Name: "demo"}); err != nil {
		log.Fatal(err)
	}
	t, err := e.AddTask(flow.NewTask{Project: "demo", Title: "Migrate the schema"})
	if err != nil {
		log.Fatal(err)
	}
	cp, err := e.CreateCheckpoint(flow.NewCheckpoint{Project: "demo", Label: "before the migration"})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := e.MoveTask(flow.Move{Project: "demo", ID: t.ID, To: "doing"}); err != nil {
		log.Fatal(err)
	}

	then, err := e.At("demo", flow.Point{Checkpoint: cp.ID}).Task("demo", t.ID)
	if err != nil {
		log.Fatal(err)
	}
	now, err := e.Task("demo", t.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("at", cp.ID+":", then.Status, "- now:", now.Status)

	res, err := e.Rollback(flow.RollbackInput{Project: "demo", To: flow.Point{Checkpoint: cp.ID}, Reason: "migration failed"})
	if err != nil {
		log.Fatal(err)
	}
	now, err = e.Task("demo", t.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rolled back to seq", res.ToSeq, "- now:", now.Status, "at version", now.Version)
	// Output:
	// at C-1: todo - now: doing
	// rolled back to seq 2 - now: todo at version 3
}
