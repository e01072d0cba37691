package flow

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/searchidx"
	"github.com/flowctl/flowctl/flow/store"
)

// TestSyncProjections_LogIndexFormat: a writable open of a file whose
// projections are current but whose log index is of an older format
// lists the log again in steps (logidx.Sync), leaving the projections
// alone (no Engine.Rebuild: the rollback index a rebuild drops is still
// there), and the index it writes verifies and answers queries.
func TestSyncProjections_LogIndexFormat(t *testing.T) {
	defer func(s uint64) { logIndexStep = s }(logIndexStep)
	logIndexStep = 2
	e := mustOpen(t)
	seedTasks(t, e)
	for _, text := range []string{"alpha beta", "gamma", "alpha"} {
		if _, err := e.AddNote(NewNote{Project: "p", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	rollbacks := func() (n int) {
		err := e.log.View(func(tx store.Tx) error {
			return tx.Scan(history.BucketRollbacks, nil, func(k, v []byte) error { n++; return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := rollbacks()
	if before == 0 {
		t.Fatal("no rollback index to tell a rebuild by")
	}
	err := e.log.Update(func(tx store.Tx) error {
		if err := tx.Put(searchidx.Bucket, []byte("stale"), []byte{1}); err != nil {
			return err
		}
		return tx.Put(logidx.Bucket, append([]byte{0}, "version"...), binary.BigEndian.AppendUint32(nil, 3))
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if err := e.acquire(); err != nil {
		t.Fatal(err)
	}
	if err := e.syncProjections(); err != nil {
		t.Fatal(err)
	}
	if got := rollbacks(); got != before {
		t.Errorf("rollback index has %d entries after the open, %d before: the projections were rebuilt", got, before)
	}
	if err := e.log.View(func(tx store.Tx) error {
		if ok, err := logidx.Current(tx); !ok || err != nil {
			t.Errorf("logidx.Current = %v, %v after the open", ok, err)
		}
		return logidx.Compare(tx)
	}); err != nil {
		t.Fatal(err)
	}
	// The cleanup's Verify compares the projections and the index.
}

// TestSyncProjections_SuggestsCompact: a log index listed again on a
// writable open warns that 'flowctl compact' gives back the free pages it
// left, when they are as many as compactHint asks, and only then.
func TestSyncProjections_SuggestsCompact(t *testing.T) {
	for _, tt := range []struct {
		name  string
		bytes int64
		share float64
		warns bool
	}{
		{"above the hint", 1, 0, true},
		{"below the default hint", compactHint.bytes, compactHint.share, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func(h struct {
				bytes int64
				share float64
			}) {
				compactHint = h
			}(compactHint)
			compactHint.bytes, compactHint.share = tt.bytes, tt.share
			e := mustOpen(t)
			seedTasks(t, e)
			err := e.log.Update(func(tx store.Tx) error {
				return tx.Put(logidx.Bucket, append([]byte{0}, "version"...), binary.BigEndian.AppendUint32(nil, 3))
			})
			if err != nil {
				t.Fatal(err)
			}
			e.Close()
			var warnings []string
			e.opts.Warn = func(s string) { warnings = append(warnings, s) }
			if err := e.acquire(); err != nil {
				t.Fatal(err)
			}
			if err := e.syncProjections(); err != nil {
				t.Fatal(err)
			}
			warned := len(warnings) == 1 && strings.Contains(warnings[0], "'flowctl compact' gives them back")
			if warned != tt.warns || len(warnings) > 1 {
				t.Errorf("warnings %q, want a compact hint: %v", warnings, tt.warns)
			}
		})
	}
}
