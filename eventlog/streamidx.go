package eventlog

import (
	"bytes"
	"encoding/binary"
	"math"

	bolt "go.etcd.io/bbolt"
)

// The stream index keeps the seqs of a stream's events in chunks of
// streamChunk versions: the key is the stream and the chunk's number, the
// value the seqs of its versions, in order (doc.go). A merge of the index
// tail rewrites the stream's last chunk with its new seqs. Against one
// entry per version, a leaf holds a few chunks instead of 65 entries, so
// that a commit, which copies the leaves it touches into memory and back,
// does a tenth of the work there, and the index takes about 12 bytes per
// event instead of 60.

// streamChunk is the number of versions of one stream_idx entry.
const streamChunk = 64

// streamChunkKey is the stream_idx key of the chunk holding version
// (from 1) of the stream whose prefix (streamPrefix) is given.
func streamChunkKey(prefix []byte, version uint64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, len(prefix)+8), prefix...), (version-1)/streamChunk)
}

// chunkOK reports whether k, v under prefix is a well-formed chunk.
func chunkOK(prefix, k, v []byte) bool {
	return len(k) == len(prefix)+8 && len(v) > 0 && len(v)%8 == 0 && len(v) <= 8*streamChunk &&
		binary.BigEndian.Uint64(k[len(prefix):]) <= (math.MaxUint64-1)/streamChunk
}

// chunkVersion is the version of the i-th seq (from 0) of chunk k.
func chunkVersion(prefix, k []byte, i int) uint64 {
	return binary.BigEndian.Uint64(k[len(prefix):])*streamChunk + uint64(i) + 1
}

// streamHead returns the stream's version and the seq of its last event:
// from the index tail if the stream is there, else from its last chunk
// in stream_idx. A malformed entry is a *CorruptionError, so that an
// append never starts the stream over on top of it.
func (tx *Tx) streamHead(stream string) (version, seq uint64, err error) {
	if t, err := tx.txTail(); t != nil || err != nil {
		return tx.cachedStreamHead(t, stream, err)
	}
	version, seq, ok, err := tx.tailStreamHead(stream)
	if ok || err != nil {
		return version, seq, err
	}
	version, seq, _, err = tx.streamHeadIdx(stream)
	return version, seq, err
}

// cachedStreamHead is streamHead in a write transaction: the head it has
// seen or appended, else the tail's, else stream_idx's, then kept.
func (tx *Tx) cachedStreamHead(t *txTailState, stream string, err error) (version, seq uint64, _ error) {
	if err != nil {
		return 0, 0, err
	}
	p, ok := t.heads[stream]
	if !ok {
		p, ok = t.storedHead(stream)
	}
	if ok {
		t.heads[stream] = p
		return p.version, p.seq, nil
	}
	if version, seq, _, err = tx.streamHeadIdx(stream); err == nil {
		t.heads[stream] = streamPos{version, seq}
	}
	return version, seq, err
}

// streamHeadIdx returns the stream's version and last seq in stream_idx,
// and its last chunk's value (valid in this transaction only), from one
// seek.
func (tx *Tx) streamHeadIdx(stream string) (version, seq uint64, last []byte, err error) {
	prefix := streamPrefix(stream)
	c := tx.bucket(bucketStreamIdx).Cursor()
	// Seek to just past the stream's largest possible key, then step back.
	k, v := c.Seek(binary.BigEndian.AppendUint64(bytes.Clone(prefix), math.MaxUint64))
	if !bytes.HasPrefix(k, prefix) {
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	switch {
	case !bytes.HasPrefix(k, prefix):
		return 0, 0, nil, nil
	case !chunkOK(prefix, k, v):
		return 0, 0, nil, corruptf(0, "stream index entry of %q is malformed", stream)
	}
	n := len(v) / 8
	return chunkVersion(prefix, k, n-1), binary.BigEndian.Uint64(v[len(v)-8:]), v, nil
}

// putStreamSeqs stores seqs as the versions of the stream (prefix) after
// version, whose chunk's value is last: it rewrites that chunk if it has
// room, then starts new ones, and puts each chunk once. bbolt keeps a
// value until the commit, so every value put is a new slice, never
// changed after.
func putStreamSeqs(b *bolt.Bucket, prefix []byte, version uint64, last []byte, seqs []uint64) error {
	for len(seqs) > 0 {
		room := streamChunk - int(version%streamChunk)
		if room == streamChunk {
			last = nil // version ends its chunk: a new one
		}
		n := min(room, len(seqs))
		value := append(make([]byte, 0, len(last)+8*n), last...)
		for _, seq := range seqs[:n] {
			value = binary.BigEndian.AppendUint64(value, seq)
		}
		if err := b.Put(streamChunkKey(prefix, version+1), value); err != nil {
			return err
		}
		version, seqs, last = version+uint64(n), seqs[n:], nil
	}
	return nil
}

// readStream calls fn for the records of stream from version from on.
// Each is checked to be the one its chunk says; a damaged index is
// reported, never followed.
func (tx *Tx) readStream(rd recordReader, stream string, from uint64, fn func(*Record) error) error {
	prefix := streamPrefix(stream)
	c := tx.bucket(bucketStreamIdx).Cursor()
	for k, v := c.Seek(streamChunkKey(prefix, from)); bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if !chunkOK(prefix, k, v) {
			return corruptf(0, "index %s has a malformed entry", bucketStreamIdx)
		}
		for i := range len(v) / 8 {
			version, seq := chunkVersion(prefix, k, i), binary.BigEndian.Uint64(v[8*i:])
			if version < from {
				continue
			}
			r, err := rd(seq)
			if err != nil {
				return err
			}
			if r == nil {
				return corruptf(seq, "index %s points past the head", bucketStreamIdx)
			}
			if r.Stream != stream || r.Version != version {
				return corruptf(seq, "index %s points to a record that does not belong to it", bucketStreamIdx)
			}
			if err := fn(r); err != nil {
				return stopped(err)
			}
		}
	}
	seqs, err := tx.tailSeqs(0, func(e *tailView) bool { return e.version >= from && string(e.stream) == stream })
	if err != nil {
		return err
	}
	return tx.readSeqs(rd, seqs, func(r *Record) bool { return r.Stream == stream }, fn)
}

// readSeqs calls fn for the records of seqs, which an index says match.
func (tx *Tx) readSeqs(rd recordReader, seqs []uint64, match func(*Record) bool, fn func(*Record) error) error {
	for _, seq := range seqs {
		r, err := rd(seq)
		if err != nil {
			return err
		}
		if r == nil || !match(r) {
			return corruptf(seq, "index tail points to a record that does not belong to it")
		}
		if err := fn(r); err != nil {
			return stopped(err)
		}
	}
	return nil
}
