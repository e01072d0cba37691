package eventlog

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Report summarizes a clean Verify.
type Report struct {
	HeadSeq  uint64
	HeadHash Hash
	Streams  int
	Projects int
}

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
			return &CorruptionError{Reason: fmt.Sprintf("bbolt structure: %v", first)}
		}
		var err error
		rep, err = verifyTx(newTx(l, btx))
		return err
	})
	return rep, err
}

// verifier carries what the record walk learns, to check the indexes after.
type verifier struct {
	streams  map[string][2]uint64 // stream -> head version, head seq
	projects map[string]int       // project -> number of events
}

func verifyTx(tx *Tx) (Report, error) {
	v := verifier{streams: map[string][2]uint64{}, projects: map[string]int{}}
	headSeq, headHash := tx.Head()
	var seq uint64
	var prev Hash
	err := tx.scanLog(1, 0, func(r *Record, env []byte) error {
		if !hashOnRead { // else decodeRecord has checked it
			if err := checkHash(r, env); err != nil {
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
	if err := v.indexes(tx, seq); err != nil {
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
	if got, ok := tx.streamIdxSeq(r.Stream, r.Version); !ok || got != r.Seq {
		return corruptf(r.Seq, "stream index entry for %q version %d is wrong or missing", r.Stream, r.Version)
	}
	id := tx.bucket(bucketIDs).Get(r.ID[:])
	want := contentHash(r.Stream, &r.Event)
	if len(id) != 8+len(Hash{}) || binary.BigEndian.Uint64(id[:8]) != r.Seq || !bytes.Equal(id[8:], want[:]) {
		return corruptf(r.Seq, "id index entry for %s is wrong or missing", r.ID)
	}
	if r.Project != "" {
		if !tx.projIdxHas(r.Project, r.Seq) {
			return corruptf(r.Seq, "project index entry for %q is missing", r.Project)
		}
		v.projects[r.Project]++
	}
	return nil
}

// indexes checks that the indexes hold nothing the records do not explain.
func (v *verifier) indexes(tx *Tx, records uint64) error {
	projected := 0
	for _, n := range v.projects {
		projected += n
	}
	if got := tx.bucket(bucketIDs).Stats().KeyN; got != int(records) {
		return corruptf(0, "bucket %q has %d entries, the records explain %d", bucketIDs, got, records)
	}
	if got, ok := tx.streamIdxCount(); !ok || got != int(records) {
		return corruptf(0, "bucket %q has %d entries or a malformed one, the records explain %d", bucketStreamIdx, got, records)
	}
	if got, ok := tx.projIdxCount(); !ok || got != projected {
		return corruptf(0, "bucket %q has %d entries or a malformed one, the records explain %d", bucketProjIdx, got, projected)
	}
	return nil
}
