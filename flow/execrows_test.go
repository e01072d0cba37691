package flow

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// execRowHistory records exec records on a project of three tasks,
// checkpoints, and rolls the project or one task back to one of them
// (which removes execs, and restores ones at the rollback's seq).
func execRowHistory(t *rapid.T, e *Engine) {
	must := func(err error) {
		if err != nil && (ErrorCode(err) == CodeInternal || ErrorCode(err) == CodeCorrupt) {
			t.Fatalf("%v", err)
		}
	}
	_, err := e.CreateProject(NewProject{Name: "p"})
	must(err)
	for i := 1; i <= 3; i++ {
		_, err := e.AddTask(NewTask{Project: "p", Title: fmt.Sprint("task ", i)})
		must(err)
	}
	checkpoints := 0
	for range rapid.IntRange(1, 40).Draw(t, "steps") {
		switch rapid.IntRange(0, 9).Draw(t, "op") {
		case 0:
			if _, err := e.CreateCheckpoint(NewCheckpoint{Project: "p"}); err == nil {
				checkpoints++
			}
		case 1:
			if checkpoints > 0 {
				in := RollbackInput{Project: "p", To: Point{Checkpoint: fmt.Sprint("C-", rapid.IntRange(1, checkpoints).Draw(t, "to"))}}
				if rapid.Bool().Draw(t, "one task") {
					in.Task = fmt.Sprint("T-", rapid.IntRange(1, 3).Draw(t, "task"))
				}
				_, err := e.Rollback(in)
				must(err)
			}
		default:
			x := NewExec{Project: "p", Command: rapid.SampledFrom([]string{"go test ./...", "make", "sh -c 'x y'", ""}).Draw(t, "command"),
				ElapsedMS: float64(rapid.IntRange(0, 900).Draw(t, "elapsed"))}
			if x.Command == "" {
				x.Code = "print(1)"
			}
			if n := rapid.IntRange(0, 3).Draw(t, "task"); n > 0 {
				x.Task = fmt.Sprint("T-", n)
			}
			x.ExitCode = rapid.IntRange(0, 1).Draw(t, "exit")
			x.Success = x.ExitCode == 0
			_, err := e.RecordExec(x)
			must(err)
		}
	}
}

// execRowsNow reads p's rows from the summary, and how many of them came
// from the log.
func execRowsNow(t *rapid.T, e *Engine) ([]ExecRow, int) {
	var rows []ExecRow
	var fromLog int
	err := e.view(func(tx store.Tx) error {
		var err error
		rows, fromLog, err = projstore.NewTx(tx).ExecRows("p")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, fromLog
}

// execRowsPlain is the rows as the execs themselves say, read as every
// reader read them before the summary.
func execRowsPlain(t *rapid.T, e *Engine) []ExecRow {
	var rows []ExecRow
	err := e.read(func(src source) error {
		xs, err := src.Execs("p")
		for _, x := range xs {
			rows = append(rows, projstore.ExecRowOf(x))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return projstore.SortExecRows(rows)
}

func checkExecRows(t *rapid.T, e *Engine, what string, wantFromLog int) {
	got, fromLog := execRowsNow(t, e)
	want := execRowsPlain(t, e)
	if len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
		t.Fatalf("%s: rows\n%+v\nwant\n%+v", what, got, want)
	}
	if wantFromLog >= 0 && fromLog != wantFromLog {
		t.Fatalf("%s: %d rows read from the log, want %d", what, fromLog, wantFromLog)
	}
}

// TestExecRows_SameAsExecs: the exec summary's rows are the execs' own,
// on any history of exec records, checkpoints and rollbacks; rows that
// are missing (an older file) or stale (written for another version of
// their exec, as a flowctl without the summary leaves them) are read from
// the log instead; a rebuild writes them all again.
func TestExecRows_SameAsExecs(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	rapid.Check(t, func(t *rapid.T) {
		runs++
		e, err := Open(filepath.Join(dir, fmt.Sprint(runs, ".db")), Options{Create: true, NoSync: true, Actor: "ann", Now: fixedClock()})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		execRowHistory(t, e)
		checkExecRows(t, e, "as written", 0)
		n := len(execRowsPlain(t, e))

		// Lose some rows and make others stale, as an older flowctl would.
		var keys [][]byte
		err = e.view(func(tx store.Tx) error {
			return tx.Scan(projstore.BucketExecRows, nil, func(k, _ []byte) error {
				keys = append(keys, append([]byte(nil), k...))
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		damage := make([]int, len(keys)) // drawn here: a draw must not panic inside an update
		lost := 0
		for i := range keys {
			if damage[i] = rapid.IntRange(0, 2).Draw(t, "damage"); damage[i] > 0 {
				lost++
			}
		}
		err = e.update(func(tx store.Tx) error {
			for i, k := range keys {
				switch damage[i] {
				case 1:
					if err := tx.Delete(projstore.BucketExecRows, k); err != nil {
						return err
					}
				case 2:
					_, id := splitEntityKey(string(k))
					x := &projection.Exec{Project: "p", ExecRecorded: projection.ExecRecorded{ID: id, Command: "stale"}, Meta: projection.Meta{Seq: 1, Version: 1}}
					if err := tx.Put(projstore.BucketExecRows, k, projstore.ExecRowValue(k, x)); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		checkExecRows(t, e, "some rows lost or stale", lost)

		if err := e.update(func(tx store.Tx) error { return tx.DeleteBucket(projstore.BucketExecRows) }); err != nil {
			t.Fatal(err)
		}
		checkExecRows(t, e, "a file without the summary", n)

		if _, err := e.Rebuild(); err != nil {
			t.Fatal(err)
		}
		checkExecRows(t, e, "after a rebuild", 0)
		if _, err := e.RebuildProject("p"); err != nil {
			t.Fatal(err)
		}
		checkExecRows(t, e, "after a rebuild of the project", 0)
	})
}

func splitEntityKey(key string) (project, id string) {
	for i := len(key) - 1; i >= 0; i-- {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}
