package eventlog

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// v1Fixture is a format-1 file written by flowctl before format 2.
const (
	v1Fixture     = "testdata/v1/flow.db"
	v1FixtureHead = 87
	v1FixtureHash = "d0be2049f2c84637893651d649ba67a2af4ddff25186e1c6a673eda4295c3a2c"
)

// copyFixture copies the file at src into a new temporary directory.
func copyFixture(tb testing.TB, src string) string {
	tb.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "flow.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// newFormatLog writes a log of format f: n records over streams s0..s6,
// every third with a project, committed in batches of 7 (so that the
// index tail has been merged and holds entries too), and a caller bucket.
func newFormatLog(tb testing.TB, f format, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "flow.db")
	l, err := Open(path, Options{Create: true, NoSync: true, createFormat: f})
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	for i := 0; i < n; i += 7 {
		err := l.Update(func(tx *Tx) error {
			for j := i; j < min(i+7, n); j++ {
				e := evID(uint64(j+1), "e", fmt.Sprintf("payload %d", j))
				if j%3 == 0 {
					e.Project = fmt.Sprintf("p%d", j%2)
				}
				if _, err := tx.Append(fmt.Sprintf("s%d", j%7), Any, e); err != nil {
					return err
				}
				if err := tx.Put("proj_things", fmt.Appendf(nil, "k%d", j), fmt.Appendf(nil, "v%d", j)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return path
}

// fileFormat opens path read-only and returns its format, head and
// records.
func fileFormat(tb testing.TB, path string) (int, Report, []*Record) {
	tb.Helper()
	l, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Verify()
	if err != nil {
		tb.Fatalf("Verify(%s): %v", path, err)
	}
	return l.Format(), rep, readAll(tb, l)
}

// bucketDump returns every key and value of the caller's buckets.
func bucketDump(tb testing.TB, path string) map[string]string {
	tb.Helper()
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if slices.ContainsFunc(reservedBuckets, func(r []byte) bool { return bytes.Equal(r, name) }) {
				return nil
			}
			return b.ForEach(func(k, v []byte) error { out[string(name)+"/"+string(k)] = string(v); return nil })
		})
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestFormat_SameHashes(t *testing.T) {
	for i, r := range sampleRecords() {
		a, b := *r, *r
		formatV1.encode(&a)
		v2 := formatV2.encode(&b)
		if a.Hash != b.Hash {
			t.Fatalf("record %d: format 1 hash %x, format 2 %x", i, a.Hash, b.Hash)
		}
		got, err := formatV2.decode(r.Seq, v2, r.Prev)
		if err != nil {
			t.Fatalf("record %d: decode: %v", i, err)
		}
		if diff := sameRecord(got, &b); diff != "" {
			t.Fatalf("record %d: round trip: %s", i, diff)
		}
		if _, err := formatV2.decode(r.Seq, v2, Hash{1}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("record %d decoded after another prev: err = %v, want corruption", i, err)
		}
		if _, err := formatV2.decode(r.Seq+1, v2, r.Prev); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("record %d decoded under another seq: err = %v, want corruption", i, err)
		}
		if _, err := formatV1.decode(r.Seq, v2, r.Prev); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("record %d: format 1 decoded a format-2 record: err = %v", i, err)
		}
	}
}

func TestLog_FormatOfNewFiles(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "flow.db"), Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Format() != FormatVersion {
		t.Fatalf("a new file has format %d, want %d", l.Format(), FormatVersion)
	}
	mustAppend(t, l, "s", Any, ev("e", "x"))
	var head []byte
	if err := l.db.View(func(tx *bolt.Tx) error {
		head = bytes.Clone(tx.Bucket(bucketLog).Get(seqKey(1)))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if formatOfRecord(head) != FormatVersion {
		t.Fatalf("a new file's record starts with 0x%02x", head[0])
	}
}

// TestUpgrade_V1Fixture: a file written by the flowctl of format 1 is
// read, appended to and verified as format 1, then upgraded with the
// same head hash, its caller buckets as they were.
func TestUpgrade_V1Fixture(t *testing.T) {
	path := copyFixture(t, v1Fixture)
	f, rep, _ := fileFormat(t, path)
	if f != 1 || rep.HeadSeq != v1FixtureHead || hex.EncodeToString(rep.HeadHash[:]) != v1FixtureHash {
		t.Fatalf("fixture: format %d, head %d %x", f, rep.HeadSeq, rep.HeadHash)
	}
	l := mustOpenPath(t, path, Options{NoSync: true})
	got := mustAppend(t, l, "s/new", Any, ev("e", "appended to a format-1 file"))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	f, rep, before := fileFormat(t, path)
	if f != 1 || rep.HeadSeq != got.Seqs[0] {
		t.Fatalf("after an append: format %d, head %d; want 1, %d", f, rep.HeadSeq, got.Seqs[0])
	}
	buckets := bucketDump(t, path)
	up, err := Upgrade(path, UpgradeOptions{Options: Options{NoSync: true}})
	if err != nil {
		t.Fatalf("Upgrade: %v", err)
	}
	if up.From != 1 || up.To != FormatVersion || up.HeadSeq != rep.HeadSeq || up.HeadHash != rep.HeadHash || up.Backup != path+".v1.bak" {
		t.Fatalf("report %+v", up)
	}
	f2, rep2, after := fileFormat(t, path)
	if f2 != FormatVersion || rep2 != rep {
		t.Fatalf("upgraded: format %d, %+v; want %d, %+v", f2, rep2, FormatVersion, rep)
	}
	if len(after) != len(before) {
		t.Fatalf("%d records after, %d before", len(after), len(before))
	}
	for i := range before {
		if diff := sameRecord(after[i], before[i]); diff != "" {
			t.Fatalf("seq %d: %s", i+1, diff)
		}
	}
	if got := bucketDump(t, path); !equalMaps(got, buckets) {
		t.Fatal("the caller's buckets changed")
	}
	if f, bak, _ := fileFormat(t, up.Backup); f != 1 || bak != rep {
		t.Fatalf("backup: format %d, %+v", f, bak)
	}
	l = mustOpenPath(t, path, Options{NoSync: true})
	mustAppend(t, l, "s/new", Any, ev("e", "appended to the upgraded file"))
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestUpgrade(t *testing.T) {
	t.Run("OK/Current", func(t *testing.T) {
		path := newFormatLog(t, FormatVersion, 20)
		before, _ := os.ReadFile(path)
		rep, err := Upgrade(path, UpgradeOptions{})
		if err != nil || rep.From != FormatVersion || rep.To != FormatVersion || rep.Backup != "" {
			t.Fatalf("Upgrade = %+v, %v; want nothing done", rep, err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Fatal("Upgrade changed a current file")
		}
	})

	t.Run("OK/BackupNamed", func(t *testing.T) {
		path := newFormatLog(t, formatV1, 150)
		_, want, recs := fileFormat(t, path)
		backup := filepath.Join(t.TempDir(), "old.db")
		var rewritten, verified []uint64
		rep, err := Upgrade(path, UpgradeOptions{
			Options:   Options{NoSync: true, Progress: func(done, _ uint64) { verified = append(verified, done) }},
			Backup:    backup,
			Rewriting: func(done, _ uint64) { rewritten = append(rewritten, done) },
		})
		if err != nil || rep.Backup != backup {
			t.Fatalf("Upgrade = %+v, %v", rep, err)
		}
		if f, got, after := fileFormat(t, path); f != FormatVersion || got != want || len(after) != len(recs) {
			t.Fatalf("upgraded: format %d, %+v, %d records; want %+v, %d", f, got, len(after), want, len(recs))
		}
		if f, got, _ := fileFormat(t, backup); f != 1 || got != want {
			t.Fatalf("backup: format %d, %+v", f, got)
		}
		if len(rewritten) < 2 || rewritten[0] != 0 || rewritten[len(rewritten)-1] != 150 || len(verified) < 2 {
			t.Fatalf("progress: rewriting %v, verifying %v", rewritten, verified)
		}
		if rep.After >= rep.Before {
			t.Logf("sizes: %d -> %d", rep.Before, rep.After)
		}
	})

	t.Run("OK/Empty", func(t *testing.T) {
		path := newFormatLog(t, formatV1, 0)
		if _, err := Upgrade(path, UpgradeOptions{Options: Options{NoSync: true}}); err != nil {
			t.Fatal(err)
		}
		if f, rep, _ := fileFormat(t, path); f != FormatVersion || rep.HeadSeq != 0 {
			t.Fatalf("format %d, %+v", f, rep)
		}
	})

	t.Run("ErrExist/Backup", func(t *testing.T) {
		path := newFormatLog(t, formatV1, 10)
		if err := os.WriteFile(path+".v1.bak", []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		before, _ := os.ReadFile(path)
		if _, err := Upgrade(path, UpgradeOptions{}); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("err = %v, want fs.ErrExist", err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Fatal("a refused Upgrade changed the file")
		}
	})

	t.Run("ErrCorrupt/LeftAsItWas", func(t *testing.T) {
		path := newFormatLog(t, formatV1, 30)
		rewriteRecord(t, path, 5, func(r *Record) { r.Data = []byte("forged") }, encodeKeepHash)
		before, _ := os.ReadFile(path)
		_, err := Upgrade(path, UpgradeOptions{Options: Options{NoSync: true}})
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.Seq != 5 {
			t.Fatalf("err = %v, want corruption at seq 5", err)
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Fatal("a failed Upgrade changed the file")
		}
		entries, _ := os.ReadDir(filepath.Dir(path))
		if len(entries) != 1 {
			t.Fatalf("the directory holds %d files after a failed Upgrade, want 1", len(entries))
		}
	})
}

// TestFormatV1_CompactAndSalvage: Compact keeps a format-1 file in format
// 1, and Salvage reads both formats.
func TestFormatV1_CompactAndSalvage(t *testing.T) {
	for _, f := range []format{formatV1, formatV2} {
		t.Run(fmt.Sprintf("Format%d", f), func(t *testing.T) {
			path := newFormatLog(t, f, 100)
			_, want, recs := fileFormat(t, path)
			if _, err := Compact(path, Options{NoSync: true}); err != nil {
				t.Fatal(err)
			}
			if got, rep, _ := fileFormat(t, path); got != int(f) || rep != want {
				t.Fatalf("compacted: format %d, %+v; want %d, %+v", got, rep, f, want)
			}
			var got []*Record
			rep, err := Salvage(path, Options{}, func(r *Record) error { got = append(got, r); return nil })
			if err != nil || rep.Kept != 100 || rep.KeptHash != want.HeadHash {
				t.Fatalf("Salvage = %+v, %v", rep, err)
			}
			for i := range recs {
				if diff := sameRecord(got[i], recs[i]); diff != "" {
					t.Fatalf("seq %d: %s", i+1, diff)
				}
			}
		})
	}
}
