package eventlog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
	bolt "go.etcd.io/bbolt"
)

type (
	// BulkEvent is one event of Tx.AppendBulk.
	BulkEvent = store.BulkEvent
	// BulkAppended reports what Tx.AppendBulk did with each event.
	BulkAppended = store.BulkAppended
)

// AppendBulk appends events in order, each as Append(e.Stream,
// Exact(e.Version-1), e.Event) would (store.BulkAppender), without what
// an Append costs each event: the index tail (stored and the
// transaction's own) is merged first, so that an
// id or a stream head is read from the indexes with one lookup; the
// heads of the streams and the ids of the events appended are kept in
// memory; and the index entries of every event go into the indexes in one
// merge at the end, in seq order, not through the tail. Errors are a
// *store.BulkError naming the event, and the transaction must be rolled
// back (Update's callback returns the error).
func (tx *Tx) AppendBulk(events []BulkEvent) (BulkAppended, error) {
	out := BulkAppended{Seqs: make([]uint64, len(events)), Duplicate: make([]bool, len(events))}
	if !tx.btx.Writable() {
		return out, ErrReadOnly
	}
	if err := tx.spillTail(); err != nil {
		return out, err
	}
	tx.tail = nil // the stream heads it keeps change below: read them from the indexes again
	logB := tx.bucket(bucketLog)
	logB.FillPercent = fillLog
	seq, prev := tx.Head()
	last, err := tx.HeadTime()
	if err != nil {
		return out, err
	}
	heads := map[string]uint64{} // stream -> version, of the streams appended to
	here := make(map[ID]int, len(events))
	entries := make([]indexEntry, 0, len(events))
	recs := make([]Record, 0, len(events))
	// No stored id is after the last key of the id index: an event with a
	// later id (a UUIDv7 of a later time, the common case of an import) is
	// not looked up.
	lastID, _ := tx.bucket(bucketIDs).Cursor().Last()
	lastID = bytes.Clone(lastID)
	fail := func(i int, err error) (BulkAppended, error) { return out, &store.BulkError{Index: i, Err: err} }
	for i := range events {
		e := &events[i]
		ev := e.Event
		if ev.Time.IsZero() {
			ev.Time = tx.log.opts.Now()
		}
		if ev.ID.IsZero() {
			ev.ID = NewID(ev.Time)
		}
		if err := checkText("stream", e.Stream, MaxStreamLen, true); err != nil {
			return fail(i, err)
		}
		if err := checkEvent(&ev); err != nil {
			return fail(i, err)
		}
		if j, ok := here[ev.ID]; ok {
			if !sameContent(&Record{Stream: events[j].Stream, Event: events[j].Event}, e.Stream, &ev) {
				return fail(i, conflictf(ev.ID, out.Seqs[j]))
			}
			out.Seqs[i], out.Duplicate[i] = out.Seqs[j], true
			continue
		}
		if lastID != nil && bytes.Compare(ev.ID[:], lastID) <= 0 {
			if dup, err := tx.bulkDuplicate(e.Stream, &ev); err != nil {
				return fail(i, err)
			} else if dup != 0 {
				out.Seqs[i], out.Duplicate[i] = dup, true
				continue
			}
		}
		version, ok := heads[e.Stream]
		if !ok {
			if version, _, err = tx.streamHeadIdxOnly(e.Stream); err != nil {
				return fail(i, err)
			}
		}
		if e.Version == 0 || version != e.Version-1 {
			return fail(i, &VersionConflict{Stream: e.Stream, Expected: e.Version - 1, Actual: version})
		}
		seq++
		r := Record{Seq: seq, Stream: e.Stream, Version: e.Version, Event: ev}
		r.Time = notBefore(r.Time, last)
		last = r.Time
		recs = append(recs, r)
		entries = append(entries, indexEntry{seq: seq, id: r.ID, stream: e.Stream, version: e.Version, project: r.Project})
		heads[e.Stream], here[ev.ID], out.Seqs[i] = e.Version, i, seq
	}
	if len(entries) == 0 {
		return out, nil
	}
	if prev, err = tx.bulkPut(logB, recs, entries, prev); err != nil {
		return out, err
	}
	tx.headSeq, tx.headHash, tx.headDirty, tx.wrote = seq, prev, true, true
	tx.headTime, tx.timeLoaded = last, true
	return out, nil
}

// bulkPut puts recs, chained to prev, into the log bucket b, and their
// index entries into the indexes (bulkMerge), and returns the hash of
// the last. The records are encoded and hashed on a goroutine of their
// own while the indexes merge, which needs no hash: the chain is
// sequential, but not with the index writes.
func (tx *Tx) bulkPut(b *bolt.Bucket, recs []Record, entries []indexEntry, prev Hash) (Hash, error) {
	encoded := make(chan []byte, len(recs))
	go func(f format) {
		for i := range recs {
			recs[i].Prev = prev
			encoded <- f.encode(&recs[i])
			prev = recs[i].Hash
		}
		close(encoded)
	}(tx.log.format)
	err := tx.bulkMerge(entries)
	keys := make([]byte, 8*len(recs)) // one allocation for every key: bbolt keeps them to the commit
	for i := range recs {
		v := <-encoded // every one, so that the goroutine ends
		if err == nil {
			err = b.Put(binary.BigEndian.AppendUint64(keys[8*i:8*i:8*i+8], recs[i].Seq), v)
		}
	}
	return recs[len(recs)-1].Hash, err
}

// bulkDuplicate is duplicate for one event while the tail is empty: the
// seq of its stored copy when it has one with the same content, 0 when
// there is none.
func (tx *Tx) bulkDuplicate(stream string, ev *Event) (uint64, error) {
	v := tx.bucket(bucketIDs).Get(ev.ID[:])
	if v == nil {
		return 0, nil
	}
	seq, ok := tx.log.format.parseIDValue(v)
	if !ok {
		return 0, corruptf(0, "id index entry for %s is malformed", ev.ID)
	}
	r, err := tx.Record(seq)
	switch {
	case err != nil:
		return 0, err
	case r == nil || r.ID != ev.ID:
		return 0, corruptf(seq, "the index of event ids lists %s at seq %d, which holds another event", ev.ID, seq)
	case !sameContent(r, stream, ev):
		return 0, conflictf(ev.ID, seq)
	}
	return seq, nil
}

// streamHeadIdxOnly is streamHead while the tail is empty.
func (tx *Tx) streamHeadIdxOnly(stream string) (version, seq uint64, err error) {
	version, seq, _, err = tx.streamHeadIdx(stream)
	return version, seq, err
}

func conflictf(id ID, seq uint64) error {
	return fmt.Errorf("%w: event id %s was already used for different content (seq %d)", ErrConflict, id, seq)
}

// bulkMerge is merge for the entries of one AppendBulk, the tail empty:
// the same keys and values, each written once and in key order, where
// merge puts a stream's or a project's chunk again for each of its new
// seqs and the ids in seq order. bbolt finds a key from the root for each
// put and shifts a node's keys for one that lands in its middle.
func (tx *Tx) bulkMerge(entries []indexEntry) error {
	streamIdx, ids, projIdx := tx.bucket(bucketStreamIdx), tx.bucket(bucketIDs), tx.bucket(bucketProjIdx)
	streamIdx.FillPercent, ids.FillPercent, projIdx.FillPercent = fillStreamIdx, fillIDs, fillProjIdx
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(entries[a].id[:], entries[b].id[:]) })
	// The keys and values in two allocations, not two for each: bbolt
	// keeps them to the commit.
	keys, values := make([]byte, 0, len(entries)*len(ID{})), make([]byte, 0, len(entries)*binary.MaxVarintLen64)
	for _, i := range order {
		k, v := len(keys), len(values)
		keys, values = append(keys, entries[i].id[:]...), tx.log.format.appendIDValue(values, entries[i].seq)
		if err := ids.Put(keys[k:len(keys):len(keys)], values[v:len(values):len(values)]); err != nil {
			return err
		}
	}
	// A key sorts as its prefix does: the name's length, then the name.
	byKey := func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return bytes.Compare([]byte(a), []byte(b))
	}
	streams, projects := map[string][]int{}, map[string][]int{}
	for i := range entries {
		streams[entries[i].stream] = append(streams[entries[i].stream], i)
		if entries[i].project != "" {
			projects[entries[i].project] = append(projects[entries[i].project], i)
		}
	}
	for _, stream := range slices.SortedFunc(maps.Keys(streams), byKey) {
		if err := tx.bulkStream(streamIdx, stream, entries, streams[stream]); err != nil {
			return err
		}
	}
	for _, project := range slices.SortedFunc(maps.Keys(projects), byKey) {
		if err := bulkProject(projIdx, project, entries, projects[project]); err != nil {
			return err
		}
	}
	return nil
}

// bulkStream writes the chunks of stream's new entries (of index idx).
func (tx *Tx) bulkStream(b *bolt.Bucket, stream string, entries []indexEntry, idx []int) error {
	version, _, last, err := tx.streamHeadIdx(stream)
	if err != nil {
		return err
	}
	if first := &entries[idx[0]]; version+1 != first.version {
		return corruptf(first.seq, "stream %q is at version %d in stream_idx, the index tail adds version %d", stream, version, first.version)
	}
	prefix := streamPrefix(stream)
	var key, value []byte
	if version%streamChunk != 0 { // the last chunk has room
		key, value = streamChunkKey(prefix, version), append(make([]byte, 0, 8*streamChunk), last...)
	}
	for _, i := range idx {
		e := &entries[i]
		if (e.version-1)%streamChunk == 0 {
			if key != nil {
				if err := b.Put(key, value); err != nil {
					return err
				}
			}
			key, value = streamChunkKey(prefix, e.version), make([]byte, 0, 8*streamChunk)
		}
		value = binary.BigEndian.AppendUint64(value, e.seq)
	}
	return b.Put(key, value)
}

// bulkProject writes the chunks of project's new entries (of index idx).
func bulkProject(b *bolt.Bucket, project string, entries []indexEntry, idx []int) error {
	prefix := streamPrefix(project)
	var key, value []byte
	k, v, ok := projectChunkAt(b.Cursor(), prefix, math.MaxUint64)
	switch {
	case ok && !projChunkOK(prefix, k, v):
		return corruptf(0, "project index entry of %q is malformed", project)
	case ok && len(v) < 8*projectChunk:
		key, value = bytes.Clone(k), append(make([]byte, 0, 8*projectChunk), v...)
	}
	for _, i := range idx {
		if len(value) == 0 || len(value) == 8*projectChunk {
			if len(value) > 0 {
				if err := b.Put(key, value); err != nil {
					return err
				}
			}
			key, value = projectChunkKey(prefix, entries[i].seq), make([]byte, 0, 8*projectChunk)
		}
		value = binary.BigEndian.AppendUint64(value, entries[i].seq)
	}
	return b.Put(key, value)
}
