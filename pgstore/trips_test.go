package pgstore

import (
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/pgtest"
)

// commandTrips runs fn on an engine opened on dsn as one flowctl command
// opens it (a store of its own, connecting included), and returns the
// round trips it took.
func commandTrips(t *testing.T, dsn string, readOnly bool, fn func(e *flow.Engine) error) int64 {
	t.Helper()
	st, err := Driver{}.Open(dsn, store.Options{ReadOnly: readOnly, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := flow.New(st, flow.Options{ReadOnly: readOnly, Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := fn(e); err != nil {
		t.Fatal(err)
	}
	return st.(*Store).trips()
}

// The round trips of the commands a person runs most, on a project of 200
// tasks: a remote database costs its latency for each, so that the count
// is pinned here (a change that adds a query per entity fails). Before
// the reads ahead, the held writes and one round trip a statement:
// status 226, ready 417, task show 11, task add 52; then 22, 16, 6 and
// 30; since due dates (status decodes the open tasks for overdue),
// subtasks and hooks came: 24 and 31.
func TestTrips(t *testing.T) {
	dsn := pgtest.DSN(t)
	create(t, dsn)
	for _, c := range []struct {
		name     string
		readOnly bool
		max      int64
		fn       func(e *flow.Engine) error
	}{
		{"Status", true, 24, func(e *flow.Engine) error { _, err := e.StatusFor("p", ""); return err }},
		{"TaskShow", true, 6, func(e *flow.Engine) error { _, err := e.Task("p", "T-17"); return err }},
		{"TaskAdd", false, 31, func(e *flow.Engine) error {
			_, err := e.AddTask(flow.NewTask{Project: "p", Title: "one more", Deps: []string{"T-3"}})
			return err
		}},
		{"Ready", true, 16, func(e *flow.Engine) error { _, err := e.Ready("p", false); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := commandTrips(t, dsn, c.readOnly, c.fn)
			t.Logf("%s: %d round trips", c.name, n)
			if n > c.max {
				t.Errorf("%s took %d round trips, want at most %d", c.name, n, c.max)
			}
		})
	}
}

// create makes the store at dsn with project p of 200 tasks.
func create(t *testing.T, dsn string) {
	t.Helper()
	st, err := Driver{}.Open(dsn, store.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := flow.New(st, flow.Options{Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateProject(flow.NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	var items []flow.BatchTask
	for i := range 200 {
		items = append(items, flow.BatchTask{NewTask: flow.NewTask{Project: "p", Title: fmt.Sprintf("task %d", i)}})
	}
	if _, err := e.AddTasks("p", items); err != nil {
		t.Fatal(err)
	}
}
