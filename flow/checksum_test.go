package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
)

// checksumReads are the engine's reads of the status fixture's project:
// every list, every entity, ready, status. Each returns its result as
// JSON, to compare with the undamaged file's.
var checksumReads = map[string]func(e *Engine) (any, error){
	"Projects":    func(e *Engine) (any, error) { return e.Projects() },
	"Project":     func(e *Engine) (any, error) { return e.Project("alpha") },
	"Tasks":       func(e *Engine) (any, error) { return e.Tasks("alpha", TaskFilter{}) },
	"Ready":       func(e *Engine) (any, error) { return e.Ready("alpha", false) },
	"ReadyAll":    func(e *Engine) (any, error) { return e.Ready("alpha", true) },
	"Status":      func(e *Engine) (any, error) { return e.Status("alpha") },
	"Approvals":   func(e *Engine) (any, error) { return e.Approvals("alpha", ApprovalFilter{}) },
	"Approval":    func(e *Engine) (any, error) { return e.Approval("alpha", "A-1") },
	"Plans":       func(e *Engine) (any, error) { return e.Plans("alpha") },
	"Execs":       func(e *Engine) (any, error) { return e.Execs("alpha", ExecFilter{}) },
	"Checkpoints": func(e *Engine) (any, error) { return e.Checkpoints("alpha") },
	"TaskEach": func(e *Engine) (any, error) {
		var out []any
		for i := 1; i <= 8; i++ {
			t, err := e.Task("alpha", fmt.Sprintf("T-%d", i))
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	},
}

// checksumFixture is the status fixture with a checkpoint, in a closed
// file, and the JSON of every read of it.
func checksumFixture(t *testing.T) (path string, want map[string]string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "fixture.db")
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	statusFixture(t, e)
	if _, err := e.CreateCheckpoint(NewCheckpoint{Project: "alpha", Label: "c"}); err != nil {
		t.Fatal(err)
	}
	want = map[string]string{}
	for name, read := range checksumReads {
		v, err := read(e)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want[name] = mustJSON(t, v)
	}
	return path, want
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// projRecord is one stored projection record.
type projRecord struct{ bucket, key string }

func (r projRecord) String() string { return fmt.Sprintf("%s %q", r.bucket, r.key) }

// projRecords lists every record of the entity buckets and the status
// index of the file at path.
func projRecords(t *testing.T, path string) []projRecord {
	t.Helper()
	l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []projRecord
	err = l.Store().View(func(tx store.Tx) error {
		for _, b := range append(projstore.EntityBuckets[:len(projstore.EntityBuckets):len(projstore.EntityBuckets)], projstore.BucketSummaries) {
			if err := tx.Scan(b, nil, func(k, _ []byte) error {
				out = append(out, projRecord{b, string(k)})
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// damageFunc changes the record r in a write transaction.
type damageFunc func(tx store.Tx, r projRecord) error

// flipValue flips every bit of the byte at i of the record's value (a
// negative i counts from the end).
func flipValue(i int) damageFunc {
	return func(tx store.Tx, r projRecord) error {
		v, err := tx.Get(r.bucket, []byte(r.key))
		if err != nil {
			return err
		}
		v = append([]byte(nil), v...)
		v[(i+len(v))%len(v)] ^= 0xff
		return tx.Put(r.bucket, []byte(r.key), v)
	}
}

// flipKey moves the record to its key with the last byte changed.
func flipKey(tx store.Tx, r projRecord) error {
	v, err := tx.Get(r.bucket, []byte(r.key))
	if err != nil {
		return err
	}
	v = append([]byte(nil), v...)
	k := []byte(r.key)
	k[len(k)-1] ^= 0x40
	if err := tx.Delete(r.bucket, []byte(r.key)); err != nil {
		return err
	}
	return tx.Put(r.bucket, k, v)
}

// TestProjectionChecksum_Reads damages each projection record of a file
// in turn (a flipped byte at its start, middle and end, and its key's last
// byte) and runs every read: each one either answers exactly what it
// answered on the undamaged file or fails with ErrDamagedProjection, never
// a wrong answer; verify names the record's bucket; and a damaged entity
// or status list fails the reads that show it.
func TestProjectionChecksum_Reads(t *testing.T) {
	fixture, want := checksumFixture(t)
	src, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	damages := map[string]damageFunc{"first": flipValue(0), "middle": flipValue(-3), "last": flipValue(-1), "key": flipKey}
	path := filepath.Join(t.TempDir(), "flow.db")
	for _, rec := range projRecords(t, fixture) {
		for name, damage := range damages {
			if err := os.WriteFile(path, src, 0o644); err != nil {
				t.Fatal(err)
			}
			failed := checkDamagedReads(t, path, rec, damage, want)
			if wantReadFails(rec) && len(failed) == 0 {
				t.Errorf("%s, %s byte flipped: every read answered as before", rec, name)
			}
		}
	}
}

// wantReadFails reports whether a read shows the record r: every entity,
// and the entries of the status index that status and ready read (the
// lists of todo and blocked tasks and of pending approvals, the counts,
// the claims, the status of the tasks T-1 and T-4 that others wait for).
// The others (done tasks, a plan's or an approval's status) are read by
// the writes that change them, and by verify.
func wantReadFails(r projRecord) bool {
	if r.bucket != projstore.BucketSummaries {
		return true
	}
	listed := []string{"l", "n" + projstore.BucketTasks, "n" + projstore.BucketPlans, "n" + projstore.BucketExecs, "s" + projstore.BucketApprovals + "\x00alpha\x00pending",
		"s" + projstore.BucketTasks + "\x00alpha\x00todo", "s" + projstore.BucketTasks + "\x00alpha\x00blocked", "r" + projstore.BucketTasks + "\x00alpha/T-1", "r" + projstore.BucketTasks + "\x00alpha/T-4"}
	for _, prefix := range listed {
		if strings.HasPrefix(r.key, prefix) {
			return true
		}
	}
	return false
}

// checkDamagedReads damages rec in the file at path, runs every read on
// it and returns the names of those that failed.
func checkDamagedReads(t *testing.T, path string, rec projRecord, damage damageFunc, want map[string]string) (failed []string) {
	t.Helper()
	e, err := Open(path, Options{NoSync: true, Actor: "tester", Session: "s1", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.log.Update(func(tx store.Tx) error { return damage(tx, rec) }); err != nil {
		t.Fatal(err)
	}
	for name, read := range checksumReads {
		v, err := read(e)
		switch {
		case errors.Is(err, ErrDamagedProjection):
			failed = append(failed, name)
		case err != nil:
			t.Errorf("%s damaged: %s = %v, want ErrDamagedProjection or the undamaged answer", rec, name, err)
		case mustJSON(t, v) != want[name]:
			t.Errorf("%s damaged: %s answered\n%s\nwant ErrDamagedProjection or\n%s", rec, name, mustJSON(t, v), want[name])
		}
	}
	var ce *eventlog.CorruptionError
	if _, err := e.Verify(); !errors.As(err, &ce) || !strings.Contains(err.Error(), rec.bucket) {
		t.Errorf("%s damaged: Verify = %v, want a corruption naming %s", rec, err, rec.bucket)
	}
	return failed
}
