package eventlog

import (
	"bytes"
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// replayFixture appends records that differ in every optional part from
// their neighbours (correlation, causation, payload, project), so that a
// reused Record that kept a field from the previous one shows.
func replayFixture(t *testing.T) *Log {
	t.Helper()
	l := mustOpen(t)
	for i := range 12 {
		e := evID(uint64(i+1), "e", "")
		if i%2 == 0 {
			e.Data = bytes.Repeat([]byte{byte('a' + i)}, 1+i*7)
			e.Correlation = testID(100 + uint64(i))
			e.Project = "p"
		}
		if i%3 == 0 {
			e.Causation = testID(200 + uint64(i))
		}
		mustAppend(t, l, []string{"a", "b", "c"}[i%3], Any, e)
	}
	return l
}

// collectReplay copies what Replay lends: the records as they were
// during each call.
func collectReplay(t *testing.T, l *Log, from, to uint64) []*Record {
	t.Helper()
	var out []*Record
	err := l.Replay(from, to, func(r *Record) error {
		c := *r
		c.Data = bytes.Clone(r.Data)
		out = append(out, &c)
		return nil
	})
	if err != nil {
		t.Fatalf("Replay(%d, %d): %v", from, to, err)
	}
	return out
}

func TestLog_Replay(t *testing.T) {
	l := replayFixture(t)
	for _, tt := range []struct {
		name     string
		from, to uint64
	}{
		{"OK/All", 0, 0}, {"OK/FromTo", 3, 9}, {"OK/One", 12, 12},
		{"OK/FromPastHead", 13, 0}, {"OK/FromAfterTo", 5, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := mustCollect(t, func(fn func(*Record) error) error { return l.ReadRange(tt.from, tt.to, fn) })
			got := collectReplay(t, l, tt.from, tt.to)
			if len(got) != len(want) {
				t.Fatalf("Replay(%d, %d) gave %d records, ReadRange %d", tt.from, tt.to, len(got), len(want))
			}
			for i := range want {
				if d := sameRecord(got[i], want[i]); d != "" {
					t.Errorf("seq %d: %s", want[i].Seq, d)
				}
				if (got[i].Data == nil) != (want[i].Data == nil) {
					t.Errorf("seq %d: Data nil = %v, ReadRange's nil = %v", want[i].Seq, got[i].Data == nil, want[i].Data == nil)
				}
			}
		})
	}

	t.Run("ErrStop", func(t *testing.T) {
		var got []uint64
		err := l.Replay(1, 0, func(r *Record) error {
			got = append(got, r.Seq)
			if r.Seq == 4 {
				return ErrStop
			}
			return nil
		})
		if err != nil || !equalSeqs(got, seqRange(1, 4)) {
			t.Fatalf("Replay with ErrStop at 4: %v, %v", got, err)
		}
	})

	t.Run("CallbackError", func(t *testing.T) {
		boom := errors.New("boom")
		if err := l.Replay(1, 0, func(*Record) error { return boom }); !errors.Is(err, boom) {
			t.Fatalf("Replay = %v, want the callback's error", err)
		}
	})
}

// TestLog_Replay_Corruption: Replay checks the CRC, the framing and the
// seq of every record, and refuses a gap; it leaves the hash to the
// audit reads and Verify.
func TestLog_Replay_Corruption(t *testing.T) {
	// The files are corrupt: opened without mustOpenPath, which verifies
	// on close.
	read := func(path string, read func(*Log) error) error {
		l, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer l.Close()
		return read(l)
	}
	replayAll := func(path string) error {
		return read(path, func(l *Log) error { return l.Replay(0, 0, func(*Record) error { return nil }) })
	}
	wantAt := func(t *testing.T, err error, seq uint64) {
		t.Helper()
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.Seq != seq {
			t.Fatalf("Replay: err = %v, want corruption at seq %d", err, seq)
		}
	}

	t.Run("FlippedByte", func(t *testing.T) {
		path := newLogFile(t, fixtureN)
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			b := rawRecord(tx, 4)
			b[len(b)/2] ^= 0x10
			return tx.Bucket(bucketLog).Put(seqKey(4), b)
		})
		wantAt(t, replayAll(path), 4)
	})

	t.Run("StoredUnderOtherSeq", func(t *testing.T) {
		path := newLogFile(t, fixtureN)
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLog).Put(seqKey(6), rawRecord(tx, 5))
		})
		wantAt(t, replayAll(path), 6)
	})

	t.Run("Missing", func(t *testing.T) {
		path := newLogFile(t, fixtureN)
		rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Delete(seqKey(7)) })
		wantAt(t, replayAll(path), 7)
	})

	t.Run("NewCRCOldHashIsLeftToAuditReads", func(t *testing.T) {
		path := newLogFile(t, fixtureN)
		rewriteRecord(t, path, 5, func(r *Record) { r.Data = []byte("forged") }, encodeKeepHash)
		if err := replayAll(path); err != nil {
			t.Fatalf("Replay = %v; it checks the CRC, not the hash", err)
		}
		wantAt(t, read(path, func(l *Log) error { return l.ReadRange(0, 0, func(*Record) error { return nil }) }), 5)
		wantCorruptAt(t, path, 5)
	})
}

// TestTx_ReplayStreamAndProject: the index reads as Replay reads give the
// records ReadStream and ReadProject give, from the merged indexes and
// from the index tail alike.
func TestTx_ReplayStreamAndProject(t *testing.T) {
	for _, merge := range []bool{false, true} {
		path := newLogFileTail(t, 150, merge)
		l := mustOpenPath(t, path, Options{ReadOnly: true})
		type read func(tx *Tx, key string, from uint64, fn func(*Record) error) error
		for _, tt := range []struct {
			name         string
			keys         []string
			read, replay read
		}{
			{"Stream", []string{"s1", "s2", "s3", "none"}, (*Tx).ReadStream, (*Tx).ReplayStream},
			{"Project", []string{"p", "", "none"}, (*Tx).ReadProject, (*Tx).ReplayProject},
		} {
			for _, key := range tt.keys {
				for _, from := range []uint64{0, 1, 7, 49, 64, 140, 200} {
					var want, got []*Record
					err := l.View(func(tx *Tx) error {
						if err := tt.read(tx, key, from, func(r *Record) error { want = append(want, r); return nil }); err != nil {
							return err
						}
						return tt.replay(tx, key, from, func(r *Record) error {
							c := *r
							c.Data = bytes.Clone(r.Data)
							got = append(got, &c)
							return nil
						})
					})
					if err != nil {
						t.Fatalf("merge %v, %s %q from %d: %v", merge, tt.name, key, from, err)
					}
					if len(got) != len(want) {
						t.Fatalf("merge %v, Replay%s(%q, %d) gave %d records, Read%s %d", merge, tt.name, key, from, len(got), tt.name, len(want))
					}
					for i := range want {
						if d := sameRecord(got[i], want[i]); d != "" {
							t.Fatalf("merge %v, Replay%s(%q, %d), seq %d: %s", merge, tt.name, key, from, want[i].Seq, d)
						}
					}
				}
			}
		}
		l.Close()
	}
}
