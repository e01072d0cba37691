package searchidx

import (
	"encoding/binary"
	"math"
	"slices"

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
	return binary.BigEndian.AppendUint64([]byte{kindPending}, seq)
}

// firstPending is the seq of the first pending entry, or 0.
func firstPending(tx store.Tx) (uint64, error) {
	var seq uint64
	err := tx.Scan(Bucket, []byte{kindPending}, func(k, _ []byte) error {
		if len(k) != 9 {
			return corrupt(k)
		}
		seq = binary.BigEndian.Uint64(k[1:])
		return store.ErrStop
	})
	return seq, err
}

// eachPending calls fn, in seq order, with the pending entry of every
// event of a posting after cut in lists (whose keys, sorted, are
// prefixes). An entry's value is:
//
//	uint16 BE length and the event's project
//	per posting, in the order of its list's prefix, then posting:
//	  uint8 length and the word, uint16 BE the posting's low 16 bits
func eachPending(prefixes []string, lists map[string]*[]Posting, cut uint64, fn func(k, v []byte) error) error {
	entries := map[uint64][]byte{}
	var seqs []uint64
	for _, p := range prefixes {
		ps := *lists[p]
		later := ps[sortSearch(ps, cut):]
		if len(later) == 0 {
			continue
		}
		word, project, ok := parseListPrefix([]byte(p))
		if !ok {
			return corrupt([]byte(p))
		}
		for _, q := range later {
			v, ok := entries[q.Seq()]
			if !ok {
				seqs = append(seqs, q.Seq())
				v = appendBytes16(make([]byte, 0, 64), project)
			}
			v = append(v, byte(len(word)))
			v = append(v, word...)
			entries[q.Seq()] = binary.BigEndian.AppendUint16(v, q.low())
		}
	}
	slices.Sort(seqs)
	for _, seq := range seqs {
		if err := fn(pendingKey(seq), entries[seq]); err != nil {
			return err
		}
	}
	return nil
}

// decodePending calls fn with each posting of the pending entry k, v.
// The word and project alias v. A malformed entry is a
// *store.CorruptionError.
func decodePending(k, v []byte, fn func(seq uint64, project, word []byte, low uint16)) error {
	if len(k) != 9 || len(v) < 2 {
		return corrupt(k)
	}
	seq := binary.BigEndian.Uint64(k[1:])
	if seq == 0 || seq > math.MaxUint64>>16 {
		return corrupt(k)
	}
	n := int(binary.BigEndian.Uint16(v))
	if len(v) < 2+n {
		return corrupt(k)
	}
	project, v := v[2:2+n], v[2+n:]
	if len(v) == 0 {
		return corrupt(k)
	}
	for len(v) > 0 {
		n := int(v[0])
		if n == 0 || len(v) < 1+n+2 {
			return corrupt(k)
		}
		word, low := v[1:1+n], binary.BigEndian.Uint16(v[1+n:])
		if low == 0 {
			return corrupt(k)
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

func appendBytes16(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(min(len(s), math.MaxUint16)))
	return append(b, s...)
}
