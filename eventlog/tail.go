package eventlog

import (
	"bytes"
	"cmp"
	"slices"

	"encoding/binary"
	"fmt"
	bolt "go.etcd.io/bbolt"
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
// page, past which a transaction merges the tail into the indexes: less than
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
	value   []byte // the whole value
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
	if len(k) != 8 {
		return e, false
	}
	return parseTailValue(binary.BigEndian.Uint64(k), v)
}

// parseTailValue reads the tail entry of seq from its value.
func parseTailValue(seq uint64, v []byte) (e tailView, ok bool) {
	if len(v) < tailFixed+2 {
		return e, false
	}
	e.seq, e.id, e.value = seq, v[:16], v
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
	if t, err := tx.txTail(); t != nil || err != nil {
		return t.seqOf(id), err
	}
	err = tx.scanTail(func(e *tailView) bool {
		if bytes.Equal(e.id, id[:]) {
			seq = e.seq
			return false
		}
		return true
	})
	return seq, err
}

// eachTail calls fn for each tail entry with seq >= from, in seq order,
// fn returning false stops: in a write transaction from its tail state
// (which holds what it appended), else from the bucket.
func (tx *Tx) eachTail(from uint64, fn func(*tailView) bool) error {
	t, err := tx.txTail()
	if err != nil {
		return err
	}
	if t == nil {
		return tx.scanTail(func(e *tailView) bool { return e.seq < from || fn(e) })
	}
	i, _ := slices.BinarySearchFunc(t.views, from, func(e tailView, seq uint64) int { return cmp.Compare(e.seq, seq) })
	for ; i < len(t.views); i++ {
		if !fn(&t.views[i]) {
			return nil
		}
	}
	return nil
}

// tailHolds reports whether the tail holds every record from seq from on,
// so that the indexes hold none: the tail starts at or before from, or
// it is empty and from is past the head. A read of the newest records
// (the engine indexes each command's) then skips the indexes.
func (tx *Tx) tailHolds(from uint64) (bool, error) {
	t, err := tx.txTail()
	if err != nil {
		return false, err
	}
	var first uint64
	switch {
	case t != nil && len(t.views) > 0:
		first = t.views[0].seq
	case t == nil:
		if k, _ := tx.bucket(bucketTail).Cursor().First(); len(k) == 8 {
			first = binary.BigEndian.Uint64(k)
		}
	}
	if first == 0 {
		head, _ := tx.Head()
		return from > head, nil
	}
	return first <= from, nil
}

// tailSeqs returns the seqs of the tail entries from seq from on that
// match, in order: collected first, so that a caller may append while it
// reads them.
func (tx *Tx) tailSeqs(from uint64, match func(*tailView) bool) ([]uint64, error) {
	var seqs []uint64
	err := tx.eachTail(from, func(e *tailView) bool {
		if match(e) {
			seqs = append(seqs, e.seq)
		}
		return true
	})
	return seqs, err
}

// txTailState is a write transaction's copy of the index tail: the
// entries the bucket held when the transaction first needed them, then
// those of the records it appended, which go to the bucket, or with the
// others into the indexes, only when it ends (flushTail). A transaction
// of a thousand appends so reads the bucket once and merges once, where
// an append that wrote its entries at once would scan the tail three
// times (its ids, its stream's head, its size) and merge every ~60
// events. It also keeps the stream heads the transaction has looked up
// or written, so that an append to a stream seen before reads no index.
//
// The bucket's entries are views of its values, not copies: bbolt keeps
// them where they are until the commit, and the transaction writes the
// bucket only when it ends (flushTail) or merges it (spillTail), after
// which it reads them no more. They are at most a page (tailMax), looked
// through when a map of the appended entries has no answer.
type txTailState struct {
	views  []tailView           // in seq order: the bucket's first, then the appended
	stored int                  // views[:stored] are in the bucket
	size   int                  // the size of all views as tail entries on a page
	byID   map[ID]uint64        // the ids of views[stored:]
	heads  map[string]streamPos // stream heads read or written
}

// streamPos is a stream's head: its version and the seq of its last event.
type streamPos struct{ version, seq uint64 }

// tailSpill is how many entries a transaction's tail state holds before
// it merges them into the indexes at once, to keep its memory bounded in
// transactions of any size.
const tailSpill = 8192

// txTail returns the transaction's tail state, loading it from the bucket
// on first use; nil in a read-only transaction, which reads the bucket.
func (tx *Tx) txTail() (*txTailState, error) {
	if tx.tail != nil || !tx.btx.Writable() {
		return tx.tail, nil
	}
	t := &txTailState{heads: map[string]streamPos{}}
	err := tx.scanTail(func(e *tailView) bool {
		t.views = append(t.views, *e)
		t.size += tailElemSize(len(e.value))
		return true
	})
	if err != nil {
		return nil, err
	}
	t.stored = len(t.views)
	tx.tail = t
	return t, nil
}

// seqOf returns the seq of event id in the state, 0 if it is not there.
func (t *txTailState) seqOf(id ID) uint64 {
	if seq, ok := t.byID[id]; ok {
		return seq
	}
	for i := range t.views[:t.stored] {
		if bytes.Equal(t.views[i].id, id[:]) {
			return t.views[i].seq
		}
	}
	return 0
}

// storedHead returns the version and seq of the stream's last entry among
// the bucket's, if it has one.
func (t *txTailState) storedHead(stream string) (streamPos, bool) {
	for i := t.stored - 1; i >= 0; i-- {
		if e := &t.views[i]; string(e.stream) == stream {
			return streamPos{e.version, e.seq}, true
		}
	}
	return streamPos{}, false
}

// add appends the entry of seq, whose encoded value is value, to the
// state; stream is the entry's stream.
func (t *txTailState) add(seq uint64, value []byte, stream string) error {
	e, ok := parseTailValue(seq, value)
	if !ok {
		return corruptf(0, "index tail entry %d is malformed", seq)
	}
	t.views = append(t.views, e)
	t.size += tailElemSize(len(value))
	if t.byID == nil {
		t.byID = map[ID]uint64{}
	}
	t.byID[ID(e.id)] = seq
	t.heads[stream] = streamPos{e.version, seq}
	return nil
}

// index records the index entries of new records in the transaction's
// tail state; flushTail stores them when the transaction ends.
func (tx *Tx) index(entries []indexEntry) error {
	t, err := tx.txTail()
	if err != nil {
		return err
	}
	for i := range entries {
		e := &entries[i]
		if err := t.add(e.seq, encodeTailEntry(e), e.stream); err != nil {
			return err
		}
	}
	if len(t.views) > tailSpill {
		return tx.spillTail()
	}
	return nil
}

// flushTail stores the entries the transaction appended: in the bucket
// if the tail then stays within tailMax bytes, else, with the bucket's,
// into the indexes, emptying the bucket.
func (tx *Tx) flushTail() error {
	t := tx.tail
	if t == nil || t.stored == len(t.views) {
		return nil
	}
	if t.size > tailMax {
		return tx.spillTail()
	}
	tail := tx.bucket(bucketTail)
	tail.FillPercent = 1.0
	for i := t.stored; i < len(t.views); i++ {
		if err := tail.Put(seqKey(t.views[i].seq), t.views[i].value); err != nil {
			return err
		}
	}
	t.stored = len(t.views)
	return nil
}

// spillTail merges the whole tail state into the indexes and empties it
// and the bucket. The stream heads stay: they are still every stream's.
func (tx *Tx) spillTail() error {
	t, err := tx.txTail()
	if err != nil {
		return err
	}
	all := make([]indexEntry, len(t.views))
	for i := range t.views {
		all[i] = t.views[i].entry()
	}
	if err := tx.mergeTail(t.stored > 0, all); err != nil {
		return err
	}
	t.views, t.stored, t.size = nil, 0, 0
	clear(t.byID)
	return nil
}

// mergeTail puts entries, the tail's and then new ones, into the
// indexes; if the bucket holds any (stored), it empties it by replacing
// the bucket: a new bucket is one small inline node, where deleting every
// key of a tail that bbolt had split would leave empty pages, which
// bbolt's cursors handle badly.
func (tx *Tx) mergeTail(stored bool, entries []indexEntry) error {
	if len(entries) == 0 {
		return nil
	}
	if err := tx.merge(entries); err != nil {
		return err
	}
	if stored {
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

// merge puts entries, in seq order, into ids, stream_idx and project_idx:
// each chunk of a stream or project they add to is put once.
func (tx *Tx) merge(entries []indexEntry) error {
	streamIdx, ids, projIdx := tx.bucket(bucketStreamIdx), tx.bucket(bucketIDs), tx.bucket(bucketProjIdx)
	streamIdx.FillPercent, ids.FillPercent, projIdx.FillPercent = fillStreamIdx, fillIDs, fillProjIdx
	if err := tx.mergeIDs(ids, entries); err != nil {
		return err
	}
	streams, projects := groupEntries(entries)
	for _, g := range streams {
		version, _, last, err := tx.streamHeadIdx(g.name)
		if err != nil {
			return err
		}
		if version+1 != g.first {
			return corruptf(g.seqs[0], "stream %q is at version %d in stream_idx, the index tail adds version %d", g.name, version, g.first)
		}
		if err := putStreamSeqs(streamIdx, streamPrefix(g.name), version, last, g.seqs); err != nil {
			return err
		}
	}
	for _, g := range projects {
		if err := putProjectSeqs(projIdx, g.name, g.seqs); err != nil {
			return err
		}
	}
	return nil
}

// mergeIDs puts the ids of entries into ids, their keys and values cut
// from one allocation each.
func (tx *Tx) mergeIDs(ids *bolt.Bucket, entries []indexEntry) error {
	keys := make([]byte, 0, len(ID{})*len(entries))
	values := make([]byte, 0, binary.MaxVarintLen64*len(entries))
	for i := range entries {
		e := &entries[i]
		keys = append(keys, e.id[:]...)
		n := len(values)
		values = tx.log.format.appendIDValue(values, e.seq)
		if err := ids.Put(keys[len(keys)-len(ID{}):], values[n:]); err != nil {
			return err
		}
	}
	return nil
}

// entryGroup is the seqs that entries add to one stream or project, in
// order; first is the stream version of the first.
type entryGroup struct {
	name  string
	first uint64
	seqs  []uint64
}

// groupEntries groups entries by stream and by project (none for ""), in
// the order each first appears. A stream's versions must follow one
// another; merge checks that the first follows stream_idx's.
func groupEntries(entries []indexEntry) (streams, projects []*entryGroup) {
	byStream, byProject := map[string]*entryGroup{}, map[string]*entryGroup{}
	group := func(m map[string]*entryGroup, list *[]*entryGroup, name string, e *indexEntry) *entryGroup {
		g := m[name]
		if g == nil {
			g = &entryGroup{name: name, first: e.version}
			m[name] = g
			*list = append(*list, g)
		}
		g.seqs = append(g.seqs, e.seq)
		return g
	}
	for i := range entries {
		e := &entries[i]
		group(byStream, &streams, e.stream, e)
		if e.project != "" {
			group(byProject, &projects, e.project, e)
		}
	}
	return streams, projects
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

// tailStreamHead returns the version and seq of the stream's last entry
// in the tail bucket, if it has one.
func (tx *Tx) tailStreamHead(stream string) (version, seq uint64, ok bool, err error) {
	err = tx.scanTail(func(e *tailView) bool {
		if string(e.stream) == stream {
			version, seq, ok = e.version, e.seq, true
		}
		return true
	})
	return version, seq, ok, err
}
