package projection

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// TestExecAt_FoldsAsApply: the exec ExecAt makes of the event that made
// it is, byte for byte, the one the fold put.
func TestExecAt_FoldsAsApply(t *testing.T) {
	records := genHistory(t, 2, 5000)
	mem := NewMemory()
	for _, r := range records {
		if err := Apply(mem, r); err != nil {
			t.Fatal(err)
		}
	}
	if len(mem.Execs) == 0 {
		t.Fatal("the history has no exec records")
	}
	for k, want := range mem.Execs {
		got, err := ExecAt(records[want.Seq-1], want.ID, want.Version)
		if err != nil {
			t.Fatalf("ExecAt(%s): %v", k, err)
		}
		if g, w := entityBytes(got), entityBytes(want); !bytes.Equal(g, w) {
			t.Fatalf("ExecAt(%s) = %+v, want %+v", k, got, want)
		}
	}
	// Another exec's event is not this one's.
	for _, x := range mem.Execs {
		if _, err := ExecAt(records[x.Seq-1], "X-999999", x.Version); !errors.Is(err, ErrInconsistent) {
			t.Fatalf("ExecAt of another id = %v, want ErrInconsistent", err)
		}
		break
	}
}

// TestExecAt_Restored: an exec a rollback.applied put back is the one
// the fold put.
func TestExecAt_Restored(t *testing.T) {
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(seq uint64, stream, typ string, payload any) *store.Record {
		return &store.Record{Seq: seq, Stream: stream, Version: seq, Event: store.Event{Type: typ, Schema: SchemaVersion,
			Time: at.Add(time.Duration(seq) * time.Second), Actor: "agent", Project: "p", Data: marshalPayload(t, payload)}}
	}
	x := ExecRecorded{ID: "X-1", Command: "go test", Stdout: Output{Head: "ok", Bytes: 2}}
	records := []*store.Record{
		rec(1, "project/p", TypeProjectCreated, &ProjectCreated{Name: "p"}),
		rec(2, "project/p", TypeExecRecorded, &x),
	}
	mem := NewMemory()
	for _, r := range records {
		if err := Apply(mem, r); err != nil {
			t.Fatal(err)
		}
	}
	old := *mem.Execs[Key("p", "X-1")]
	old.Command = "go vet" // a restore puts back what the payload holds
	records = append(records, rec(3, "project/p", TypeRollbackApplied, &RollbackApplied{ToSeq: 2, Execs: []Exec{old}}))
	if err := Apply(mem, records[2]); err != nil {
		t.Fatal(err)
	}
	want := mem.Execs[Key("p", "X-1")]
	if want.Seq != 3 || want.Command != "go vet" {
		t.Fatalf("the fold restored %+v", want)
	}
	got, err := ExecAt(records[2], "X-1", want.Version)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := entityBytes(got), entityBytes(want); !bytes.Equal(g, w) {
		t.Fatalf("ExecAt = %+v, want %+v", got, want)
	}
}

func entityBytes(v any) []byte {
	b, _ := AppendEntity(nil, v)
	return b
}
