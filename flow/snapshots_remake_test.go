package flow

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// snapsOlder writes snapsHistory into a new engine that snapshots every
// `every` events, its snapshots and summaries stamped with another fold
// version, as a flowctl before a bump of projection.Version wrote them.
// Not parallel: the stamp is the package's (snapstore.SetWriteVersion).
func snapsOlder(t *testing.T, every int) *snapsEngine {
	t.Helper()
	e := snapsOpen(t, every)
	old := snapstore.SetWriteVersion(projection.Version - 1)
	defer snapstore.SetWriteVersion(old)
	snapsHistory(t, e.Engine)
	return e
}

// snapsSummaries returns the status summary stored with each snapshot of
// infos, by project@seq (nil: none, or none that fits).
func snapsSummaries(t *testing.T, e *Engine, infos []SnapshotInfo) map[string]*snapstore.Summary {
	t.Helper()
	out := map[string]*snapstore.Summary{}
	err := e.view(func(tx store.Tx) error {
		for _, in := range infos {
			s, err := snapstore.NearestSummary(tx, in.Project, in.Seq, func(string, ...any) {})
			if err != nil {
				return err
			}
			if s != nil && s.Seq != in.Seq {
				s = nil
			}
			out[fmt.Sprintf("%s@%d", in.Project, in.Seq)] = s
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRebuild_RemakesSnapshotsOfAnotherFoldVersion: after a rebuild,
// every snapshot an older fold version made is made again at its seq,
// in this fold: it verifies, a delta chain resolves, each has the status
// summary a file written by this binary has, and reads at every point
// equal a replay of the log, starting from the re-made snapshots.
func TestRebuild_RemakesSnapshotsOfAnotherFoldVersion(t *testing.T) {
	for _, via := range []string{"Rebuild", "WritableOpen"} {
		t.Run(via, func(t *testing.T) {
			e := snapsOlder(t, 3)
			before := mustSnapshots(t, e.Engine, "")
			for _, in := range before {
				if in.OK || !strings.Contains(in.Problem, "fold version") {
					t.Fatalf("an older fold's snapshot is listed %+v: want it bad for its fold version", in)
				}
			}
			if len(before) < 6 {
				t.Fatalf("%d snapshots: want several per project", len(before))
			}
			switch via {
			case "Rebuild":
				if _, err := e.Rebuild(); err != nil {
					t.Fatal(err)
				}
			case "WritableOpen": // what the first open after a version bump does
				setProjectionVersion(t, e.Engine, projection.Version-1)
				if err := e.syncProjections(); err != nil {
					t.Fatal(err)
				}
			}
			after, err := e.VerifySnapshots("")
			if err != nil {
				t.Fatalf("VerifySnapshots after the rebuild: %v", err)
			}
			if len(after) != len(before) {
				t.Fatalf("%d snapshots after the rebuild, %d before", len(after), len(before))
			}
			deltas := 0
			for i, in := range after {
				if !in.OK || in.ProjectionVersion != projection.Version || in.Project != before[i].Project || in.Seq != before[i].Seq {
					t.Fatalf("snapshot %d after the rebuild = %+v, before %+v", i, in, before[i])
				}
				if in.Kind == "delta" {
					deltas++
				}
			}
			if deltas == 0 {
				t.Fatal("no delta was re-made: want chains, as Put writes them")
			}

			// The summaries are those of a file this binary wrote.
			cur := snapsOpen(t, 3)
			snapsHistory(t, cur.Engine)
			want := snapsSummaries(t, cur.Engine, mustSnapshots(t, cur.Engine, ""))
			got := snapsSummaries(t, e.Engine, after)
			for k, s := range got {
				if s == nil || !reflect.DeepEqual(s, want[k]) {
					t.Fatalf("status summary at %s = %+v, want %+v", k, s, want[k])
				}
			}

			// Reads start from the re-made snapshots, and are right.
			head := snapsHead(t, e.Engine)
			err = e.view(func(tx store.Tx) error {
				for _, p := range []string{"p", "q"} {
					_, at, err := snapstore.Nearest(tx, p, head, func(format string, args ...any) {
						t.Errorf("Nearest(%s): "+format, append([]any{p}, args...)...)
					})
					if err != nil {
						return err
					}
					if last := lastSnapshot(after, p); at != last {
						t.Errorf("Nearest(%s) starts at %d, want the re-made snapshot at %d", p, at, last)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			n := len(e.warned())
			snapsSameReads(t, e.Engine, snapsReference(t, e.Engine))
			if w := e.warned()[n:]; len(w) != 0 {
				t.Fatalf("reads after the rebuild warned: %q", w)
			}

			// A second rebuild has nothing to re-make: the snapshots stay.
			_, values := snapsStored(t, e.Engine)
			if _, err := e.Rebuild(); err != nil {
				t.Fatal(err)
			}
			if _, again := snapsStored(t, e.Engine); !reflect.DeepEqual(again, values) {
				t.Fatal("a second rebuild changed the snapshots")
			}
		})
	}
}

func lastSnapshot(infos []SnapshotInfo, project string) uint64 {
	var seq uint64
	for _, in := range infos {
		if in.Project == project {
			seq = max(seq, in.Seq)
		}
	}
	return seq
}
