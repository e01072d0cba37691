package logidx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/flowctl/flowctl/flow/internal/searchidx"
	"github.com/flowctl/flowctl/flow/store"
)

// Bucket holds the index's chunks, PendingBucket the seqs of each list
// past the last multiple of PendingSpan that the index lists (doc.go).
const (
	Bucket        = "log_idx"
	PendingBucket = "log_pending"
)

// PendingSpan is how many seqs the pending lists span at most: the seqs
// of each list after the last multiple of it that the index lists
// ("through") are kept in one entry of PendingBucket per list, and moved
// into the list's chunks when the index passes the next multiple. A
// transaction of 1000 events then rewrites the few pages of that small
// bucket, not the last chunk of each of the hundreds of lists it adds
// to, which lie on as many pages of Bucket. It is the full-text index's
// span: the transaction that passes a multiple moves both.
const PendingSpan = searchidx.PendingSpan

// pendingCut is the seq up to which an index of the log up to through
// holds its lists in chunks; later seqs are pending.
func pendingCut(through uint64) uint64 { return through / PendingSpan * PendingSpan }

// Format is the layout of the bucket (doc.go); another one is rebuilt.
// Format 2 added the full-text index (package searchidx), which this
// stamp and "through" govern too; format 3 is that index's chunks with
// their best posting first and a byte or two a posting (searchidx's
// doc.go); format 4 keeps the postings of the last events in pending
// entries, one per event, merged into the chunks every
// searchidx.PendingSpan seqs; format 5 keeps the seqs of each list past
// the last multiple of PendingSpan in one pending entry per list; format
// 6 adds the full-text index's impact blocks (searchidx's doc.go), which
// a query reads instead of its words' chunks.
const Format = 6

// ChunkSize is the number of seqs of a full chunk.
const ChunkSize = 64

// The kinds of list, the first byte of a key.
const (
	kindMeta        byte = 0
	kindType        byte = 't'
	kindProjectType byte = 'p'
	kindActor       byte = 'a'
	kindSession     byte = 's'
	kindTypeName    byte = 'T'
)

var (
	keyVersion = append([]byte{kindMeta}, "version"...)
	keyThrough = append([]byte{kindMeta}, "through"...)
	stamp      = binary.BigEndian.AppendUint32(nil, Format)
)

// Through returns the seq up to which the index lists the log, and ok
// when it was built in this binary's Format (else seq is 0). Events past
// seq were appended by a flowctl that does not keep the index: a reader
// reads them from the log, and Sync lists them.
func Through(tx store.Tx) (seq uint64, ok bool, err error) {
	b, err := tx.Get(Bucket, keyVersion)
	if err != nil || !bytes.Equal(b, stamp) {
		return 0, false, err
	}
	if b, err = tx.Get(Bucket, keyThrough); err != nil || len(b) != 8 {
		return 0, false, err
	}
	return binary.BigEndian.Uint64(b), true, nil
}

// Current reports whether the index was built in this binary's Format
// and lists the whole log.
func Current(tx store.Tx) (bool, error) {
	seq, ok, err := Through(tx)
	head, _ := tx.Head()
	return ok && seq == head, err
}

// listPrefix is the key prefix of the list of term in kind.
func listPrefix(kind byte, term string) []byte {
	return appendListPrefix(make([]byte, 0, 3+len(term)+8), kind, term)
}

// appendListPrefix appends listPrefix(kind, term) to b.
func appendListPrefix(b []byte, kind byte, term string) []byte {
	b = append(b, kind)
	b = binary.BigEndian.AppendUint16(b, uint16(min(len(term), math.MaxUint16)))
	return append(b, term...)
}

// projectTerm is the term of a project's list of typ.
func projectTerm(project, typ string) string {
	b := binary.BigEndian.AppendUint16(nil, uint16(min(len(project), math.MaxUint16)))
	return string(append(append(b, project...), typ...))
}

// chunkKey is the key of the chunk of prefix's list whose first seq is seq.
func chunkKey(prefix []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(bytes.Clone(prefix), seq)
}

// encodeChunk is the value of a chunk of seqs (ascending, at least one):
// the uvarint differences after the first, which the key holds.
func encodeChunk(seqs []uint64) []byte {
	b := make([]byte, 0, 2*len(seqs))
	for i := 1; i < len(seqs); i++ {
		b = binary.AppendUvarint(b, seqs[i]-seqs[i-1])
	}
	return b
}

// decodeChunk appends the seqs of the chunk k, v of prefix's list to out.
func decodeChunk(out []uint64, prefix, k, v []byte) ([]uint64, error) {
	if len(k) != len(prefix)+8 {
		return out, corrupt(k)
	}
	seq := binary.BigEndian.Uint64(k[len(prefix):])
	out = append(out, seq)
	for n := 1; len(v) > 0; n++ {
		d, w := binary.Uvarint(v)
		if w <= 0 || d == 0 || n == ChunkSize || seq+d < seq {
			return out, corrupt(k)
		}
		seq, v = seq+d, v[w:]
		out = append(out, seq)
	}
	return out, nil
}

func corrupt(k []byte) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("%s entry %x is malformed", Bucket, k)}
}

// Writer buffers the entries of one transaction's events (see doc.go).
type Writer struct {
	lists map[string]*[]uint64 // list prefix -> new seqs, ascending
	order []string             // prefixes in the order first added
	last  uint64               // the largest seq added
	buf   []byte               // scratch: the prefix being added
	words searchidx.Writer     // the events' words, in the full-text index
	async *lister              // the goroutine that lists what Add hears (Async), or nil
}

// Add lists the event at seq: at once, or on w's goroutine when it has
// one (Async), from a copy of *ev.
func (w *Writer) Add(seq uint64, ev *store.Event) {
	if w.async != nil {
		w.async.hear(seq, ev)
		return
	}
	w.list(seq, ev)
}

// list is Add's listing of the event at seq.
func (w *Writer) list(seq uint64, ev *store.Event) {
	if w.lists == nil {
		w.lists = map[string]*[]uint64{}
	}
	w.last = max(w.last, seq)
	w.words.Add(seq, ev)
	w.add(appendListPrefix(w.buf[:0], kindType, ev.Type), seq)
	if ev.Project != "" {
		// listPrefix(kindProjectType, projectTerm(ev.Project, ev.Type))
		b := append(w.buf[:0], kindProjectType, 0, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(min(len(ev.Project), math.MaxUint16)))
		b = append(append(b, ev.Project...), ev.Type...)
		binary.BigEndian.PutUint16(b[1:3], uint16(min(len(b)-3, math.MaxUint16)))
		w.add(b, seq)
	}
	if ev.Actor != "" {
		w.add(appendListPrefix(w.buf[:0], kindActor, ev.Actor), seq)
	}
	if ev.Session != "" {
		w.add(appendListPrefix(w.buf[:0], kindSession, ev.Session), seq)
	}
}

// add appends seq to the list of prefix (w.buf, which it keeps as
// scratch): no allocation for a list it has.
func (w *Writer) add(prefix []byte, seq uint64) {
	w.buf = prefix
	if seqs := w.lists[string(prefix)]; seqs != nil {
		*seqs = append(*seqs, seq)
		return
	}
	p := string(prefix)
	w.order = append(w.order, p)
	w.lists[p] = &[]uint64{seq}
}

// Flush writes the buffered seqs into tx and empties w (after w's
// goroutine, if it has one, listed every event Add heard; it then ends,
// and w lists synchronously again): into the lists'
// pending entries while the index stays short of the next multiple of
// PendingSpan, else with every pending seq into the lists' chunks, the
// seqs past the multiple into new pending entries (doc.go).
func (w *Writer) Flush(tx store.Tx) error {
	w.sync()
	if w.last == 0 {
		return nil
	}
	old, err := storedThrough(tx)
	if err != nil {
		return err
	}
	cut := pendingCut(w.last)
	merge := pendingCut(old) < cut
	if merge {
		if err := w.takePending(tx); err != nil {
			return err
		}
	}
	slices.Sort(w.order) // keys in order: bbolt moves fewer
	for _, p := range w.order {
		seqs := *w.lists[p]
		if p[0] == kindType {
			if err := listType(tx, p[3:]); err != nil {
				return err
			}
		}
		n := sort.Search(len(seqs), func(i int) bool { return seqs[i] > cut })
		if n > 0 {
			if err := appendList(tx, []byte(p), seqs[:n]); err != nil {
				return err
			}
		}
		if n < len(seqs) {
			if err := appendPending(tx, []byte(p), seqs[n:], !merge); err != nil {
				return err
			}
		}
	}
	if err := w.words.Flush(tx, w.last); err != nil {
		return err
	}
	if err := tx.Put(Bucket, keyThrough, binary.BigEndian.AppendUint64(nil, w.last)); err != nil {
		return err
	}
	w.lists, w.order, w.last = nil, nil, 0
	return nil
}

// storedThrough is the stored "through" seq, whatever the stamp, or 0.
func storedThrough(tx store.Tx) (uint64, error) {
	b, err := tx.Get(Bucket, keyThrough)
	if err != nil || len(b) != 8 {
		return 0, err
	}
	return binary.BigEndian.Uint64(b), nil
}

// listType lists typ for patterns ('T' key) unless it is listed.
func listType(tx store.Tx, typ string) error {
	k := append([]byte{kindTypeName}, typ...)
	if v, err := tx.Get(Bucket, k); err != nil || v != nil {
		return err
	}
	return tx.Put(Bucket, k, []byte{})
}

// takePending moves every pending seq of tx into w, before w's own (every
// pending seq is smaller than w's), and drops the pending entries.
func (w *Writer) takePending(tx store.Tx) error {
	var seqs []uint64
	err := store.ScanShared(tx, PendingBucket, nil, func(k, v []byte) error {
		var err error
		if seqs, err = decodePending(seqs[:0], k, v); err != nil {
			return err
		}
		if l := w.lists[string(k)]; l != nil {
			*l = append(slices.Clip(seqs), *l...)
			seqs = nil
			return nil
		}
		p, l := string(k), slices.Clone(seqs)
		w.order = append(w.order, p)
		w.lists[p] = &l
		return nil
	})
	if err != nil {
		return err
	}
	return tx.DeleteBucket(PendingBucket)
}

// appendPending adds seqs, each larger than every seq listed, to prefix's
// pending entry: after the stored one's when stored is set, else as a
// new entry.
func appendPending(tx store.Tx, prefix []byte, seqs []uint64, stored bool) error {
	var v []byte
	if stored {
		old, err := tx.Get(PendingBucket, prefix)
		if err != nil {
			return err
		}
		if old != nil {
			last, err := lastPending(prefix, old)
			if err != nil {
				return err
			}
			if seqs[0] <= last {
				return &store.CorruptionError{Seq: seqs[0], Reason: fmt.Sprintf("%s lists seq %d already", PendingBucket, last)}
			}
			v = make([]byte, 0, len(old)+2*len(seqs))
			v = appendSeqs(append(v, old...), last, seqs)
		}
	}
	if v == nil {
		v = encodePending(seqs)
	}
	return tx.Put(PendingBucket, prefix, v)
}

// encodePending is the value of a pending entry of seqs (ascending, at
// least one): the uvarint of the first, then of each one's difference
// from the one before.
func encodePending(seqs []uint64) []byte {
	return appendSeqs(make([]byte, 0, 2*len(seqs)+8), 0, seqs)
}

// appendSeqs appends the uvarint differences of seqs, after prev, to b.
func appendSeqs(b []byte, prev uint64, seqs []uint64) []byte {
	for _, seq := range seqs {
		b = binary.AppendUvarint(b, seq-prev)
		prev = seq
	}
	return b
}

// decodePending appends the seqs of the pending entry k, v to out.
func decodePending(out []uint64, k, v []byte) ([]uint64, error) {
	var seq uint64
	if len(v) == 0 {
		return out, corruptPending(k)
	}
	for len(v) > 0 {
		d, w := binary.Uvarint(v)
		if w <= 0 || d == 0 || seq+d < seq {
			return out, corruptPending(k)
		}
		seq, v = seq+d, v[w:]
		out = append(out, seq)
	}
	return out, nil
}

// lastPending is the last seq of the pending entry k, v.
func lastPending(k, v []byte) (uint64, error) {
	var seq uint64
	if len(v) == 0 {
		return 0, corruptPending(k)
	}
	for len(v) > 0 {
		d, w := binary.Uvarint(v)
		if w <= 0 || d == 0 || seq+d < seq {
			return 0, corruptPending(k)
		}
		seq, v = seq+d, v[w:]
	}
	return seq, nil
}

func corruptPending(k []byte) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("%s entry %x is malformed", PendingBucket, k)}
}

// appendList adds seqs, each larger than every seq stored, to prefix's
// list: into its last chunk while it has room, then in new chunks.
func appendList(tx store.Tx, prefix []byte, seqs []uint64) error {
	k, v, err := tx.Last(Bucket, prefix, chunkKey(prefix, math.MaxUint64))
	if err != nil {
		return err
	}
	var chunk []uint64
	if k != nil {
		if chunk, err = decodeChunk(nil, prefix, k, v); err != nil {
			return err
		}
		if len(chunk) == ChunkSize {
			chunk = nil
		}
	}
	if len(chunk) > 0 && seqs[0] <= chunk[len(chunk)-1] {
		return &store.CorruptionError{Seq: seqs[0], Reason: fmt.Sprintf("%s lists seq %d already", Bucket, chunk[len(chunk)-1])}
	}
	for len(seqs) > 0 {
		n := min(ChunkSize-len(chunk), len(seqs))
		chunk = append(chunk, seqs[:n]...)
		seqs = seqs[n:]
		if err := tx.Put(Bucket, chunkKey(prefix, chunk[0]), encodeChunk(chunk)); err != nil {
			return err
		}
		chunk = chunk[:0]
	}
	return nil
}
