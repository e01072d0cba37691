package searchidx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
)

// Bucket holds the index's chunks, PendingBucket its pending entries
// (doc.go).
const (
	Bucket        = "search_idx"
	PendingBucket = "search_pending"
)

// ChunkSize is the number of postings of a full chunk.
const ChunkSize = 64

// The kinds of key, its first byte: a chunk of postings, or a block of
// the first postings and best postings' low bits of a list's chunks.
const (
	kindWord   byte = 'w'
	kindImpact byte = 'i'
)

// BlockSize is the number of chunks a full block of impacts describes.
const BlockSize = 64

// Posting is one packed posting (doc.go).
type Posting uint64

// NewPosting packs a posting.
func NewPosting(seq uint64, f Field, tf, length int) Posting {
	return Posting(seq<<16 | uint64(f&0xF)<<12 | uint64(min(tf, 15))<<8 | uint64(min(length, 255)))
}

// Seq is the seq of the event.
func (p Posting) Seq() uint64 { return uint64(p) >> 16 }

// Field is the field the word is in.
func (p Posting) Field() Field { return Field(p >> 12 & 0xF) }

// TF is how often the word is in the field's text (at most 15).
func (p Posting) TF() int { return int(p >> 8 & 0xF) }

// Len is how many words the field's text has (at most 255).
func (p Posting) Len() int { return int(p & 0xFF) }

// low is the posting's field, count and length: all its score depends on
// but the word's idf.
func (p Posting) low() uint16 { return uint16(p) }

// wordPrefix is the key prefix of every project's list of word.
func wordPrefix(word string) []byte {
	b := []byte{kindWord}
	b = binary.BigEndian.AppendUint16(b, uint16(min(len(word), math.MaxUint16)))
	return append(b, word...)
}

// listPrefix is the key prefix of the list of word in project.
func listPrefix(word, project string) []byte { return appendListPrefix(nil, word, project) }

func appendListPrefix[S string | []byte](b []byte, word S, project string) []byte {
	b = append(b, kindWord)
	b = binary.BigEndian.AppendUint16(b, uint16(min(len(word), math.MaxUint16)))
	b = append(b, word...)
	b = binary.BigEndian.AppendUint16(b, uint16(min(len(project), math.MaxUint16)))
	return append(b, project...)
}

// impactPrefix is the prefix of the impact blocks of the list whose
// prefix is list (a copy, its kind byte changed).
func impactPrefix(list []byte) []byte {
	b := bytes.Clone(list)
	b[0] = kindImpact
	return b
}

// appendImpact appends the entry of a chunk whose first posting is first
// to a block's value, after the entry of the chunk whose first posting is
// prev (the block's first chunk: first itself): the uvarint of the seq's
// difference from prev's, shifted left once, its low bit set when the
// chunk's best posting has first's low 16 bits; first's low 16 bits
// (uint16 BE); the best posting's (uint16 BE) when they differ.
func appendImpact(b []byte, prev, first Posting, impact uint16) []byte {
	d := (first.Seq() - prev.Seq()) << 1
	if impact == first.low() {
		d |= 1
	}
	b = binary.BigEndian.AppendUint16(binary.AppendUvarint(b, d), first.low())
	if d&1 == 0 {
		b = binary.BigEndian.AppendUint16(b, impact)
	}
	return b
}

// eachImpact calls fn with each chunk entry of the block k, v (whose key
// is prefixLen bytes before its first chunk's first posting), in order.
func eachImpact(prefixLen int, k, v []byte, fn func(first Posting, impact uint16)) error {
	if len(k) != prefixLen+8 || len(v) == 0 {
		return corrupt(k)
	}
	prev := Posting(binary.BigEndian.Uint64(k[prefixLen:]))
	for n := 0; len(v) > 0; n++ {
		d, w := binary.Uvarint(v)
		if w <= 0 || v[w-1] == 0 && w > 1 || n == BlockSize || d>>1 > math.MaxUint64>>16-prev.Seq() || len(v) < w+2 {
			return corrupt(k)
		}
		first := Posting((prev.Seq()+d>>1)<<16 | uint64(binary.BigEndian.Uint16(v[w:])))
		impact := first.low()
		v = v[w+2:]
		if d&1 == 0 {
			if len(v) < 2 || binary.BigEndian.Uint16(v) == impact {
				return corrupt(k)
			}
			impact, v = binary.BigEndian.Uint16(v), v[2:]
		}
		if (n == 0) != (first == prev) || first < prev {
			return corrupt(k)
		}
		prev = first
		fn(first, impact)
	}
	return nil
}

func chunkKey(prefix []byte, first Posting) []byte {
	return binary.BigEndian.AppendUint64(bytes.Clone(prefix), uint64(first))
}

// encodeChunk is the value of a chunk of postings (ascending, at least
// one; the key holds the first): the low 16 bits of its best posting (the
// highest Gain), then per further posting the uvarint of its seq's
// difference from the one before, shifted left once, its low bit set
// when the posting's low 16 bits differ from the one before's, which
// then follow (uint16 BE). A busy list's postings mostly repeat their
// field, count and length: a byte each.
func encodeChunk(ps []Posting) []byte {
	b := make([]byte, 2, 2+2*len(ps))
	best := ps[0].low()
	for i := 1; i < len(ps); i++ {
		d, low := (ps[i].Seq()-ps[i-1].Seq())<<1, ps[i].low()
		if low != ps[i-1].low() {
			d |= 1
		}
		b = binary.AppendUvarint(b, d)
		if d&1 != 0 {
			b = binary.BigEndian.AppendUint16(b, low)
		}
		if gain(low) > gain(best) {
			best = low
		}
	}
	binary.BigEndian.PutUint16(b, best)
	return b
}

// chunkImpact is the low 16 bits of the best posting of the chunk whose
// value is v (its Gain bounds every posting's).
func chunkImpact(v []byte) (uint16, bool) {
	if len(v) < 2 {
		return 0, false
	}
	return binary.BigEndian.Uint16(v), true
}

// decodeChunk appends the postings of the chunk k, v (whose key is
// prefixLen bytes before the first posting) to out.
func decodeChunk(out []Posting, prefixLen int, k, v []byte) ([]Posting, error) {
	if len(k) != prefixLen+8 || len(v) < 2 {
		return out, corrupt(k)
	}
	p := Posting(binary.BigEndian.Uint64(k[prefixLen:]))
	out = append(out, p)
	for n, v := 1, v[2:]; len(v) > 0; n++ {
		d, w := binary.Uvarint(v)
		if w <= 0 || n == ChunkSize || d>>1 > math.MaxUint64>>16-p.Seq() {
			return out, corrupt(k)
		}
		v = v[w:]
		low := p.low()
		if d&1 != 0 {
			if len(v) < 2 {
				return out, corrupt(k)
			}
			if low == binary.BigEndian.Uint16(v) {
				return out, corrupt(k)
			}
			low, v = binary.BigEndian.Uint16(v), v[2:]
		}
		q := Posting((p.Seq()+d>>1)<<16 | uint64(low))
		if q <= p {
			return out, corrupt(k)
		}
		p = q
		out = append(out, p)
	}
	return out, nil
}

func corrupt(k []byte) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("%s entry %x is malformed", Bucket, k)}
}

// Writer buffers the postings of events (one transaction's, or the whole
// log's for a rebuild) per list.
type Writer struct {
	lists   map[string]*[]Posting // list prefix -> postings, ascending
	first   uint64                // the seq of the first posting added
	buf     []byte                // scratch: a list's prefix
	word    []byte                // scratch: a word
	touched []*[]Posting          // scratch: the lists a text added to
}

// Add lists the words of the event at seq; seqs come in ascending order.
func (w *Writer) Add(seq uint64, ev *store.Event) {
	if ev.Project == "" {
		return
	}
	for _, t := range Texts(ev) {
		w.AddText(seq, ev.Project, t)
	}
}

// AddText lists the words of one text of the event at seq (after the
// texts of events before it and of fields before it). A word said again
// counts again in its posting, the list's last; the text's length is set
// once all its words are counted.
func (w *Writer) AddText(seq uint64, project string, t Text) {
	if w.lists == nil {
		w.lists = map[string]*[]Posting{}
	}
	if w.first == 0 {
		w.first = seq
	}
	w.touched = w.touched[:0]
	n := 0
	for i, ok := 0, true; ; n++ {
		if w.word, i, ok = nextWord(t.Text, i, w.word); !ok {
			break
		}
		w.buf = appendListPrefix(w.buf[:0], w.word, project)
		ps := w.lists[string(w.buf)]
		if ps == nil {
			ps = new([]Posting)
			w.lists[string(w.buf)] = ps
		}
		if last := len(*ps) - 1; last >= 0 && (*ps)[last]>>12 == NewPosting(seq, t.Field, 0, 0)>>12 {
			if p := (*ps)[last]; p.TF() < 15 {
				(*ps)[last] = p + 1<<8
			}
			continue
		}
		*ps = append(*ps, NewPosting(seq, t.Field, 1, 0))
		w.touched = append(w.touched, ps)
	}
	for _, ps := range w.touched {
		(*ps)[len(*ps)-1] |= Posting(min(n, 255))
	}
}

// Empty reports whether w holds no posting.
func (w *Writer) Empty() bool { return len(w.lists) == 0 }

// Flush writes the buffered postings, of events up to through (the seq
// the index will list the log up to), and empties w: into the pending
// entries of their events while no PendingSpan boundary is crossed, else
// with the pending entries before the boundary into the lists' chunks
// (doc.go, "Pending postings").
func (w *Writer) Flush(tx store.Tx, through uint64) error {
	cut := pendingCut(through)
	first, err := firstPending(tx)
	if err != nil {
		return err
	}
	if (first != 0 && first <= cut) || (len(w.lists) > 0 && w.first <= cut) {
		if err := w.takePending(tx); err != nil {
			return err
		}
	}
	prefixes := slices.Sorted(maps.Keys(w.lists))
	for _, p := range prefixes {
		ps := *w.lists[p]
		if n := sortSearch(ps, cut); n > 0 {
			if err := appendList(tx, []byte(p), ps[:n]); err != nil {
				return err
			}
		}
	}
	err = eachPending(prefixes, w.lists, cut, func(k, v []byte) error { return tx.Put(PendingBucket, k, v) })
	w.lists, w.first = nil, 0
	return err
}

// takePending moves every pending entry of tx into w, before w's own
// postings (every pending seq is smaller than w's), and drops them.
func (w *Writer) takePending(tx store.Tx) error {
	pend := Writer{lists: map[string]*[]Posting{}}
	err := store.ScanShared(tx, PendingBucket, nil, func(k, v []byte) error {
		return decodePending(k, v, func(seq uint64, project, word []byte, low uint16) {
			pend.buf = appendListPrefix(pend.buf[:0], word, string(project))
			pend.add(pend.buf, Posting(seq<<16|uint64(low)))
		})
	})
	if err != nil {
		return err
	}
	if err := tx.DeleteBucket(PendingBucket); err != nil {
		return err
	}
	for p, ps := range w.lists {
		pend.add([]byte(p), *ps...)
	}
	w.lists = pend.lists
	return nil
}

// add appends postings to the list of prefix.
func (w *Writer) add(prefix []byte, ps ...Posting) {
	l := w.lists[string(prefix)]
	if l == nil {
		l = new([]Posting)
		w.lists[string(prefix)] = l
	}
	*l = append(*l, ps...)
}

// Rebuild drops the buckets and writes w's lists, of the log up to
// through, as a new index, keys in order (see logidx.Rebuild for why).
func (w *Writer) Rebuild(tx store.Tx, through uint64) error {
	if err := Drop(tx); err != nil {
		return err
	}
	return w.each(through, tx.Put)
}

// Drop deletes the index (for a rebuild that lists the log again).
func Drop(tx store.Tx) error {
	return errors.Join(tx.DeleteBucket(Bucket), tx.DeleteBucket(PendingBucket))
}

// each calls fn with the buckets, keys and values of the index of w's
// lists, of the log up to through, in key order: the pending entries,
// then the chunks.
func (w *Writer) each(through uint64, fn func(bucket string, k, v []byte) error) error {
	cut := pendingCut(through)
	prefixes := slices.Sorted(maps.Keys(w.lists))
	err := eachPending(prefixes, w.lists, cut, func(k, v []byte) error { return fn(PendingBucket, k, v) })
	if err != nil {
		return err
	}
	// The impact blocks' keys sort before the chunks' ('i' < 'w').
	for _, p := range prefixes {
		ps := *w.lists[p]
		ps = ps[:sortSearch(ps, cut)]
		ps = ps[:len(ps)/ChunkSize*ChunkSize] // the full chunks
		ip := impactPrefix([]byte(p))
		for i := 0; i < len(ps); i += BlockSize * ChunkSize {
			var block []byte
			for j := i; j < min(i+BlockSize*ChunkSize, len(ps)); j += ChunkSize {
				block = appendImpact(block, ps[max(j-ChunkSize, i)], ps[j], bestLow(ps[j:j+ChunkSize]))
			}
			if err := fn(Bucket, chunkKey(ip, ps[i]), block); err != nil {
				return err
			}
		}
	}
	for _, p := range prefixes {
		ps := *w.lists[p]
		ps = ps[:sortSearch(ps, cut)]
		for i := 0; i < len(ps); i += ChunkSize {
			chunk := ps[i:min(i+ChunkSize, len(ps))]
			if err := fn(Bucket, chunkKey([]byte(p), chunk[0]), encodeChunk(chunk)); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendList adds postings, each larger than every posting stored, to
// prefix's list: into its last chunk while it has room, then new ones;
// and the entry of each chunk it fills to the list's last impact block,
// then new blocks.
func appendList(tx store.Tx, prefix []byte, ps []Posting) error {
	k, v, err := tx.Last(Bucket, prefix, chunkKey(prefix, math.MaxUint64))
	if err != nil {
		return err
	}
	var chunk []Posting
	if k != nil {
		if chunk, err = decodeChunk(nil, len(prefix), k, v); err != nil {
			return err
		}
		if len(chunk) == ChunkSize {
			chunk = nil
		}
	}
	if len(chunk) > 0 && ps[0] <= chunk[len(chunk)-1] {
		return &store.CorruptionError{Seq: ps[0].Seq(), Reason: fmt.Sprintf("%s lists seq %d already", Bucket, chunk[len(chunk)-1].Seq())}
	}
	var ib *block // read when a chunk is filled
	for len(ps) > 0 {
		n := min(ChunkSize-len(chunk), len(ps))
		chunk = append(chunk, ps[:n]...)
		ps = ps[n:]
		if err := tx.Put(Bucket, chunkKey(prefix, chunk[0]), encodeChunk(chunk)); err != nil {
			return err
		}
		if len(chunk) == ChunkSize {
			if ib == nil {
				if ib, err = lastBlock(tx, prefix); err != nil {
					return err
				}
			}
			if err := ib.add(tx, chunk[0], bestLow(chunk)); err != nil {
				return err
			}
		}
		chunk = chunk[:0]
	}
	if ib == nil {
		return nil
	}
	return ib.put(tx)
}

// block is the last impact block of a list being appended to.
type block struct {
	prefix  []byte  // the list's impact prefix
	entries []byte  // the block's value
	n       int     // its entries
	first   Posting // its first chunk's first posting (0: no entry)
	last    Posting // the first posting of the last chunk it or a block before lists
}

// lastBlock reads the last impact block of the list of prefix; a full
// one is returned empty, to start the next one.
func lastBlock(tx store.Tx, prefix []byte) (*block, error) {
	ip := impactPrefix(prefix)
	k, v, err := tx.Last(Bucket, ip, chunkKey(ip, math.MaxUint64))
	if err != nil || k == nil {
		return &block{prefix: ip}, err
	}
	b := &block{prefix: ip}
	if err := eachImpact(len(ip), k, v, func(first Posting, _ uint16) { b.n, b.last = b.n+1, first }); err != nil {
		return nil, err
	}
	if b.n < BlockSize {
		b.entries, b.first = bytes.Clone(v), Posting(binary.BigEndian.Uint64(k[len(ip):]))
	} else {
		b.n = 0
	}
	return b, nil
}

// add appends a full chunk's entry, writing the block first when it is
// full.
func (b *block) add(tx store.Tx, first Posting, impact uint16) error {
	if first <= b.last {
		return &store.CorruptionError{Seq: first.Seq(), Reason: fmt.Sprintf("%s impact block %x lists a chunk from seq %d already", Bucket, b.prefix, b.last.Seq())}
	}
	if b.n == BlockSize {
		if err := b.put(tx); err != nil {
			return err
		}
		b.entries, b.n = nil, 0 // the store may keep the value put until the transaction ends
	}
	prev := b.last
	if b.n == 0 {
		prev, b.first = first, first
	}
	b.entries, b.n, b.last = appendImpact(b.entries, prev, first, impact), b.n+1, first
	return nil
}

// put writes the block, keyed by its first chunk's first posting.
func (b *block) put(tx store.Tx) error {
	if b.n == 0 {
		return nil
	}
	return tx.Put(Bucket, chunkKey(b.prefix, b.first), b.entries)
}

// Compare compares the stored index, byte for byte, with the one w's
// lists (of the whole log, up to through: logidx.Compare fills it). The
// first difference is a *store.CorruptionError naming the key.
func (w *Writer) Compare(tx store.Tx, through uint64) error {
	want := map[string]map[string][]byte{Bucket: {}, PendingBucket: {}}
	_ = w.each(through, func(bucket string, k, v []byte) error {
		want[bucket][string(k)] = v
		return nil
	})
	for _, bucket := range []string{PendingBucket, Bucket} {
		if err := compareBucket(tx, bucket, want[bucket]); err != nil {
			return err
		}
	}
	return nil
}

// compareBucket compares bucket's keys and values with want's, which it
// empties.
func compareBucket(tx store.Tx, bucket string, want map[string][]byte) error {
	err := tx.Scan(bucket, nil, func(k, v []byte) error {
		w, ok := want[string(k)]
		if !ok || !bytes.Equal(w, v) {
			return differs(bucket, k, "is not the log's")
		}
		delete(want, string(k))
		return nil
	})
	if err != nil {
		return err
	}
	if len(want) > 0 {
		return differs(bucket, []byte(slices.Min(slices.Collect(maps.Keys(want)))), "is missing")
	}
	return nil
}

func differs(bucket string, k []byte, what string) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("%s entry %q %s (run 'flowctl rebuild')", bucket, k, what)}
}
