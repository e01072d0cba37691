package eventlog

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestIndexTail appends single events and batches around tailMax and
// checks that the tail never reaches tailMax, that every record is in
// exactly one of the tail and the indexes, and that lookups see both.
func TestIndexTail(t *testing.T) {
	l := mustOpen(t)
	n := 0
	perPage := tailMax / tailElemSize(tailFixed+2+len("s0")+2+len("p")) // tail entries per page
	for i, size := range []int{1, 1, perPage - 3, 1, 1, 1, perPage, 2, 3 * perPage, 1} {
		batch := make([]Event, size)
		for j := range batch {
			n++
			batch[j] = evID(uint64(n), "e", fmt.Sprint(n))
			batch[j].Project = []string{"", "p", "q"}[n%3]
		}
		mustAppend(t, l, fmt.Sprint("s", i%2), Any, batch...)
		err := l.View(func(tx *Tx) error {
			tail, size := tx.tailLen()
			if size > tailMax {
				t.Errorf("after batch %d: the tail holds %d bytes, want at most %d", i, size, tailMax)
			}
			if ids := tx.bucket(bucketIDs).Stats().KeyN; ids+tail != n {
				t.Errorf("after batch %d: %d ids and %d tail entries, want %d in all", i, ids, tail, n)
			}
			for k := 1; k <= n; k++ {
				if got := tx.SeqOf(testID(uint64(k))); got != uint64(k) {
					t.Fatalf("after batch %d: SeqOf(id %d) = %d", i, k, got)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// A retry of the batch is found, wherever its entries are.
		if got := mustAppend(t, l, fmt.Sprint("s", i%2), Any, batch...); !got.Duplicate {
			t.Fatalf("batch %d appended again", i)
		}
	}
	_ = l.View(func(tx *Tx) error {
		if ids := tx.bucket(bucketIDs).Stats().KeyN; ids == 0 {
			t.Error("no append merged the tail into the indexes")
		}
		return nil
	})
	for _, s := range []string{"s0", "s1"} {
		recs := mustCollect(t, func(fn func(*Record) error) error { return l.ReadStream(s, 0, fn) })
		for i, r := range recs {
			if r.Stream != s || r.Version != uint64(i+1) {
				t.Fatalf("ReadStream(%s)[%d] = %s v%d", s, i, r.Stream, r.Version)
			}
		}
	}
	for i, p := range []string{"p", "q"} {
		recs := mustCollect(t, func(fn func(*Record) error) error { return l.ReadProject(p, 0, fn) })
		want := 0
		for k := 1; k <= n; k++ {
			if k%3 == i+1 {
				want++
			}
		}
		if len(recs) != want {
			t.Errorf("ReadProject(%s) read %d records, want %d", p, len(recs), want)
		}
	}
}

func TestVerify_IndexTail(t *testing.T) {
	// All of the fixture's index entries are in the tail: seq i+1 is in
	// stream s1, s2, s3 for i%3 = 0, 1, 2, and s1's have project "p".
	tailEntry := func(tx *bolt.Tx, seq uint64) tailView {
		e, _ := parseTailEntry(seqKey(seq), tx.Bucket(bucketTail).Get(seqKey(seq)))
		return e
	}
	put := func(tx *bolt.Tx, e tailView) error {
		ie := e.entry()
		return tx.Bucket(bucketTail).Put(seqKey(e.seq), encodeTailEntry(&ie))
	}
	tests := []struct {
		name   string
		change func(*bolt.Tx) error
		seq    uint64
	}{
		{"DeletedFirst", func(tx *bolt.Tx) error { return tx.Bucket(bucketTail).Delete(seqKey(1)) }, 1},
		{"DeletedMiddle", func(tx *bolt.Tx) error { return tx.Bucket(bucketTail).Delete(seqKey(7)) }, 7},
		{"DeletedLast", func(tx *bolt.Tx) error { return tx.Bucket(bucketTail).Delete(seqKey(fixtureN)) }, fixtureN},
		{"WrongVersion", func(tx *bolt.Tx) error {
			e := tailEntry(tx, 5)
			e.version++
			return put(tx, e)
		}, 5},
		{"WrongStream", func(tx *bolt.Tx) error {
			e := tailEntry(tx, 5)
			e.stream = []byte("s1")
			return put(tx, e)
		}, 5},
		{"WrongProject", func(tx *bolt.Tx) error {
			e := tailEntry(tx, 4)
			e.project = nil
			return put(tx, e)
		}, 4},
		{"WrongID", func(tx *bolt.Tx) error {
			e := tailEntry(tx, 3)
			e.id = bytes.Repeat([]byte{9}, 16)
			return put(tx, e)
		}, 3},
		{"Extra", func(tx *bolt.Tx) error {
			e := tailEntry(tx, fixtureN)
			e.seq++
			return put(tx, e)
		}, 0},
		{"Malformed", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketTail).Put(seqKey(4), []byte{1, 2, 3})
		}, 0},
		{"AlsoInIDs", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketIDs).Put(idKey(2), append(seqKey(2), make([]byte, 32)...))
		}, 0},
	}
	for _, tt := range tests {
		t.Run("ErrCorrupt/"+tt.name, func(t *testing.T) {
			path := newLogFileTail(t, fixtureN, false)
			rawUpdate(t, path, tt.change)
			wantCorruptAt(t, path, tt.seq)
		})
	}
	t.Run("OK", func(t *testing.T) {
		mustVerifyFile(t, newLogFileTail(t, fixtureN, false))
	})
}

// TestIndexTail_MergeInTransaction appends one event per commit and reads
// the stream's head in the same transaction, for every size of entry
// (stream names of 1 to 60 bytes), so that some commit leaves a tail
// filling its page exactly. bbolt's Cursor.Last loops forever on a bucket
// whose leaves were all emptied in the same transaction, which a tail that
// bbolt had split into two pages was after a merge.
func TestIndexTail_MergeInTransaction(t *testing.T) {
	l := mustOpen(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		appendAndRead(t, l)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("appends did not return in a minute: a cursor is looping")
	}
}

func appendAndRead(t *testing.T, l *Log) {
	for n := 1; n <= 60; n++ {
		stream := string(bytes.Repeat([]byte{'s'}, n))
		for i := range 2 * tailMax / (tailFixed + n) {
			err := l.Update(func(tx *Tx) error {
				got, err := tx.Append(stream, Any, ev("e", ""))
				if err != nil {
					return err
				}
				if v, _ := tx.StreamVersion(stream); v != got.Version || v != uint64(i+1) {
					return fmt.Errorf("stream %q: StreamVersion %d after appending version %d", stream, v, got.Version)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
				return
			}
		}
	}
}

// TestIndexTail_Transaction appends many events in one transaction, with
// reads in it between the appends: the transaction keeps its index
// entries in memory and stores them when it ends, in the tail if they fit
// a page, else merged with the tail into the indexes; past tailSpill it
// merges them at once. Reads in the transaction see every record, and the
// file verifies after each (mustOpen's cleanup).
func TestIndexTail_Transaction(t *testing.T) {
	perPage := tailMax / tailElemSize(tailFixed+2+len("s0")+2+len("p"))
	tests := []struct {
		name     string
		n        int
		wantTail func(before, n int) int
	}{
		{"FitsThePage", 5, func(before, n int) int { return before + n }},
		{"OverThePage", perPage + 1, func(int, int) int { return 0 }},
		{"OverTheSpill", tailSpill + 100, func(int, int) int { return 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustOpen(t)
			for i := range 3 { // a tail to start from
				mustAppend(t, l, "s0", Any, evID(uint64(i+1), "e", ""))
			}
			before := 3
			err := l.Update(func(tx *Tx) error {
				for i := range tt.n {
					id := uint64(before + i + 1)
					e := evID(id, "e", fmt.Sprint(i))
					e.Project = []string{"p", "q"}[i%2]
					stream := fmt.Sprint("s", i%3)
					res, err := tx.Append(stream, Any, e)
					if err != nil {
						return err
					}
					if v, seq := tx.StreamVersion(stream); v != res.Version || seq != res.Seqs[0] {
						return fmt.Errorf("append %d: StreamVersion(%s) = %d, %d, want %d, %d", i, stream, v, seq, res.Version, res.Seqs[0])
					}
					if got := tx.SeqOf(e.ID); got != id {
						return fmt.Errorf("append %d: SeqOf = %d, want %d", i, got, id)
					}
				}
				if n := len(tx.tail.views); n > tailSpill {
					t.Errorf("the transaction holds %d index entries, want at most %d", n, tailSpill)
				}
				return checkReads(tx, before+tt.n)
			})
			if err != nil {
				t.Fatal(err)
			}
			_ = l.View(func(tx *Tx) error {
				if n, _ := tx.tailLen(); n != tt.wantTail(before, tt.n) {
					t.Errorf("the tail holds %d entries after the transaction, want %d", n, tt.wantTail(before, tt.n))
				}
				if err := checkReads(tx, before+tt.n); err != nil {
					t.Error(err)
				}
				return nil
			})
		})
	}
}

// checkReads reads the streams s0..s2 and projects p, q of n events that
// TestIndexTail_Transaction appended, forward and backward.
func checkReads(tx *Tx, n int) error {
	total := 0
	for _, s := range []string{"s0", "s1", "s2"} {
		var fwd, back int
		if err := tx.ReadStream(s, 0, func(r *Record) error { fwd++; return nil }); err != nil {
			return err
		}
		if err := tx.ReadStreamBack(s, 0, func(r *Record) error { back++; return nil }); err != nil {
			return err
		}
		if v, _ := tx.StreamVersion(s); fwd != back || uint64(fwd) != v {
			return fmt.Errorf("stream %s: %d records forward, %d back, version %d", s, fwd, back, v)
		}
		total += fwd
	}
	projects := 0
	for _, p := range []string{"p", "q"} {
		err := tx.ReadProject(p, 0, func(r *Record) error {
			if r.Project != p {
				return fmt.Errorf("ReadProject(%s) read seq %d of %q", p, r.Seq, r.Project)
			}
			projects++
			return nil
		})
		if err != nil {
			return err
		}
	}
	var all []uint64
	if err := tx.ReadProject("p", 0, func(r *Record) error { all = append(all, r.Seq); return nil }); err != nil {
		return err
	}
	froms := []uint64{1, 4, uint64(n / 2), uint64(n - 2), uint64(n), uint64(n + 1)}
	if err := tx.eachTail(0, func(e *tailView) bool { // around where the tail starts
		froms = append(froms, e.seq-2, e.seq-1, e.seq, e.seq+1)
		return false
	}); err != nil {
		return err
	}
	for _, from := range froms {
		var got, want []uint64
		if err := tx.ReadProject("p", from, func(r *Record) error { got = append(got, r.Seq); return nil }); err != nil {
			return err
		}
		for _, seq := range all {
			if seq >= from {
				want = append(want, seq)
			}
		}
		if !equalSeqs(got, want) {
			return fmt.Errorf("ReadProject(p, from %d) = %v, want %v", from, got, want)
		}
	}
	if total != n || projects != n-3 {
		return fmt.Errorf("read %d records of streams and %d of projects, want %d and %d", total, projects, n, n-3)
	}
	for seq := uint64(1); seq <= uint64(n); seq++ {
		if got := tx.SeqOf(testID(seq)); got != seq {
			return fmt.Errorf("SeqOf(id %d) = %d", seq, got)
		}
	}
	return nil
}
