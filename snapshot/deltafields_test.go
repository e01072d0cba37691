package snapshot_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// testFields are the fields TestDeltaReader reads: ids, titles, fields
// an entity does not have, one that is not a string (priority) and one
// that is nil or a string (a task's claim).
var testFields = snapshot.DeltaFields{{"id", "title", "nosuch"}, {"id", "title", "priority", "claim"}, {"id", "message", "task"}, {"id", "command", "code", "task"}}

// eachEntity is what DeltaReader.EachEntity passes on of b, as strings.
func eachEntity(r *snapshot.DeltaReader, b []byte) (project bool, got []string, deleted *snapshot.Deleted, err error) {
	project, deleted, err = r.EachEntity(b, &testFields, func(kind int, fields [][]byte, bad uint) error {
		got = append(got, fmt.Sprintf("%d %q %b", kind, fields, bad))
		return nil
	})
	return project, got, deleted, err
}

// rawEntities is what EachEntity must pass on of b: the entities of
// DecodeDeltaRaw, each field read by StringFields alone.
func rawEntities(tb testing.TB, b []byte) (project bool, want []string, deleted *snapshot.Deleted) {
	tb.Helper()
	_, raw, deleted, err := snapshot.DecodeDeltaRaw(b)
	if err != nil {
		tb.Fatalf("DecodeDeltaRaw: %v", err)
	}
	for kind, list := range raw.Lists()[:4] {
		for _, e := range *list {
			fields := make([][]byte, len(testFields[kind]))
			var bad uint
			for i, k := range testFields[kind] {
				v, ok := snapshot.StringFields(e, k)
				switch {
				case !ok:
					bad |= 1 << i
				default: // %q prints nil and empty alike, as StringFields reads them
					fields[i] = []byte(v[0])
				}
			}
			want = append(want, fmt.Sprintf("%d %q %b", kind, fields, bad))
		}
	}
	return raw.Project != nil, want, deleted
}

// TestDeltaReader_EachEntityIsTheRawDelta: for chains of random deltas,
// plain and packed, read by one reader, EachEntity passes on each
// changed plan, task, approval and exec record in the body's order with
// the fields StringFields reads of its encoding, whether the project
// changed and the deletions, as DecodeDeltaRaw reads them; an error of
// each ends the read with it, and every truncation is refused.
func TestDeltaReader_EachEntityIsTheRawDelta(t *testing.T) {
	t.Parallel()
	pool := bigState(t, 40, 30)
	pool.Plans = []*projection.Plan{{Project: "big", ID: "P-1", Title: "one"}, {Project: "big", ID: "P-2", Title: ""}, {Project: "big", ID: "P-10", Title: "ten"}}
	pool.Checkpoints = []*projection.Checkpoint{{Project: "big", ID: "C-1", Label: "a"}}
	var r snapshot.DeltaReader
	read := 0
	for round := range 30 {
		rng := rand.New(rand.NewPCG(uint64(round), 12))
		a, b := randomState(t, rng, pool), randomState(t, rng, pool)
		if rng.IntN(3) == 0 {
			b.Project.Description += " changed"
		}
		d := snapshot.Diff(a, b)
		h := snapshot.Header{Scope: "big", Seq: 2, BaseSeq: 1}
		plain := mustEncodeDelta(t, h, d)
		changed := rawOf(d.Changed)
		if d.Changed.Project == nil {
			changed.Project = nil
		}
		packed, _, err := snapshot.PackDelta(h, snapshot.AppendDeltaBody(nil, changed, &d.Deleted))
		if err != nil {
			t.Fatal(err)
		}
		for _, blob := range [][]byte{plain, packed} {
			wantProject, want, wantDeleted := rawEntities(t, blob)
			project, got, deleted, err := eachEntity(&r, blob)
			if err != nil {
				t.Fatalf("round %d: EachEntity: %v", round, err)
			}
			if project != wantProject || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(deleted, wantDeleted) {
				t.Fatalf("round %d: EachEntity = %v %q %v\nwant %v %q %v", round, project, got, deleted, wantProject, want, wantDeleted)
			}
			read += len(got)
		}
	}
	if read == 0 {
		t.Fatal("no entity was read")
	}
	b := smallDelta(t)
	stop := errors.New("stop")
	if _, _, err := r.EachEntity(b, &testFields, func(int, [][]byte, uint) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("EachEntity returned %v, want each's error", err)
	}
	for n := range len(b) - 1 {
		if _, _, _, err := eachEntity(&r, b[:n]); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("a delta cut to %d bytes read: %v", n, err)
		}
	}
	if _, _, _, err := eachEntity(&r, smallSnapshot(t)); !errors.Is(err, snapshot.ErrCorrupt) {
		t.Fatalf("a full snapshot read as a delta: %v", err)
	}
}

// FuzzDeltaReaderBody wraps arbitrary bytes as a delta's body with every
// length, hash and checksum right: EachEntity never panics, and refuses
// a body exactly when DecodeDeltaRaw does.
func FuzzDeltaReaderBody(f *testing.F) {
	d := smallDelta(f)
	n := int(binaryBE16(d[offDeltaScopeLen:]))
	f.Add(d[offDeltaScope+n+8 : len(d)-4])
	f.Add([]byte{0x80, 0, 0, 0, 0, 0})
	var r snapshot.DeltaReader
	f.Fuzz(func(t *testing.T, body []byte) {
		b := rebody(d, body)
		_, _, _, err := eachEntity(&r, b)
		if err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("EachEntity = %v", err)
		}
		if _, _, _, rawErr := snapshot.DecodeDeltaRaw(b); (err == nil) != (rawErr == nil) {
			t.Fatalf("EachEntity = %v, DecodeDeltaRaw = %v", err, rawErr)
		}
	})
}

func binaryBE16(b []byte) uint16 { return uint16(b[0])<<8 | uint16(b[1]) }
