package eventlog

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// newMixedLog appends n records over two streams and projects "a" and
// "b", one a batch, so that the last ones sit in the index tail and the
// rest in stream_idx and project_idx.
func newMixedLog(t *testing.T, n int) (*Log, []*Record) {
	l := mustOpen(t)
	for i := range n {
		e := ev("t", "x")
		e.Project = []string{"a", "b"}[i%2]
		mustAppend(t, l, []string{"s1", "s2"}[i%3%2], Any, e)
	}
	return l, readAll(t, l)
}

// TestTx_ReadBack_Pages walks each reverse read back in pages of 5
// records, each page in its own transaction from where the last one
// ended, as the engine does, across the boundary of the index tail.
func TestTx_ReadBack_Pages(t *testing.T) {
	l, recs := newMixedLog(t, 310)
	var inTail int
	if err := l.View(func(tx *Tx) error { inTail, _ = tx.tailLen(); return nil }); err != nil {
		t.Fatal(err)
	}
	if inTail == 0 || inTail == len(recs) {
		t.Fatalf("%d of %d records in the index tail; the test needs both sides", inTail, len(recs))
	}
	for _, c := range []struct {
		name string
		read func(tx *Tx, to uint64, fn func(*Record) error) error
		next func(r *Record) uint64 // the bound of the next page
		want func(r *Record) bool
	}{
		{"Range", func(tx *Tx, to uint64, fn func(*Record) error) error { return tx.ReadRangeBack(1, to, fn) },
			func(r *Record) uint64 { return r.Seq - 1 }, func(*Record) bool { return true }},
		{"Stream", func(tx *Tx, to uint64, fn func(*Record) error) error { return tx.ReadStreamBack("s2", to, fn) },
			func(r *Record) uint64 { return r.Version - 1 }, func(r *Record) bool { return r.Stream == "s2" }},
		{"Project", func(tx *Tx, to uint64, fn func(*Record) error) error { return tx.ReadProjectBack("b", to, fn) },
			func(r *Record) uint64 { return r.Seq - 1 }, func(r *Record) bool { return r.Project == "b" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var want []uint64
			for _, r := range slices.Backward(recs) {
				if c.want(r) {
					want = append(want, r.Seq)
				}
			}
			var got []uint64
			for to := uint64(0); ; {
				var page []*Record
				err := l.View(func(tx *Tx) error {
					return c.read(tx, to, func(r *Record) error {
						if page = append(page, r); len(page) == 5 {
							return ErrStop
						}
						return nil
					})
				})
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, seqsOf(page)...)
				if len(page) < 5 || c.next(page[4]) == 0 {
					break
				}
				to = c.next(page[4])
			}
			if !slices.Equal(got, want) {
				t.Fatalf("pages gave %v,\nwant %v", got, want)
			}
		})
	}
}

// TestTx_ReadProjectBack_Damaged reports a project_idx chunk that lists
// another project's record, never hands it on.
func TestTx_ReadProjectBack_Damaged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow.db")
	l, err := Open(path, Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		e := ev("t", "x")
		e.Project = []string{"a", "b"}[i%2]
		if _, err := l.Append("s", Any, e); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		// Project a's first chunk lists seq 1; make it list seq 2, b's.
		k := projectChunkKey(streamPrefix("a"), 1)
		v := slices.Clone(tx.Bucket(bucketProjIdx).Get(k))
		v[7] = 2
		return tx.Bucket(bucketProjIdx).Put(k, v)
	})
	l, err = Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = l.View(func(tx *Tx) error {
		return tx.ReadProjectBack("a", 0, func(r *Record) error {
			if r.Project != "a" {
				t.Errorf("handed seq %d of project %q", r.Seq, r.Project)
			}
			return nil
		})
	})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadProjectBack over a damaged chunk: %v, want ErrCorrupt", err)
	}
}
