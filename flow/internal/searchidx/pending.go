package searchidx

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/flowctl/flowctl/flow/store"
)

// PendingSpan is how many seqs the pending entries span at most: the
// postings of the events after the last multiple of it that the index
// lists are kept per event, at the end of the bucket's 'q' keys, and
// moved into the lists' chunks when the index passes the next multiple
// (doc.go, "Pending postings"). A transaction of 1000 events then writes
// the chunks of its thousands of words once every four transactions, not
// every one; a query reads up to this many events' entries.
const PendingSpan = 4096

// pendingCut is the seq up to which an index of the log up to through
// holds its postings in the lists' chunks; the later ones are pending.
func pendingCut(through uint64) uint64 { return through / PendingSpan * PendingSpan }

// pendingKey is the key of the pending entry of the event at seq.
func pendingKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(nil, seq)
}

// firstPending is the seq of the first pending entry, or 0.
func firstPending(tx store.Tx) (uint64, error) {
	var seq uint64
	err := store.ScanShared(tx, PendingBucket, nil, func(k, _ []byte) error {
		if len(k) != 8 {
			return corruptPending(k)
		}
		seq = binary.BigEndian.Uint64(k)
		return store.ErrStop
	})
	return seq, err
}

// eachPending calls fn, in seq order, with the pending entry of every
// event of a posting after cut in lists (whose keys, sorted, are
// prefixes; every posting is before cut+PendingSpan). An entry's value
// is:
//
//	uint16 BE length and the event's project
//	per posting, in the order of its list's prefix, then posting:
//	  uint8 length and the word, uint16 BE the posting's low 16 bits
//
// It lays the entries out in one buffer, by the seq's offset from cut,
// in three passes over the postings: their sizes, their projects, and
// the postings.
func eachPending(prefixes []string, lists map[string]*[]Posting, cut uint64, fn func(k, v []byte) error) error {
	var size [PendingSpan]int32 // by seq - cut; the entry's end once laid out
	each := func(visit func(word, project []byte, ps []Posting)) error {
		for _, p := range prefixes {
			ps := *lists[p]
			later := ps[sortSearch(ps, cut):]
			if len(later) == 0 {
				continue
			}
			word, project, ok := parseListPrefix([]byte(p))
			if !ok || later[len(later)-1].Seq()-cut >= PendingSpan {
				return corrupt([]byte(p))
			}
			visit(word, project, later)
		}
		return nil
	}
	err := each(func(word, project []byte, ps []Posting) {
		for _, q := range ps {
			off := q.Seq() - cut
			if size[off] == 0 {
				size[off] = int32(2 + len(project))
			}
			size[off] += int32(1 + len(word) + 2)
		}
	})
	if err != nil {
		return err
	}
	var total int32
	for off, n := range size {
		total += n
		size[off] = total - n // the entry's start, until it is written
	}
	buf := make([]byte, total)
	wrote := make([]bool, PendingSpan)
	_ = each(func(word, project []byte, ps []Posting) {
		for _, q := range ps {
			off := q.Seq() - cut
			at := size[off]
			if !wrote[off] {
				wrote[off] = true
				binary.BigEndian.PutUint16(buf[at:], uint16(len(project)))
				at += 2 + int32(copy(buf[at+2:], project))
			}
			buf[at] = byte(len(word))
			at += 1 + int32(copy(buf[at+1:], word))
			binary.BigEndian.PutUint16(buf[at:], q.low())
			size[off] = at + 2
		}
	})
	start := int32(0)
	for off, end := range size {
		if !wrote[off] {
			continue
		}
		if err := fn(pendingKey(cut+uint64(off)), buf[start:end:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// decodePending calls fn with each posting of the pending entry k, v.
// The word and project alias v. A malformed entry is a
// *store.CorruptionError.
func decodePending(k, v []byte, fn func(seq uint64, project, word []byte, low uint16)) error {
	if len(k) != 8 || len(v) < 2 {
		return corruptPending(k)
	}
	seq := binary.BigEndian.Uint64(k)
	if seq == 0 || seq > math.MaxUint64>>16 {
		return corruptPending(k)
	}
	n := int(binary.BigEndian.Uint16(v))
	if len(v) < 2+n {
		return corruptPending(k)
	}
	project, v := v[2:2+n], v[2+n:]
	if len(v) == 0 {
		return corruptPending(k)
	}
	for len(v) > 0 {
		n := int(v[0])
		if n == 0 || len(v) < 1+n+2 {
			return corruptPending(k)
		}
		word, low := v[1:1+n], binary.BigEndian.Uint16(v[1+n:])
		if low == 0 {
			return corruptPending(k)
		}
		fn(seq, project, word, low)
		v = v[1+n+2:]
	}
	return nil
}

// parseListPrefix reads the word and project of a list's prefix.
func parseListPrefix(p []byte) (word, project []byte, ok bool) {
	if len(p) < 3 || p[0] != kindWord {
		return nil, nil, false
	}
	n := int(binary.BigEndian.Uint16(p[1:]))
	if len(p) < 3+n+2 || n > math.MaxUint8 {
		return nil, nil, false
	}
	word, p = p[3:3+n], p[3+n:]
	n = int(binary.BigEndian.Uint16(p))
	if len(p) != 2+n {
		return nil, nil, false
	}
	return word, p[2:], true
}

func corruptPending(k []byte) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("%s entry %x is malformed", PendingBucket, k)}
}
