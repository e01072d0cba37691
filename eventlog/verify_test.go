package eventlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The corruption fixture is newLogFile(t, fixtureN): seq i+1 is in stream
// s1, s2, s3 for i%3 = 0, 1, 2, and s1's events have project "p".
const fixtureN = 10

// wantCorruptAt verifies path and fails t unless Verify reports a
// *CorruptionError for seq.
func wantCorruptAt(t *testing.T, path string, seq uint64) {
	t.Helper()
	_, err := verifyFile(path)
	var ce *CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("Verify: err = %v, want a *CorruptionError", err)
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("errors.Is(%v, ErrCorrupt) = false", err)
	}
	if ce.Seq != seq {
		t.Fatalf("Verify: corruption at seq %d (%v), want seq %d", ce.Seq, err, seq)
	}
}

// rawRecord returns a copy of the stored bytes of seq.
func rawRecord(tx *bolt.Tx, seq uint64) []byte {
	return bytes.Clone(tx.Bucket(bucketLog).Get(seqKey(seq)))
}

// rewriteRecord decodes seq, lets change modify it and stores it again
// through encode, in the record's format.
func rewriteRecord(t *testing.T, path string, seq uint64, change func(*Record), encode func(format, *Record) []byte) {
	t.Helper()
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		v := rawRecord(tx, seq)
		f := formatOfRecord(v)
		var prev Hash
		if seq > 1 {
			pv := rawRecord(tx, seq-1)
			copy(prev[:], pv[len(pv)-crcLen-len(prev):])
		}
		r, err := f.decode(seq, v, prev)
		if err != nil {
			return err
		}
		change(r)
		return tx.Bucket(bucketLog).Put(seqKey(seq), encode(f, r))
	})
}

// encodeKeepHash encodes r in format f with its hash field left as
// r.Hash, the way a careless editor that knows the CRC but not the chain
// would.
func encodeKeepHash(f format, r *Record) []byte {
	old := r.Hash
	b := f.encode(r)
	env := b[:len(b)-crcLen]
	copy(env[len(env)-len(old):], old[:])
	return binary.BigEndian.AppendUint32(env, f.checksum(r.Seq, env))
}

func TestVerify_Corruption(t *testing.T) {
	t.Run("OK/Clean", func(t *testing.T) {
		path := newLogFile(t, fixtureN)
		rep := mustVerifyFile(t, path)
		if rep.HeadSeq != fixtureN || rep.Streams != 3 || rep.Projects != 1 {
			t.Fatalf("report = %+v", rep)
		}
	})

	t.Run("ErrCorrupt/FlippedByte", func(t *testing.T) {
		for _, seq := range []uint64{1, 5, fixtureN} {
			for _, where := range []string{"first", "middle", "hash", "crc"} {
				t.Run(fmt.Sprint(seq, where), func(t *testing.T) {
					path := newLogFile(t, fixtureN)
					rawUpdate(t, path, func(tx *bolt.Tx) error {
						b := rawRecord(tx, seq)
						i := map[string]int{"first": 0, "middle": len(b) / 2, "hash": len(b) - crcLen - 1, "crc": len(b) - 1}[where]
						b[i] ^= 0x40
						return tx.Bucket(bucketLog).Put(seqKey(seq), b)
					})
					wantCorruptAt(t, path, seq)
					l, err := Open(path, Options{ReadOnly: true})
					if err != nil {
						t.Fatal(err)
					}
					defer l.Close()
					var ce *CorruptionError
					err = l.ReadRange(0, 0, func(*Record) error { return nil })
					if !errors.As(err, &ce) || ce.Seq != seq {
						t.Errorf("ReadRange: err = %v, want corruption at seq %d", err, seq)
					}
					err = l.ReadStream(fmt.Sprint("s", (seq-1)%3+1), 0, func(*Record) error { return nil })
					if !errors.As(err, &ce) || ce.Seq != seq {
						t.Errorf("ReadStream: err = %v, want corruption at seq %d", err, seq)
					}
				})
			}
		}
	})

	t.Run("ErrCorrupt/EveryByte", func(t *testing.T) {
		// Flip each byte of one record in turn, verifying inside one bbolt
		// handle to keep the test fast.
		path := newLogFile(t, fixtureN)
		db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		const seq = 4
		var orig []byte
		_ = db.View(func(tx *bolt.Tx) error { orig = rawRecord(tx, seq); return nil })
		put := func(b []byte) {
			if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Put(seqKey(seq), b) }); err != nil {
				t.Fatal(err)
			}
		}
		for i := range orig {
			b := bytes.Clone(orig)
			b[i] ^= 1 << (i % 8)
			put(b)
			err := db.View(func(btx *bolt.Tx) error {
				_, err := verifyTx(newTx(&Log{format: testFormat}, btx), &pager{}, nil)
				return err
			})
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Seq != seq {
				t.Errorf("byte %d of %d flipped: err = %v, want corruption at seq %d", i, len(orig), err, seq)
			}
		}
		put(orig)
	})

	t.Run("ErrCorrupt/NewCRCOldHash", func(t *testing.T) {
		for _, seq := range []uint64{1, 5, fixtureN} {
			path := newLogFile(t, fixtureN)
			rewriteRecord(t, path, seq, func(r *Record) { r.Data = []byte("forged") }, encodeKeepHash)
			wantCorruptAt(t, path, seq)
		}
	})

	t.Run("ErrCorrupt/NewHashOtherContent", func(t *testing.T) {
		// A rewritten payload with a recomputed hash and CRC is
		// self-consistent: the chain (the next record's prev hash) or, for
		// the last record, meta's head hash catches it.
		for _, tt := range []struct{ seq, want uint64 }{{1, 2}, {5, 6}, {fixtureN, fixtureN}} {
			path := newLogFile(t, fixtureN)
			rewriteRecord(t, path, tt.seq, func(r *Record) { r.Data = []byte("forged") }, format.encode)
			wantCorruptAt(t, path, tt.want)
		}
	})

	t.Run("ErrCorrupt/NewHashBrokenChain", func(t *testing.T) {
		// Only the chain (the next record's prev hash) or, for the last
		// record, meta's head hash can catch this rewrite.
		for _, tt := range []struct{ seq, want uint64 }{{1, 2}, {5, 6}, {fixtureN - 1, fixtureN}, {fixtureN, fixtureN}} {
			path := newLogFile(t, fixtureN)
			rewriteRecord(t, path, tt.seq, func(r *Record) { r.Actor = "mallory" }, format.encode)
			wantCorruptAt(t, path, tt.want)
		}
	})

	t.Run("ErrCorrupt/SwappedRecords", func(t *testing.T) {
		path := newLogFile(t, fixtureN)
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			a, b := rawRecord(tx, 5), rawRecord(tx, 6)
			if err := tx.Bucket(bucketLog).Put(seqKey(5), b); err != nil {
				return err
			}
			return tx.Bucket(bucketLog).Put(seqKey(6), a)
		})
		wantCorruptAt(t, path, 5)
	})

	tests := []struct {
		name   string
		change func(*bolt.Tx) error
		seq    uint64
	}{
		{"DeletedRecord", func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Delete(seqKey(5)) }, 5},
		{"DeletedFirstRecord", func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Delete(seqKey(1)) }, 1},
		{"DeletedLastRecord", func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Delete(seqKey(fixtureN)) }, fixtureN},
		{"ExtraRecord", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLog).Put(seqKey(fixtureN+1), rawRecord(tx, fixtureN))
		}, fixtureN + 1},
		// stream_idx chunks: s1 holds seqs 1, 4, 7, 10; s2 2, 5, 8; s3 3, 6, 9.
		{"DeletedStreamIdx", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStreamIdx).Put(streamIdxKey("s1", 1), seqKey(1)) // versions 2.. (seq 4 on) gone
		}, 4},
		{"WrongStreamIdx", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStreamIdx).Put(streamIdxKey("s2", 1), append(append(seqKey(2), seqKey(4)...), seqKey(8)...))
		}, 5},
		{"ExtraStreamIdx", func(tx *bolt.Tx) error {
			v := bytes.Clone(tx.Bucket(bucketStreamIdx).Get(streamIdxKey("s2", 1)))
			return tx.Bucket(bucketStreamIdx).Put(streamIdxKey("s2", 1), append(v, seqKey(4)...))
		}, 0},
		{"ExtraStreamChunk", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStreamIdx).Put(streamIdxKey("s2", streamChunk+1), seqKey(4))
		}, 0},
		{"MalformedStreamIdx", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStreamIdx).Put(streamIdxKey("s3", 1), make([]byte, 7))
		}, 3},
		{"DeletedStreamIdxChunk", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStreamIdx).Delete(streamIdxKey("s3", 1))
		}, 3},
		{"DeletedID", func(tx *bolt.Tx) error { return tx.Bucket(bucketIDs).Delete(idKey(7)) }, 7},
		{"WrongIDSeq", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketIDs).Put(idKey(7), testFormat.idValue(6))
		}, 7},
		{"WrongIDValue", func(tx *bolt.Tx) error {
			v := bytes.Clone(tx.Bucket(bucketIDs).Get(idKey(3)))
			v[len(v)-1] ^= 1
			return tx.Bucket(bucketIDs).Put(idKey(3), v)
		}, 3},
		{"ExtraID", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketIDs).Put(idKey(99), tx.Bucket(bucketIDs).Get(idKey(1)))
		}, 0},
		// project_idx: p's one chunk, keyed by its first seq, holds 1, 4, 7, 10.
		{"DeletedProjectIdx", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketProjIdx).Put(projKey("p", 1), seqs(1, 7, 10))
		}, 4},
		{"UnsortedProjectIdx", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketProjIdx).Put(projKey("p", 1), seqs(1, 7, 4, 10))
		}, 1},
		{"DeletedProjectIdxChunk", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketProjIdx).Delete(projKey("p", 1))
		}, 1},
		{"MisplacedProjectIdxChunk", func(tx *bolt.Tx) error {
			if err := tx.Bucket(bucketProjIdx).Delete(projKey("p", 1)); err != nil {
				return err
			}
			return tx.Bucket(bucketProjIdx).Put(projKey("p", 4), seqs(1, 4, 7, 10))
		}, 1},
		{"ExtraProjectIdxSeq", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketProjIdx).Put(projKey("p", 1), seqs(1, 4, 7, 9, 10))
		}, 0},
		{"ExtraProjectIdx", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketProjIdx).Put(binary.BigEndian.AppendUint64(streamPrefix("q"), 5), nil)
		}, 0},
		{"MetaHeadSeqBehind", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(metaHeadSeq, seqKey(fixtureN-1))
		}, fixtureN},
		{"MetaHeadSeqAhead", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(metaHeadSeq, seqKey(fixtureN+1))
		}, fixtureN + 1},
		{"MetaHeadHash", func(tx *bolt.Tx) error {
			h := bytes.Clone(tx.Bucket(bucketMeta).Get(metaHeadHash))
			h[0] ^= 1
			return tx.Bucket(bucketMeta).Put(metaHeadHash, h)
		}, fixtureN},
	}
	for _, tt := range tests {
		t.Run("ErrCorrupt/"+tt.name, func(t *testing.T) {
			path := newLogFile(t, fixtureN)
			rawUpdate(t, path, tt.change)
			wantCorruptAt(t, path, tt.seq)
		})
	}

	// The walk lets go of a stream at its last record by stream_idx: with
	// s1's chunk cut to its first version, s1 is let go at seq 1, and its
	// next record is still found, and named as what it is.
	t.Run("ErrCorrupt/StreamIdxEndsEarly", func(t *testing.T) {
		path := newLogFile(t, fixtureN)
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			return tx.Bucket(bucketStreamIdx).Put(streamIdxKey("s1", 1), seqKey(1))
		})
		wantCorruptAt(t, path, 4)
		if _, err := verifyFile(path); err == nil || !strings.Contains(err.Error(), `stream index entry for "s1" version 2`) {
			t.Errorf("Verify = %v, want the stream index entry of s1's version 2 named", err)
		}
	})
}

func TestVerify_EmptyLogHeadHash(t *testing.T) {
	path := newLogFile(t, 0)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(metaHeadHash, bytes.Repeat([]byte{1}, len(Hash{})))
	})
	wantCorruptAt(t, path, 0)
}

// streamIdxKey is the stream_idx key of the chunk holding version.
func streamIdxKey(stream string, version uint64) []byte {
	return streamChunkKey(streamPrefix(stream), version)
}

// projKey is the project_idx key of project's chunk starting at seq.
func projKey(project string, seq uint64) []byte {
	return projectChunkKey(streamPrefix(project), seq)
}

// seqs is a project_idx or stream_idx value.
func seqs(s ...uint64) []byte {
	var b []byte
	for _, seq := range s {
		b = binary.BigEndian.AppendUint64(b, seq)
	}
	return b
}

// idKey is the ids bucket key of testID(n).
func idKey(n uint64) []byte {
	id := testID(n)
	return id[:]
}
