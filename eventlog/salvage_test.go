package eventlog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// oneTxLog writes a log of n records in one transaction, so that no
// stale copy of a record lingers on a free page, and returns its path
// and records.
func oneTxLog(tb testing.TB, n int) (string, []*Record) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "flow.db")
	l, err := Open(path, Options{Create: true, NoSync: true, Now: func() time.Time { return testClock }, createFormat: testFormat})
	if err != nil {
		tb.Fatal(err)
	}
	err = l.Update(func(tx *Tx) error {
		for i := range n {
			if _, err := tx.Append(fmt.Sprintf("s%d", i%7), Any, evID(uint64(i+1), "e", strings.Repeat("d", 100+i%50))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	recs := readAll(tb, l)
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	return path, recs
}

// pageOf returns the id of the page that holds the stored bytes of rec.
func pageOf(tb testing.TB, path string, rec *Record) int {
	tb.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	c := *rec
	i := bytes.Index(file, testFormat.encode(&c))
	if i < 0 {
		tb.Fatalf("seq %d not found in the file", rec.Seq)
	}
	return i / os.Getpagesize()
}

// logRoot returns the id of the log bucket's root page.
func logRoot(tb testing.TB, path string) int {
	tb.Helper()
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var root int
	_ = db.View(func(tx *bolt.Tx) error { root = int(tx.Bucket(bucketLog).Root()); return nil })
	return root
}

// salvageAll runs Salvage on path and returns its report and records.
func salvageAll(tb testing.TB, path string) (SalvageReport, []*Record) {
	tb.Helper()
	var got []*Record
	rep, err := Salvage(path, Options{}, func(r *Record) error { got = append(got, r); return nil })
	if err != nil {
		tb.Fatalf("Salvage: %v", err)
	}
	if uint64(len(got)) != rep.Kept {
		tb.Fatalf("Salvage handed over %d records, reports %d kept", len(got), rep.Kept)
	}
	return rep, got
}

// wantPrefix fails tb unless got is want[:n], record for record.
func wantPrefix(tb testing.TB, got, want []*Record, n int) {
	tb.Helper()
	if len(got) != n {
		tb.Fatalf("%d records kept, want %d", len(got), n)
	}
	for i, r := range got {
		if d := sameRecord(r, want[i]); d != "" {
			tb.Fatalf("kept seq %d: %s", i+1, d)
		}
	}
}

func TestSalvage(t *testing.T) {
	const n = 300
	t.Run("OK/Clean", func(t *testing.T) {
		path, want := oneTxLog(t, n)
		rep, got := salvageAll(t, path)
		wantPrefix(t, got, want, n)
		if rep.Lost() != 0 || rep.Stranded != 0 || rep.ScannedPages || rep.HeadSeq != n || rep.KeptHash != want[n-1].Hash {
			t.Fatalf("report %+v, want all %d kept, nothing scanned", rep, n)
		}
	})

	t.Run("OK/LeafPageZeroed", func(t *testing.T) {
		path, want := oneTxLog(t, n)
		id := pageOf(t, path, want[n/2])
		first, last := n, 0 // the seqs on the zeroed page
		for _, r := range want {
			if pageOf(t, path, r) == id {
				first, last = min(first, int(r.Seq)), max(last, int(r.Seq))
			}
		}
		zeroPage(t, path, id)
		rep, got := salvageAll(t, path)
		wantPrefix(t, got, want, first-1)
		if rep.LostFrom != uint64(first) || rep.LostTo != n || rep.Stranded != n-last {
			t.Fatalf("page %d (seqs %d-%d) zeroed: report %+v, want lost %d-%d, %d stranded", id, first, last, rep, first, n, n-last)
		}
		t.Logf("page %d (seqs %d-%d) zeroed: %+v", id, first, last, rep)
		if !strings.Contains(strings.Join(rep.Damage, "; "), fmt.Sprintf("page %d of the file is damaged", id)) {
			t.Fatalf("damage %q does not name page %d", rep.Damage, id)
		}
	})

	t.Run("OK/LogRootZeroed", func(t *testing.T) {
		path, want := oneTxLog(t, n)
		zeroPage(t, path, logRoot(t, path))
		rep, got := salvageAll(t, path)
		wantPrefix(t, got, want, n)
		t.Logf("log root zeroed: %+v", rep)
		if !rep.ScannedPages || rep.Lost() != 0 {
			t.Fatalf("report %+v, want every record found by the page scan", rep)
		}
	})

	t.Run("OK/LatestMetaPageZeroed", func(t *testing.T) {
		path, want := oneTxLog(t, n)
		l, err := Open(path, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, "s1", Any, evID(n+1, "e", "last"))
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		// The meta page of the last commit: bbolt falls back to the other.
		tx0, ok0 := pageMeta(t, path, 0)
		tx1, ok1 := pageMeta(t, path, 1)
		if !ok0 || !ok1 {
			t.Fatal("a meta page of the clean file is not valid")
		}
		zeroPage(t, path, map[bool]int{true: 0, false: 1}[tx0 > tx1])
		rep, got := salvageAll(t, path)
		wantPrefix(t, got, want, n)
		if rep.HeadSeq != n || rep.PastHead != 1 || rep.Lost() != 0 {
			t.Fatalf("report %+v, want head %d and 1 record past it, not kept", rep, n)
		}
	})

	t.Run("OK/HeadSeqPastTheFile", func(t *testing.T) {
		path, want := oneTxLog(t, n)
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(metaHeadSeq, seqKey(1<<60))
		})
		rep, got := salvageAll(t, path)
		wantPrefix(t, got, want, n)
		if rep.HeadSeq != 0 || rep.Lost() != 0 || len(rep.Damage) == 0 {
			t.Fatalf("report %+v, want meta's head set aside as damage and all %d records kept", rep, n)
		}
	})

	t.Run("OK/LastRecordRehashed", func(t *testing.T) {
		path, want := oneTxLog(t, n)
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			r := *want[n-1]
			r.Actor = "forger"
			return tx.Bucket(bucketLog).Put(seqKey(n), testFormat.encode(&r))
		})
		rep, got := salvageAll(t, path)
		wantPrefix(t, got, want, n-1)
		if rep.LostFrom != n || rep.LostTo != n || !strings.Contains(rep.Reason, "meta's head hash") {
			t.Fatalf("report %+v, want seq %d lost for its hash", rep, n)
		}
	})
}

// pageMeta returns the txid in the meta page id of the file at path (the
// higher one is the last commit's) and whether the page is valid.
func pageMeta(tb testing.TB, path string, id int) (uint64, bool) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	p := b[id*os.Getpagesize():]
	_, ok := validMeta(p, uint64(id))
	return le.Uint64(p[pageHeaderSize+48:]), ok
}

// FuzzSalvageScan feeds arbitrary bytes to Salvage's page scan, seeded
// with pages of a real log: it must never panic, and every record it keeps
// must be stored under the seq its key names.
func FuzzSalvageScan(f *testing.F) {
	path, _ := oneTxLog(f, 40)
	file, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	size := os.Getpagesize()
	for off := 0; off+size <= len(file); off += size {
		if h := readPageHeader(file[off:]); h.flags == leafPageFlag {
			f.Add(file[off : off+size])
		}
	}
	f.Add(file[:2*size])
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &salvager{tree: map[uint64][]byte{}, scan: map[uint64][][]byte{}}
		s.scanData(b)
		for seq, vs := range s.scan {
			for _, v := range vs {
				var r Record
				if f := formatOfRecord(v); f != 0 && f.decodeInto(&r, seq, v, Hash{}, true) == nil && r.Seq != seq {
					t.Fatalf("record of seq %d kept under %d", r.Seq, seq)
				}
			}
		}
	})
}
