package snapshot_test

import (
	"testing"

	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// TestUintField_ReadsMetaSeq: an entity's encoding gives its seq and
// version as the entity holds them, whatever their size; a missing key
// is 0, a string field or a non-map is not ok.
func TestUintField_ReadsMetaSeq(t *testing.T) {
	for _, seq := range []uint64{0, 1, 127, 128, 255, 256, 65535, 65536, 1 << 32, 1<<64 - 1} {
		task := &projection.Task{ID: "T-1", Title: "t", Status: "todo", Meta: projection.Meta{Seq: seq, Version: seq / 2}}
		e, ok := projection.AppendEntity(nil, task)
		if !ok {
			t.Fatal("a task that does not encode")
		}
		if got, ok := snapshot.UintField(e, "seq"); !ok || got != seq {
			t.Errorf("seq %d: got %d, %v", seq, got, ok)
		}
		if got, ok := snapshot.UintField(e, "version"); !ok || got != seq/2 {
			t.Errorf("version %d: got %d, %v", seq/2, got, ok)
		}
		if got, ok := snapshot.UintField(e, "no such key"); !ok || got != 0 {
			t.Errorf("missing key: got %d, %v", got, ok)
		}
		if _, ok := snapshot.UintField(e, "title"); ok {
			t.Error("a string field read as a number")
		}
	}
	if _, ok := snapshot.UintField([]byte{0x93, 1, 2, 3}, "seq"); ok {
		t.Error("an array read as a map")
	}
}
