package projection

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
)

// TestApply_KeepsNothingOfTheRecord: a replay (eventlog's Replay) lends
// Apply one record whose Data is valid only during the call and which the
// next record overwrites. The fold must copy what it keeps. Folding a
// realistic history through one reused record whose payload buffer is
// scribbled over after every call must give the state of an ordinary
// fold, byte for byte.
func TestApply_KeepsNothingOfTheRecord(t *testing.T) {
	records := genHistory(t, 3, 6000)
	want := replay(t, records)

	got := NewMemory()
	var lent eventlog.Record
	var buf []byte
	for _, r := range records {
		lent = *r
		buf = append(buf[:0], r.Data...)
		lent.Data = buf
		if err := Apply(got, &lent); err != nil {
			t.Fatalf("seq %d: %v", r.Seq, err)
		}
		for i := range buf {
			buf[i] = 0xc1 // never used in msgpack
		}
		lent = eventlog.Record{Stream: "x", Event: eventlog.Event{Type: "x", Actor: "x", Project: "x"}}
	}
	projects := make([]string, 0, len(want.Projects))
	for name := range want.Projects {
		projects = append(projects, name)
	}
	if len(projects) == 0 {
		t.Fatal("the history has no projects")
	}
	for _, p := range projects {
		w, g := AppendScope(nil, want.Scope(p)), AppendScope(nil, got.Scope(p))
		if !bytes.Equal(w, g) {
			t.Errorf("project %s: the state folded from lent records differs from an ordinary fold (%s)", p, firstDiff(w, g))
		}
	}
}

func firstDiff(a, b []byte) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("first at byte %d of %d/%d", i, len(a), len(b))
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(a), len(b))
}
