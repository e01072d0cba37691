package eventlog

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
)

// The reverse reads hand records newest first, for the engine's
// newest-first log: a walk from a bound down that reads only what it
// hands over, where a forward read would read everything before. They
// read the index tail first (every seq there is larger than every seq in
// the indexes), then stream_idx or project_idx chunks from the last one
// down. Records come from Tx.Record, checked against their hash and
// owning their memory, and are checked to be the ones the index says, as
// the forward reads check them.

// ReadRangeBack calls fn for every record with from <= seq <= to, newest
// first; to == 0 or past the head reads from the head.
func (tx *Tx) ReadRangeBack(from, to uint64, fn func(*Record) error) error {
	head, _ := tx.Head()
	if to == 0 || to > head {
		to = head
	}
	for seq := to; seq >= max(from, 1); seq-- {
		r, err := tx.Record(seq)
		if err != nil {
			return err
		}
		if r == nil {
			return corruptf(seq, "record is missing")
		}
		if err := fn(r); err != nil {
			return stopped(err)
		}
	}
	return nil
}

// ReadStreamBack calls fn for every record of stream with version <= to,
// newest first; to == 0 or past the stream's head reads from its head.
func (tx *Tx) ReadStreamBack(stream string, to uint64, fn func(*Record) error) error {
	if to == 0 {
		to = math.MaxUint64
	}
	want := uint64(0) // the version the next record must have; 0: any
	check := func(r *Record, version uint64) error {
		if r.Stream != stream || r.Version != version {
			return corruptf(r.Seq, "index %s points to a record that does not belong to it", bucketStreamIdx)
		}
		if want != 0 && version != want {
			return corruptf(r.Seq, "index %s skips from version %d to %d", bucketStreamIdx, want, version)
		}
		want = version - 1
		return fn(r)
	}
	tail, err := tx.tailBack(func(e *tailView) bool { return e.version <= to && string(e.stream) == stream })
	if err != nil {
		return err
	}
	for _, e := range tail {
		if err := tx.readBack(e.seq, func(r *Record) error { return check(r, e.version) }); err != nil {
			return stopped(err)
		}
	}
	prefix := streamPrefix(stream)
	c := tx.bucket(bucketStreamIdx).Cursor()
	from := streamChunkKey(prefix, min(to, math.MaxUint64-1))
	k, v := c.Seek(from)
	if !bytes.Equal(k, from) {
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	for ; bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		if !chunkOK(prefix, k, v) {
			return corruptf(0, "index %s has a malformed entry", bucketStreamIdx)
		}
		for i := len(v)/8 - 1; i >= 0; i-- {
			version := chunkVersion(prefix, k, i)
			if version > to {
				continue
			}
			seq := binary.BigEndian.Uint64(v[8*i:])
			if err := tx.readBack(seq, func(r *Record) error { return check(r, version) }); err != nil {
				return stopped(err)
			}
		}
	}
	return nil
}

// ReadProjectBack calls fn for every record of project with seq <= to,
// newest first; to == 0 reads from the head.
func (tx *Tx) ReadProjectBack(project string, to uint64, fn func(*Record) error) error {
	if to == 0 {
		to = math.MaxUint64
	}
	last := uint64(math.MaxUint64) // the seq handed last; the next is smaller
	check := func(r *Record) error {
		if r.Project != project {
			return corruptf(r.Seq, "index %s points to a record that does not belong to it", bucketProjIdx)
		}
		if r.Seq >= last {
			return corruptf(r.Seq, "index %s lists seq %d before %d", bucketProjIdx, r.Seq, last)
		}
		last = r.Seq
		return fn(r)
	}
	tail, err := tx.tailBack(func(e *tailView) bool {
		return e.seq <= to && len(e.project) > 0 && string(e.project) == project
	})
	if err != nil {
		return err
	}
	for _, e := range tail {
		if err := tx.readBack(e.seq, check); err != nil {
			return stopped(err)
		}
	}
	prefix := streamPrefix(project)
	c := tx.bucket(bucketProjIdx).Cursor()
	k, v, ok := projectChunkAt(c, prefix, to)
	for ; ok && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		if !projChunkOK(prefix, k, v) {
			return corruptf(0, "index %s has a malformed entry", bucketProjIdx)
		}
		for i := len(v) - 8; i >= 0; i -= 8 {
			seq := binary.BigEndian.Uint64(v[i:])
			if seq > to {
				continue
			}
			if err := tx.readBack(seq, check); err != nil {
				return stopped(err)
			}
		}
	}
	return nil
}

// readBack reads the record at seq, which an index lists, and hands it to
// fn; a seq past the head is reported as a damaged index.
func (tx *Tx) readBack(seq uint64, fn func(*Record) error) error {
	r, err := tx.Record(seq)
	if err != nil {
		return err
	}
	if r == nil {
		return corruptf(seq, "an index points past the head")
	}
	return fn(r)
}

// tailBack returns the tail entries that match, newest first. They are
// collected walking forward (see scanTail) and copied, so that the
// caller may read records while it goes through them.
func (tx *Tx) tailBack(match func(*tailView) bool) ([]indexEntry, error) {
	var out []indexEntry
	err := tx.eachTail(0, func(e *tailView) bool {
		if match(e) {
			out = append(out, e.entry())
		}
		return true
	})
	slices.Reverse(out)
	return out, err
}
