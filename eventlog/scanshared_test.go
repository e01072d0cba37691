package eventlog

import (
	"bytes"
	"fmt"
	"testing"
)

// TestScanShared: ScanShared calls fn with the keys and values Scan
// gives, in the same order, stopping where Scan stops.
func TestScanShared(t *testing.T) {
	t.Parallel()
	l := mustOpen(t)
	err := l.Update(func(tx *Tx) error {
		for i := range 20 {
			if err := tx.Put("things", fmt.Appendf(nil, "p/%02d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
				return err
			}
		}
		if err := tx.Put("things", []byte("q/1"), []byte("other")); err != nil {
			return err
		}
		var want, got [][]byte
		if err := tx.Scan("things", []byte("p/"), func(k, v []byte) error {
			want = append(want, append(k, v...))
			return nil
		}); err != nil {
			return err
		}
		if err := tx.ScanShared("things", []byte("p/"), func(k, v []byte) error {
			got = append(got, append(bytes.Clone(k), v...))
			return nil
		}); err != nil {
			return err
		}
		if len(want) != 20 || len(got) != len(want) {
			t.Fatalf("Scan gave %d, ScanShared %d", len(want), len(got))
		}
		for i := range want {
			if !bytes.Equal(want[i], got[i]) {
				t.Errorf("%d: %q, want %q", i, got[i], want[i])
			}
		}
		return tx.ScanShared("missing", nil, func(k, v []byte) error { t.Fatal("a missing bucket has entries"); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
}
