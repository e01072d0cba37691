package eventlog

import (
	"github.com/flowctl/flowctl/flow/store"
	bolt "go.etcd.io/bbolt"
)

// Report summarizes a clean Verify.
type Report = store.VerifyReport

// Verify walks the whole file: bbolt's page structure, the CRC and hash of
// every record, the chain, seq contiguity, the stream, id and project
// indexes (both ways) and meta's head. It returns the first problem as a
// *CorruptionError naming the seq of the first bad record.
func (l *Log) Verify() (Report, error) {
	var rep Report
	err := l.view(func(btx *bolt.Tx) error {
		var first error
		for err := range btx.Check() { // drain: Check's goroutine sends every error
			if first == nil {
				first = err
			}
		}
		if first != nil {
			return &CorruptionError{Reason: damageReason(first.Error())}
		}
		var err error
		rep, err = verifyTx(newTx(l, btx))
		return err
	})
	return rep, err
}

// progressStep is how many records Verify checks between progress reports.
const progressStep = 1000

// verifier carries what the record walk learns, to check the indexes after.
type verifier struct {
	streams  map[string][2]uint64 // stream -> head version, head seq
	projects map[string]int       // project -> number of events

	tail      map[uint64]tailView // the index tail's entries by seq
	inTail    int                 // records found in the tail
	indexed   int                 // records found in the indexes
	projected int                 // of them, records with a project
}

func verifyTx(tx *Tx) (Report, error) {
	v := verifier{streams: map[string][2]uint64{}, projects: map[string]int{}, tail: map[uint64]tailView{}}
	err := tx.scanTail(func(e *tailView) bool { v.tail[e.seq] = *e; return true })
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
	err = tx.scanLog(1, 0, func(r *Record, env []byte) error {
		if r.Seq%progressStep == 0 {
			progress(min(r.Seq, headSeq), headSeq)
		}
		if !hashOnRead { // else decode has checked it
			if err := tx.log.format.checkHash(r, env); err != nil {
				return err
			}
		}
		if r.Prev != prev {
			return corruptf(r.Seq, "hash chain broken: prev hash does not match the hash of seq %d", r.Seq-1)
		}
		if err := v.record(tx, r); err != nil {
			return err
		}
		seq, prev = r.Seq, r.Hash
		return nil
	})
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
	if err := v.indexes(tx); err != nil {
		return Report{}, err
	}
	return Report{HeadSeq: seq, HeadHash: prev, Streams: len(v.streams), Projects: len(v.projects)}, nil
}

// record checks one record's index entries and tracks stream heads.
func (v *verifier) record(tx *Tx, r *Record) error {
	head := v.streams[r.Stream]
	if r.Version != head[0]+1 {
		return corruptf(r.Seq, "stream %q jumps from version %d to %d", r.Stream, head[0], r.Version)
	}
	v.streams[r.Stream] = [2]uint64{r.Version, r.Seq}
	if r.Project != "" {
		v.projects[r.Project]++
	}
	// The tail holds the entries of the last records: once a record is
	// in it, every later one must be.
	if e, ok := v.tail[r.Seq]; ok {
		v.inTail++
		return verifyTail(&e, r)
	}
	if v.inTail > 0 {
		return corruptf(r.Seq, "index tail misses the record")
	}
	v.indexed++
	if got, ok := tx.streamIdxSeq(r.Stream, r.Version); !ok || got != r.Seq {
		return corruptf(r.Seq, "stream index entry for %q version %d is wrong or missing", r.Stream, r.Version)
	}
	if seq, ok := tx.log.format.parseIDValue(tx.bucket(bucketIDs).Get(r.ID[:])); !ok || seq != r.Seq {
		return corruptf(r.Seq, "id index entry for %s is wrong or missing", r.ID)
	}
	if r.Project != "" {
		if !tx.projIdxHas(r.Project, r.Seq) {
			return corruptf(r.Seq, "project index entry for %q is missing", r.Project)
		}
		v.projected++
	}
	return nil
}

// indexes checks that the indexes and the tail hold nothing the records
// do not explain.
func (v *verifier) indexes(tx *Tx) error {
	if v.inTail != len(v.tail) {
		return corruptf(0, "index tail has %d entries, %d of them for records", len(v.tail), v.inTail)
	}
	if got := tx.bucket(bucketIDs).Stats().KeyN; got != v.indexed {
		return corruptf(0, "bucket %q has %d entries, the records explain %d", bucketIDs, got, v.indexed)
	}
	if got, ok := tx.streamIdxCount(); !ok || got != v.indexed {
		return corruptf(0, "bucket %q has %d entries or a malformed one, the records explain %d", bucketStreamIdx, got, v.indexed)
	}
	if got, ok := tx.projIdxCount(); !ok || got != v.projected {
		return corruptf(0, "bucket %q has %d entries or a malformed one, the records explain %d", bucketProjIdx, got, v.projected)
	}
	return nil
}
