package flow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/snapshot"
)

// TestDiff_FarPointsTakeFar: on a project with snapshots every 20 of its
// events, a diff of two far points (Between declines) is answered by
// history.Far (it does not decline: no rollback, every event on its
// entity's stream), and lists what two replays compared list, for pairs
// whose span holds deltas, a full snapshot, tasks created and renamed
// after A (their titles at B: renamed in a delta's span, in the log
// after the last snapshot, or not at all), plans, approvals and exec
// records created after A and entities changed from before A.
func TestDiff_FarPointsTakeFar(t *testing.T) {
	e, head := farHistory(t)
	for n, ab := range [][2]uint64{{5, head}, {40, head}, {100, head - 3}, {60, head - 10}, {head / 2, head}, {20, 21}} {
		var x, y []Change
		err := e.view(func(tx store.Tx) error {
			_, _, err := history.Between(tx, "p", ab[0], ab[1], e.warn)
			if n == 0 && !errors.Is(err, history.ErrNotBetween) {
				return fmt.Errorf("Between answers (%v): not a far diff", err)
			}
			sa, sb, err := history.Far(tx, "p", ab[0], ab[1], e.warn)
			if err != nil {
				return err
			}
			x, _ = DiffPage(sameEncodedAll(sa, sb))
			y, _ = DiffPage(ttReplayScope(t, e.Engine, "p", ab[0]), ttReplayScope(t, e.Engine, "p", ab[1]), 0, 0)
			return nil
		})
		if err != nil {
			t.Fatalf("Far(%d, %d): %v", ab[0], ab[1], err)
		}
		if g, w := mustJSON(t, x), mustJSON(t, y); g != w {
			t.Fatalf("Far(%d, %d): %s, two replays: %s", ab[0], ab[1], g, w)
		}
		checkDiffBothWays(t, e.Engine, ab[0], ab[1])
	}
}

// TestDiff_FarReadsEveryDeltaVersion: the engine writes deltas with a
// names section (format 7), which a far diff reads without their
// bodies; the same deltas stored as format 6 (read from their bodies),
// every other one or all of them, give the same far diffs.
func TestDiff_FarReadsEveryDeltaVersion(t *testing.T) {
	e, head := farHistory(t)
	pairs := [][2]uint64{{5, head}, {40, head}, {100, head - 3}, {60, head - 10}, {head / 2, head}}
	far := func() string {
		var out []string
		err := e.view(func(tx store.Tx) error {
			for _, ab := range pairs {
				sa, sb, err := history.Far(tx, "p", ab[0], ab[1], e.warn)
				if err != nil {
					return err
				}
				x, _ := DiffPage(sameEncodedAll(sa, sb))
				out = append(out, mustJSON(t, x))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(out)
	}
	// refile stores every k-th delta of format 7 as format 6.
	refile := func(k int) int {
		n, i := 0, 0
		err := e.log.Update(func(tx store.Tx) error {
			var keys, values [][]byte
			err := tx.Scan(snapstore.Bucket, snapstore.Prefix("p"), func(key, v []byte) error {
				keys, values = append(keys, bytes.Clone(key)), append(values, bytes.Clone(v))
				return nil
			})
			if err != nil {
				return err
			}
			for j, v := range values {
				h, body, err := snapshot.Check(v)
				if err != nil || !h.HasNames() {
					continue
				}
				if i++; i%k != 0 {
					continue
				}
				old, _, err := snapshot.PackDeltaSum(h, body)
				if err != nil {
					return err
				}
				n++
				if err := tx.Put(snapstore.Bucket, keys[j], old); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	named := far()
	if n := refile(2); n == 0 {
		t.Fatal("no delta of format 7 was stored")
	}
	if mixed := far(); mixed != named {
		t.Fatalf("far diffs over deltas of formats 6 and 7:\n%s\nover format 7:\n%s", mixed, named)
	}
	refile(1)
	if old := far(); old != named {
		t.Fatalf("far diffs over deltas of format 6:\n%s\nover format 7:\n%s", old, named)
	}
	if _, err := e.VerifySnapshots("p"); err != nil {
		t.Fatalf("VerifySnapshots: %v", err)
	}
}

// TestVerifySnapshots_CatchesNamesNotTheBodys: a delta whose names
// section is another delta's, under right checksums, reads (a far diff
// trusts its head) but fails verification, and only it.
func TestVerifySnapshots_CatchesNamesNotTheBodys(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 5)
	snapsHistory(t, e.Engine)
	keys, values := snapsStored(t, e.Engine)
	var named []int
	for i, v := range values {
		if h, err := snapshot.Frame(v); err == nil && h.HasNames() {
			named = append(named, i)
		}
	}
	if len(named) < 2 {
		t.Fatalf("%d deltas with names stored", len(named))
	}
	i, j := named[len(named)-1], named[0]
	scope, seq, _ := snapstore.ParseKey(keys[i])
	for _, k := range named {
		if s, _, _ := snapstore.ParseKey(keys[k]); s == scope && k != i {
			j = k
		}
	}
	lie := withNamesOf(t, values[i], values[j])
	var r snapshot.NamesReader
	if _, _, err := r.Names(snapshot.Head(lie)); err != nil {
		t.Fatalf("the lie's head does not read: %v", err)
	}
	snapsPut(t, e.Engine, keys[i], lie)
	infos, err := e.VerifySnapshots(scope)
	if !errors.Is(err, snapshot.ErrCorrupt) {
		t.Fatalf("VerifySnapshots = %v, want a snapshot corruption", err)
	}
	for _, in := range infos {
		if (in.Seq == seq) == in.OK {
			t.Fatalf("%+v: only the delta at %d is bad", in, seq)
		}
	}
}

// withNamesOf returns the delta b (format 7) with the names section of
// the delta of, its checksums right.
func withNamesOf(t *testing.T, b, of []byte) []byte {
	t.Helper()
	section := func(b []byte) (int, int) {
		at := 160 + int(binary.BigEndian.Uint16(b[158:]))
		return at, at + 8 + int(binary.BigEndian.Uint64(b[at:]))
	}
	from, to := section(b)
	ofFrom, ofTo := section(of)
	out := slices.Concat(b[:from], of[ofFrom:ofTo], b[to:])
	headEnd := from + (ofTo - ofFrom) + 8 + 8 + 4
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	binary.BigEndian.PutUint32(out[headEnd-4:], crc32.Checksum(out[:headEnd-4], castagnoli))
	binary.BigEndian.PutUint32(out[len(out)-4:], crc32.Checksum(out[:len(out)-4], castagnoli))
	if _, _, err := snapshot.Check(out); err != nil {
		t.Fatalf("the forged delta does not check: %v", err)
	}
	return out
}

// farHistory is TestDiff_FarPointsTakeFar's project and its head.
func farHistory(t *testing.T) (*snapsEngine, uint64) {
	e := snapsOpen(t, 20)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.CreateProject(NewProject{Name: "p"}))
	for i := range 150 {
		r, err := e.AddTask(NewTask{Project: "p", Title: fmt.Sprint("task ", i)})
		if err != nil {
			t.Fatal(err)
		}
		switch i % 5 {
		case 0:
			must(e.MoveTask(Move{Project: "p", ID: r.ID, To: "doing"}))
		case 1:
			title := fmt.Sprint("renamed ", i)
			must(e.EditTask(TaskEdit{Project: "p", ID: r.ID, Title: &title}))
		case 2:
			must(e.RequestApproval(NewApproval{Project: "p", Task: r.ID, Message: fmt.Sprint("ok ", i)}))
		case 3:
			must(e.AddPlan(NewPlan{Project: "p", Title: fmt.Sprint("plan ", i)}))
		}
		if i%7 == 0 && i > 0 { // a task from before, renamed later
			title := fmt.Sprint("later ", i)
			must(e.EditTask(TaskEdit{Project: "p", ID: fmt.Sprint("T-", i/2), Title: &title}))
		}
	}
	head, _, err := storeHead(e.log)
	if err != nil {
		t.Fatal(err)
	}
	return e, head
}
