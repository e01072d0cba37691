package eventlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// The index tail holds the index entries of the last records: what an
// append would put into ids, stream_idx and project_idx, kept in one small
// bucket until tailMax of them are there, then merged into the indexes in
// one go (doc.go, "The index tail"). Each index an append touches costs
// the commit a leaf page and the branch pages above it, and each page
// about 20 µs of fsync here; the tail is one page or, while it is under a
// quarter of a page, no page at all (bbolt keeps a bucket that small inside
// its parent's page). Readers look in both: every seq in the tail is
// larger than every seq in the indexes.

// tailMax is the size of the tail's entries, as bbolt lays them out on a
// page, past which an append merges the tail into the indexes: less than
// one page with its 16-byte header, which bbolt would split in two. With
// 10-byte stream names and 5-byte project names that is 60 entries.
const tailMax = 4096 - 16 - 1

// tailElemSize is the size of a tail entry on a bbolt page: the element
// header, the key and the value.
func tailElemSize(value int) int { return 16 + 8 + value }

// indexEntry is what a record adds to the indexes.
type indexEntry struct {
	seq     uint64
	id      ID
	stream  string
	version uint64
	project string
}

// tailView is an index entry read from the tail, its strings aliasing the
// bucket's bytes (valid in the transaction only).
type tailView struct {
	seq     uint64
	id      []byte
	stream  []byte
	version uint64
	project []byte
}

// The tail's value: id (16), uint64 BE version, uint16 BE length and
// stream, uint16 BE length and project.
const tailFixed = 16 + 8

func encodeTailEntry(e *indexEntry) []byte {
	b := make([]byte, 0, tailFixed+2+len(e.stream)+2+len(e.project))
	b = append(b, e.id[:]...)
	b = binary.BigEndian.AppendUint64(b, e.version)
	return appendPrefix(appendPrefix(b, e.stream), e.project)
}

// parseTailEntry reads a tail entry; ok is false if it is malformed.
func parseTailEntry(k, v []byte) (e tailView, ok bool) {
	if len(k) != 8 || len(v) < tailFixed+2 {
		return e, false
	}
	e.seq, e.id = binary.BigEndian.Uint64(k), v[:16]
	e.version = binary.BigEndian.Uint64(v[16:24])
	rest := v[tailFixed:]
	n := int(binary.BigEndian.Uint16(rest))
	if len(rest) < 2+n+2 {
		return e, false
	}
	e.stream, rest = rest[2:2+n], rest[2+n:]
	n = int(binary.BigEndian.Uint16(rest))
	if len(rest) != 2+n {
		return e, false
	}
	e.project = rest[2:]
	return e, e.version > 0 && len(e.stream) > 0
}

func (e *tailView) entry() indexEntry {
	out := indexEntry{seq: e.seq, stream: string(e.stream), version: e.version, project: string(e.project)}
	copy(out.id[:], e.id)
	return out
}

// scanTail calls fn for each tail entry, in seq order; fn returning false
// stops. A malformed entry is a *CorruptionError. It only ever walks
// forward: bbolt's Cursor.Last loops forever on a bucket whose leaves were
// all emptied by deletes in the same transaction.
func (tx *Tx) scanTail(fn func(*tailView) bool) error {
	c := tx.bucket(bucketTail).Cursor()
	var e tailView // one for the scan: fn(&e) makes it escape
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var ok bool
		e, ok = parseTailEntry(k, v)
		if !ok {
			return corruptf(0, "index tail entry %x is malformed", k)
		}
		if !fn(&e) {
			return nil
		}
	}
	return nil
}

// tailLen returns the number of tail entries and their size on a page.
func (tx *Tx) tailLen() (n, size int) {
	c := tx.bucket(bucketTail).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		n, size = n+1, size+tailElemSize(len(v))
	}
	return n, size
}

// tailByID returns the seq of event id in the tail, 0 if it is not there.
func (tx *Tx) tailByID(id ID) (seq uint64, err error) {
	err = tx.scanTail(func(e *tailView) bool {
		if bytes.Equal(e.id, id[:]) {
			seq = e.seq
			return false
		}
		return true
	})
	return seq, err
}

// tailStreamHead returns the version and seq of the stream's last entry
// in the tail, if it has one.
func (tx *Tx) tailStreamHead(stream string) (version, seq uint64, ok bool, err error) {
	err = tx.scanTail(func(e *tailView) bool {
		if string(e.stream) == stream {
			version, seq, ok = e.version, e.seq, true
		}
		return true
	})
	return version, seq, ok, err
}

// tailSeqs returns the seqs of the tail entries that match, in order:
// collected first, so that a caller may append while it reads them.
func (tx *Tx) tailSeqs(match func(*tailView) bool) ([]uint64, error) {
	var seqs []uint64
	err := tx.scanTail(func(e *tailView) bool {
		if match(e) {
			seqs = append(seqs, e.seq)
		}
		return true
	})
	return seqs, err
}

// index stores the index entries of new records: in the tail, or, when
// the tail would grow past tailMax bytes, into the indexes together with
// the tail's, emptying it.
func (tx *Tx) index(entries []indexEntry) error {
	tail := tx.bucket(bucketTail)
	tail.FillPercent = 1.0
	_, size := tx.tailLen()
	values := make([][]byte, len(entries))
	for i := range entries {
		values[i] = encodeTailEntry(&entries[i])
		if size += tailElemSize(len(values[i])); size > tailMax {
			return tx.mergeTail(entries...)
		}
	}
	for i := range entries {
		if err := tail.Put(seqKey(entries[i].seq), values[i]); err != nil {
			return err
		}
	}
	return nil
}

// mergeTail moves the tail's entries, then entries, into the indexes. It
// empties the tail by replacing the bucket: a new bucket is one small
// inline node, where deleting every key of a tail that bbolt had split
// would leave empty pages, which bbolt's cursors handle badly.
func (tx *Tx) mergeTail(entries ...indexEntry) error {
	var all []indexEntry
	err := tx.scanTail(func(e *tailView) bool {
		all = append(all, e.entry())
		return true
	})
	if err != nil {
		return err
	}
	if len(all)+len(entries) == 0 {
		return nil
	}
	if err := tx.merge(append(all, entries...)); err != nil {
		return err
	}
	if len(all) > 0 {
		if err := tx.btx.DeleteBucket(bucketTail); err != nil {
			return err
		}
		if _, err := tx.btx.CreateBucket(bucketTail); err != nil {
			return err
		}
	}
	tx.wrote = true
	return nil
}

// merge puts entries, in seq order, into ids, stream_idx and project_idx.
func (tx *Tx) merge(entries []indexEntry) error {
	streamIdx, ids, projIdx := tx.bucket(bucketStreamIdx), tx.bucket(bucketIDs), tx.bucket(bucketProjIdx)
	streamIdx.FillPercent, ids.FillPercent, projIdx.FillPercent = fillStreamIdx, fillIDs, fillProjIdx
	streams := map[string]*streamIdxWriter{}
	projects := projIdxWriters{bucket: projIdx}
	for i := range entries {
		e := &entries[i]
		w := streams[e.stream]
		if w == nil {
			version, _, last, err := tx.streamHeadIdx(e.stream)
			if err != nil {
				return err
			}
			if version+1 != e.version {
				return corruptf(e.seq, "stream %q is at version %d in stream_idx, the index tail adds version %d", e.stream, version, e.version)
			}
			w = newStreamIdxWriter(streamIdx, e.stream, version, last)
			streams[e.stream] = w
		}
		if err := w.add(e.version, e.seq); err != nil {
			return err
		}
		if err := ids.Put(bytes.Clone(e.id[:]), tx.log.format.idValue(e.seq)); err != nil {
			return err
		}
		if e.project != "" {
			if err := projects.add(e.project, e.seq); err != nil {
				return err
			}
		}
	}
	return nil
}

// verifyTail checks the tail entry of r.
func verifyTail(e *tailView, r *Record) error {
	switch {
	case !bytes.Equal(e.id, r.ID[:]):
		return corruptf(r.Seq, "index tail entry says id %x, the record %s", e.id, r.ID)
	case string(e.stream) != r.Stream || e.version != r.Version || string(e.project) != r.Project:
		return corruptf(r.Seq, "index tail entry says %s", fmt.Sprintf("stream %q version %d project %q", e.stream, e.version, e.project))
	}
	return nil
}
