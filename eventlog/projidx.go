package eventlog

import (
	"bytes"
	"encoding/binary"
	"math"

	bolt "go.etcd.io/bbolt"
)

// The project index keeps the seqs of a project's events in chunks of at
// most projectChunk: the key is the project and the first seq of the
// chunk, the value its seqs, ascending (doc.go). A merge of the index tail
// rewrites the project's last chunk with more seqs, or starts a new chunk
// when it is full. For the same reasons as stream_idx's chunks: a few
// chunks per page instead of about 115 entries, so a commit copies far
// less in and out of memory, and about 11 bytes per event instead of 35.

// projectChunk is the largest number of seqs of one project_idx entry.
const projectChunk = 64

// projectChunkKey is the project_idx key of a chunk whose first seq is
// seq, under the project's prefix (streamPrefix).
func projectChunkKey(prefix []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(make([]byte, 0, len(prefix)+8), prefix...), seq)
}

// projChunkOK reports whether k, v under prefix is a well-formed chunk:
// 1 to projectChunk seqs, ascending, the first one the key's.
func projChunkOK(prefix, k, v []byte) bool {
	if len(k) != len(prefix)+8 || len(v) == 0 || len(v)%8 != 0 || len(v) > 8*projectChunk ||
		!bytes.Equal(k[len(prefix):], v[:8]) {
		return false
	}
	for i := 8; i < len(v); i += 8 {
		if binary.BigEndian.Uint64(v[i:]) <= binary.BigEndian.Uint64(v[i-8:]) {
			return false
		}
	}
	return true
}

// projectChunkAt positions c on the chunk of the project (prefix) that
// holds seq or, if seq is in none, the one before where it would be: the
// last chunk whose first seq is at most seq. ok is false if there is
// none.
func projectChunkAt(c *bolt.Cursor, prefix []byte, seq uint64) (k, v []byte, ok bool) {
	k, v = c.Seek(projectChunkKey(prefix, seq))
	if bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8 && binary.BigEndian.Uint64(k[len(prefix):]) == seq {
		return k, v, true
	}
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	return k, v, bytes.HasPrefix(k, prefix)
}

// putProjectSeqs stores seqs, larger than every seq the project (prefix)
// has, in its chunks: it rewrites its last chunk if it has room, then
// starts new ones keyed by their first seq, and puts each chunk once,
// always a new slice (see putStreamSeqs). project names the project in
// the error for a malformed last chunk.
func putProjectSeqs(b *bolt.Bucket, project string, seqs []uint64) error {
	prefix := streamPrefix(project)
	var key, last []byte
	k, v, ok := projectChunkAt(b.Cursor(), prefix, math.MaxUint64)
	switch {
	case ok && !projChunkOK(prefix, k, v):
		return corruptf(0, "project index entry of %q is malformed", project)
	case ok && len(v) < 8*projectChunk:
		key, last = bytes.Clone(k), v
	}
	for len(seqs) > 0 {
		if key == nil {
			key = projectChunkKey(prefix, seqs[0])
		}
		n := min(projectChunk-len(last)/8, len(seqs))
		value := append(make([]byte, 0, len(last)+8*n), last...)
		for _, seq := range seqs[:n] {
			value = binary.BigEndian.AppendUint64(value, seq)
		}
		if err := b.Put(key, value); err != nil {
			return err
		}
		key, last, seqs = nil, nil, seqs[n:]
	}
	return nil
}

// readProject calls fn for the records of project from seq from on,
// checking each is of the project and in seq order; a damaged index is
// reported, never followed.
func (tx *Tx) readProject(rd recordReader, project string, from uint64, fn func(*Record) error) error {
	tailOnly, err := tx.tailHolds(from)
	if err != nil {
		return err
	}
	if !tailOnly {
		if err := tx.readProjectIdx(rd, project, from, fn); err != nil {
			return stopped(err) // ErrStop: the tail is not read either
		}
	}
	seqs, err := tx.tailSeqs(from, func(e *tailView) bool { return len(e.project) > 0 && string(e.project) == project })
	if err != nil {
		return err
	}
	return tx.readSeqs(rd, seqs, func(r *Record) bool { return r.Project == project }, fn)
}

// readProjectIdx is readProject's walk of project_idx; fn's ErrStop is
// returned as it is.
func (tx *Tx) readProjectIdx(rd recordReader, project string, from uint64, fn func(*Record) error) error {
	prefix := streamPrefix(project)
	c := tx.bucket(bucketProjIdx).Cursor()
	k, v, ok := projectChunkAt(c, prefix, from)
	if !ok {
		k, v = c.Seek(projectChunkKey(prefix, from))
	}
	var last uint64
	for ; bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if !projChunkOK(prefix, k, v) {
			return corruptf(0, "index %s has a malformed entry", bucketProjIdx)
		}
		for i := 0; i < len(v); i += 8 {
			seq := binary.BigEndian.Uint64(v[i:])
			if seq < from {
				continue
			}
			if seq <= last {
				return corruptf(seq, "index %s lists seq %d after %d", bucketProjIdx, seq, last)
			}
			last = seq
			r, err := rd(seq)
			if err != nil {
				return err
			}
			if r == nil {
				return corruptf(seq, "index %s points past the head", bucketProjIdx)
			}
			if r.Project != project {
				return corruptf(seq, "index %s points to a record that does not belong to it", bucketProjIdx)
			}
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}
