package eventlog

import (
	"bytes"
	"encoding/binary"
	"sort"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	bolt "go.etcd.io/bbolt"
)

// Report summarizes a clean Verify.
type Report = store.VerifyReport

// Verify walks the whole file: bbolt's page structure, the CRC and hash of
// every record, the chain, seq contiguity, the stream, id and project
// indexes (both ways) and meta's head. It returns the first problem as a
// *CorruptionError naming the seq of the first bad record.
func (l *Log) Verify() (Report, error) { return l.VerifyWith(nil, nil) }

// VerifyWith is Verify that also tells the caller how it goes, so that
// checks of the caller's own can overlap it: checked is called once the
// file's trees have passed the shape check (verify_shape.go), before the
// record walk, and each with every record once it has passed its own
// checks, in seq order, lent as Replay lends it: Data is valid only
// during the call. An error of each ends the walk and is returned.
// Either may be nil. The records' hashes are checked beside the walk
// (hashCheck), so each may have seen records past the first one whose
// hash is bad by the time VerifyWith returns that one: a caller's check
// fed by each is only meaningful when VerifyWith returns no error.
//
// The check of the page structure (verify_pages.go) runs on a goroutine
// of its own beside the walk and the caller's reads, in the walk's
// transaction; its finding is the one returned when it has one. From
// checked on, the file's trees hold no cycle, so no read of the file can
// loop; a read that meets a damaged page ends in a *CorruptionError or
// reads garbage that a check then reports.
//
// The walk reads the log, ids, stream_idx and project_idx each in one
// forward pass, and gives the file's mapped pages back to the kernel as it
// goes (pager): its peak resident memory does not grow with the file.
func (l *Log) VerifyWith(checked func(), each func(*Record) error) (Report, error) {
	var rep Report
	err := l.view(func(btx *bolt.Tx) (err error) {
		pg := l.newPager(btx)
		defer pg.sequential()()
		if err := l.checkShape(btx, pg); err != nil {
			// Not the page check: it could recurse into a cycle of
			// pages.
			return &CorruptionError{Reason: damageReason(err.Error())}
		}
		pages := make(chan error, 1)
		go func() { pages <- l.checkPages(btx) }()
		defer func() {
			// The page check's finding comes first, even over a
			// damaged page's panic in the walk.
			perr := <-pages
			if r := recover(); r != nil {
				err = damageError(r)
			}
			if perr != nil {
				err = perr
			}
		}()
		if checked != nil {
			checked()
		}
		rep, err = verifyTx(newTx(l, btx), pg, each)
		return err
	})
	return rep, err
}

// KeepTrimmed keeps the resident part of the file's memory map small, as
// VerifyWith's walk does (pager), until stop is called: for a caller whose
// own reads beside or after the walk (the engine's check of its
// projections) cover the file again, so that the process's peak resident
// memory does not grow with the file either.
func (s logStore) KeepTrimmed() (stop func()) { return s.l.keepTrimmed() }

func (l *Log) keepTrimmed() (stop func()) {
	var pg *pager
	_ = l.view(func(btx *bolt.Tx) error { pg = l.newPager(btx); return nil })
	if pg == nil {
		return func() {}
	}
	l.trimming.Store(pg)
	stopTicks := trimEach(pg, keepTrimmedEvery)
	return func() {
		stopTicks()
		l.trimming.CompareAndSwap(pg, nil)
	}
}

// scanTrimStep is how many keys a scan reads between two trims while
// KeepTrimmed runs: a scan of a large bucket (the projections' tasks)
// faults its pages in faster than the ticker gives them back, a spike of
// resident memory as large as the bucket.
const scanTrimStep = 1 << 10

// trimEach trims pg's pages every d until stop is called.
func trimEach(pg *pager, d time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				pg.trim()
			}
		}
	}()
	return func() { close(done) }
}

// keepTrimmedEvery is how often KeepTrimmed trims: its caller's reads
// beside the record walk (which trims as it goes) fault pages in at a
// fraction of the walk's pace, and a tick of 1 ms, each reading
// /proc/self/statm, cost verify 3% of its CPU time.
const keepTrimmedEvery = 10 * time.Millisecond

// progressStep is how many records Verify checks between progress reports.
const progressStep = 1000

// trimStep is how many records Verify checks between two trims of the
// mapped pages.
const trimStep = 1 << 12

// verifier carries what the record walk learns, to check the indexes after.
type verifier struct {
	// streams are the heads of the streams that may have records yet:
	// a stream whose last record by stream_idx has been checked is let go
	// (record), so that what a walk holds is its open streams, not every
	// stream of the file. nStreams counts every stream met.
	streams  map[string]*streamCheck
	nStreams int
	projects map[string]*projectCheck

	tail        map[uint64]tailView // the index tail's entries by seq
	tailStreams map[string]bool     // the streams with entries in the tail
	tailFrom    uint64              // the smallest seq in tail (0: none)
	inTail      int                 // records found in the tail
	indexed     int                 // records found in the indexes
	projected   int                 // of them, records with a project

	// The indexes, each read forward as the walk goes.
	streamIdx *bolt.Bucket
	projCur   *bolt.Cursor
	idCur     *bolt.Cursor
	idStarted bool
}

// streamCheck is a stream's head so far and its stream_idx chunk.
type streamCheck struct {
	version, seq uint64
	chunk        []byte // the chunk of version, a view of its page
}

// projectCheck is a project's count so far and the project_idx chunk that
// listed its last record, with the position after it.
type projectCheck struct {
	events int
	chunk  []byte
	next   int
}

func verifyTx(tx *Tx, pg *pager, each func(*Record) error) (Report, error) {
	v := verifier{
		streams: map[string]*streamCheck{}, projects: map[string]*projectCheck{}, tail: map[uint64]tailView{}, tailStreams: map[string]bool{},
		streamIdx: tx.bucket(bucketStreamIdx), projCur: tx.bucket(bucketProjIdx).Cursor(), idCur: tx.bucket(bucketIDs).Cursor(),
	}
	err := tx.scanTail(func(e *tailView) bool {
		v.tail[e.seq] = *e
		v.tailStreams[string(e.stream)] = true
		if v.tailFrom == 0 || e.seq < v.tailFrom {
			v.tailFrom = e.seq
		}
		return true
	})
	if err != nil {
		return Report{}, err
	}
	headSeq, headHash := tx.Head()
	progress := tx.log.opts.Progress
	if progress == nil {
		progress = func(uint64, uint64) {}
	}
	progress(0, headSeq)
	var seq uint64
	var prev Hash
	var r Record
	strs := new(internCache)
	hc := newHashCheck(tx.log.format)
	ended := false
	defer func() {
		if !ended { // a damaged page's panic: the workers end all the same
			hc.end()
		}
	}()
	err = tx.walkLog(1, 0, func(s uint64, b []byte, before Hash) error {
		if s%progressStep == 0 {
			progress(min(s, headSeq), headSeq)
		}
		if s%trimStep == 0 {
			pg.trim()
		}
		if err := tx.log.format.decodeLent(&r, s, b, before, strs); err != nil {
			return err
		}
		if err := hc.add(&r, b[:len(b)-crcLen]); err != nil {
			return err
		}
		if r.Prev != prev {
			return corruptf(s, "hash chain broken: prev hash does not match the hash of seq %d", s-1)
		}
		if err := v.record(tx, &r); err != nil {
			return err
		}
		seq, prev = s, r.Hash
		if each != nil {
			return each(&r)
		}
		return nil
	})
	ended = true
	if herr := hc.end(); herr != nil {
		return Report{}, herr // the first bad seq: the walk's own finding is of a later one
	}
	if err != nil {
		return Report{}, err
	}
	if seq != headSeq || prev != headHash {
		// A record missing or extra past the shorter of the two is the
		// first bad one; with equal seqs only the last record (or meta's
		// hash, seq 0 for an empty log) can be wrong.
		bad := min(seq, headSeq) + 1
		if seq == headSeq {
			bad = seq
		}
		return Report{}, corruptf(bad, "meta head (seq %d) does not match the last record (seq %d) or its hash", headSeq, seq)
	}
	progress(headSeq, headSeq)
	if err := v.indexes(tx, pg); err != nil {
		return Report{}, err
	}
	return Report{HeadSeq: seq, HeadHash: prev, Streams: v.nStreams, Projects: len(v.projects)}, nil
}

// record checks one record's index entries and tracks stream heads.
func (v *verifier) record(tx *Tx, r *Record) error {
	st := v.streams[r.Stream]
	if st == nil {
		st = new(streamCheck)
		v.streams[r.Stream] = st
		v.nStreams++
	}
	if r.Version != st.version+1 {
		if st.version == 0 && (v.tailFrom == 0 || r.Seq < v.tailFrom) {
			// A stream met anew past its first version: let go of
			// (closeIfLast) because stream_idx ends before this record,
			// or a jump.
			if got, ok := v.streamIdxSeq(st, r.Stream, r.Version); !ok || got != r.Seq {
				return corruptf(r.Seq, "stream index entry for %q version %d is wrong or missing", r.Stream, r.Version)
			}
		}
		return corruptf(r.Seq, "stream %q jumps from version %d to %d", r.Stream, st.version, r.Version)
	}
	st.version, st.seq = r.Version, r.Seq
	var pc *projectCheck
	if r.Project != "" {
		if pc = v.projects[r.Project]; pc == nil {
			pc = new(projectCheck)
			v.projects[r.Project] = pc
		}
		pc.events++
	}
	// The tail holds the entries of the last records: once a record is
	// in it, every later one must be.
	if v.tailFrom != 0 && r.Seq >= v.tailFrom {
		if e, ok := v.tail[r.Seq]; ok {
			v.inTail++
			return verifyTail(&e, r)
		}
	}
	if v.inTail > 0 {
		return corruptf(r.Seq, "index tail misses the record")
	}
	v.indexed++
	if got, ok := v.streamIdxSeq(st, r.Stream, r.Version); !ok || got != r.Seq {
		return corruptf(r.Seq, "stream index entry for %q version %d is wrong or missing", r.Stream, r.Version)
	}
	v.closeIfLast(st, r)
	if seq, ok := tx.log.format.parseIDValue(v.idValue(r.ID[:])); !ok || seq != r.Seq {
		return corruptf(r.Seq, "id index entry for %s is wrong or missing", r.ID)
	}
	if pc != nil {
		if !v.projIdxHas(pc, r.Project, r.Seq) {
			return corruptf(r.Seq, "project index entry for %q is missing", r.Project)
		}
		v.projected++
	}
	return nil
}

// closeIfLast lets go of the head of r's stream when r, just checked
// against stream_idx, is the stream's last record there (the last entry
// of a chunk that is not full: every chunk but a stream's last is) and
// the index tail holds none of the stream's: no later record can be of
// that stream. One that is after all (a damaged log) is still found: it
// starts the stream again, so its version is not 1 (a jump) or its
// stream_idx entry names another seq (that of the stream's first
// record).
func (v *verifier) closeIfLast(st *streamCheck, r *Record) {
	n := len(st.chunk) / 8
	if n < streamChunk && int((r.Version-1)%streamChunk) == n-1 && !v.tailStreams[r.Stream] {
		delete(v.streams, r.Stream)
	}
}

// streamIdxSeq is Tx.streamIdxSeq reading each chunk once: st keeps the
// chunk of the stream's last version.
func (v *verifier) streamIdxSeq(st *streamCheck, stream string, version uint64) (uint64, bool) {
	i := int((version - 1) % streamChunk)
	if i == 0 || st.chunk == nil {
		st.chunk = v.streamIdx.Get(streamChunkKey(streamPrefix(stream), version))
	}
	if len(st.chunk)%8 != 0 || len(st.chunk) < 8*(i+1) {
		return 0, false
	}
	return binary.BigEndian.Uint64(st.chunk[8*i:]), true
}

// idValue is ids' Get of id through one cursor: ids are UUIDv7, so the
// next record's id is often the next key.
func (v *verifier) idValue(id []byte) []byte {
	var k, val []byte
	if v.idStarted {
		k, val = v.idCur.Next()
	}
	if !bytes.Equal(k, id) {
		k, val = v.idCur.Seek(id)
		v.idStarted = true
	}
	if !bytes.Equal(k, id) {
		return nil
	}
	return val
}

// projIdxHas is Tx.projIdxHas reading each chunk once: pc keeps the chunk
// that held the project's last record.
func (v *verifier) projIdxHas(pc *projectCheck, project string, seq uint64) bool {
	if 8*pc.next < len(pc.chunk) && binary.BigEndian.Uint64(pc.chunk[8*pc.next:]) == seq {
		pc.next++
		return true
	}
	prefix := streamPrefix(project)
	k, val, ok := projectChunkAt(v.projCur, prefix, seq)
	if !ok || !projChunkOK(prefix, k, val) {
		return false
	}
	n := len(val) / 8
	i := sort.Search(n, func(i int) bool { return binary.BigEndian.Uint64(val[8*i:]) >= seq })
	if i == n || binary.BigEndian.Uint64(val[8*i:]) != seq {
		return false
	}
	pc.chunk, pc.next = val, i+1
	return true
}

// indexes checks that the indexes and the tail hold nothing the records
// do not explain.
func (v *verifier) indexes(tx *Tx, pg *pager) error {
	if v.inTail != len(v.tail) {
		return corruptf(0, "index tail has %d entries, %d of them for records", len(v.tail), v.inTail)
	}
	if got, _ := countIndex(tx.bucket(bucketIDs), pg, func(k, v []byte) (int, bool) { return 1, true }); got != v.indexed {
		return corruptf(0, "bucket %q has %d entries, the records explain %d", bucketIDs, got, v.indexed)
	}
	if got, ok := countIndex(tx.bucket(bucketStreamIdx), pg, chunkLen(chunkOK)); !ok || got != v.indexed {
		return corruptf(0, "bucket %q has %d entries or a malformed one, the records explain %d", bucketStreamIdx, got, v.indexed)
	}
	if got, ok := countIndex(tx.bucket(bucketProjIdx), pg, chunkLen(projChunkOK)); !ok || got != v.projected {
		return corruptf(0, "bucket %q has %d entries or a malformed one, the records explain %d", bucketProjIdx, got, v.projected)
	}
	return nil
}

// countIndex sums n over the entries of b, trimming the pages it reads
// as it goes; false as soon as an entry is not ok.
func countIndex(b *bolt.Bucket, pg *pager, n func(k, v []byte) (int, bool)) (int, bool) {
	sum, i := 0, 0
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		m, ok := n(k, v)
		if !ok {
			return 0, false
		}
		if sum += m; i%trimStep == 0 {
			pg.trim()
		}
		i++
	}
	return sum, true
}

// chunkLen is the number of seqs of a stream_idx or project_idx entry,
// checked by ok under the entry's prefix (uint16 BE length and name).
func chunkLen(ok func(prefix, k, v []byte) bool) func(k, v []byte) (int, bool) {
	return func(k, v []byte) (int, bool) {
		if len(k) < 2 {
			return 0, false
		}
		prefix := k[:min(len(k), 2+int(binary.BigEndian.Uint16(k)))]
		return len(v) / 8, ok(prefix, k, v)
	}
}
