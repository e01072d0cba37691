package flow

import (
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
)

// trimCounting is a store that counts the KeepTrimmed calls made of it
// and the stops of them.
type trimCounting struct {
	store.Store
	started, stopped int
}

func (s *trimCounting) KeepTrimmed() (stop func()) {
	s.started++
	return func() { s.stopped++ }
}

// TestDiffEach_KeepsTrimmed: the streamed diff (flowctl diff's) keeps a
// store that can trim its map trimmed while it reads, and stops once it
// has read, whether it ends well or not.
func TestDiffEach_KeepsTrimmed(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), DefaultFile), store.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	tc := &trimCounting{Store: st}
	e, err := New(tc, Options{Actor: "tester", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddTask(NewTask{Project: "p", Title: "t"}); err != nil {
		t.Fatal(err)
	}
	var changes int
	err = e.DiffEach("p", Point{Seq: 1}, Point{Seq: 2}, 0, 0, func(uint64, uint64, int) error {
		if tc.started != 1 || tc.stopped != 0 {
			t.Errorf("while the diff reads: %d KeepTrimmed, %d stopped; want 1, 0", tc.started, tc.stopped)
		}
		return nil
	}, func(Change) error { changes++; return nil })
	if err != nil || changes != 1 {
		t.Fatalf("DiffEach = %v with %d changes, want nil and 1", err, changes)
	}
	if tc.started != 1 || tc.stopped != 1 {
		t.Errorf("after the diff: %d KeepTrimmed, %d stopped; want 1, 1", tc.started, tc.stopped)
	}
	if err := e.DiffEach("nope", Point{Seq: 1}, Point{Seq: 2}, 0, 0, func(uint64, uint64, int) error { return nil }, func(Change) error { return nil }); err == nil {
		t.Fatal("DiffEach of an unknown project = nil")
	}
	if tc.started != 2 || tc.stopped != 2 {
		t.Errorf("after a failed diff: %d KeepTrimmed, %d stopped; want 2, 2", tc.started, tc.stopped)
	}
}
