package cache

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// flow's TestCache_* check the cache through the engine, on the logs its
// commands write; these check Sync on a log written by hand.

// mustOpen opens a new log in tb's temporary directory.
func mustOpen(tb testing.TB) store.Store {
	tb.Helper()
	l, err := eventlog.Open(filepath.Join(tb.TempDir(), "log.db"), eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	s := l.Store()
	tb.Cleanup(func() { s.Close() })
	return s
}

// appendTo appends one event of type typ of project p to stream.
func appendTo(tb testing.TB, s store.Store, stream, typ string) {
	tb.Helper()
	err := s.Update(func(tx store.Tx) error {
		_, err := tx.Append(stream, store.Any, store.Event{Type: typ, Project: "p"})
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// syncTo brings c to the head of s and returns it.
func syncTo(tb testing.TB, s store.Store, c *Cache) uint64 {
	tb.Helper()
	var head uint64
	if err := s.View(func(tx store.Tx) (err error) { head, err = c.Sync(tx); return err }); err != nil {
		tb.Fatal(err)
	}
	return head
}

func TestCache_Sync(t *testing.T) {
	t.Parallel()
	task := func(id string) string { return projection.TaskStream("p", id) }
	// fill returns a cache at the head of a log with project p and tasks
	// T-1 and T-2, holding all three.
	fill := func(t *testing.T) (store.Store, *Cache) {
		s := mustOpen(t)
		appendTo(t, s, projection.ProjectStream("p"), projection.TypeProjectCreated)
		appendTo(t, s, task("T-1"), projection.TypeTaskCreated)
		appendTo(t, s, task("T-2"), projection.TypeTaskCreated)
		c := NewChecking(16, true)
		head := syncTo(t, s, c)
		c.Add(head, ProjectKey("p"), &projection.Project{Name: "p"})
		c.Add(head, TaskKey("p", "T-1"), &projection.Task{ID: "T-1"})
		c.Add(head, TaskKey("p", "T-2"), &projection.Task{ID: "T-2"})
		return s, c
	}
	held := func(c *Cache, head uint64, keys ...Key) (got []bool) {
		for _, k := range keys {
			_, ok := c.Get(head, k)
			got = append(got, ok)
		}
		return got
	}
	all := []Key{ProjectKey("p"), TaskKey("p", "T-1"), TaskKey("p", "T-2")}
	for _, tt := range []struct {
		name   string
		stream string
		typ    string
		want   []bool // whether p, T-1, T-2 are still held
	}{
		{"EvictsWhatAnEventTouched", task("T-1"), projection.TypeTaskUpdated, []bool{false, false, true}},
		{"PurgesOnRollback", projection.ProjectStream("p"), projection.TypeRollbackApplied, []bool{false, false, false}},
		{"PurgesOnUnknownType", task("T-1"), "x.unknown", []bool{false, false, false}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, c := fill(t)
			appendTo(t, s, tt.stream, tt.typ)
			head := syncTo(t, s, c)
			if head != 4 || c.Head() != 4 {
				t.Fatalf("Sync = %d, Head = %d; want 4", head, c.Head())
			}
			if got := held(c, head, all...); !slices.Equal(got, tt.want) {
				t.Fatalf("held after %s on %s = %v, want %v", tt.typ, tt.stream, got, tt.want)
			}
		})
	}
	t.Run("AtTheHeadKeepsAll", func(t *testing.T) {
		s, c := fill(t)
		head := syncTo(t, s, c)
		if got := held(c, head, all...); !slices.Equal(got, []bool{true, true, true}) {
			t.Fatalf("held = %v, want all", got)
		}
	})
}

func TestCache_AddClipsSlices(t *testing.T) {
	t.Parallel()
	c := NewChecking(4, true)
	tags := make([]string, 1, 4)
	tags[0] = "a"
	c.Add(0, TaskKey("p", "T-1"), &projection.Task{ID: "T-1", Tags: tags})
	v, _ := c.Get(0, TaskKey("p", "T-1"))
	if got := v.(*projection.Task).Tags; cap(got) != len(got) {
		t.Fatalf("a cached task's tags have capacity %d for %d: an append would write into the shared array", cap(got), len(got))
	}
}
