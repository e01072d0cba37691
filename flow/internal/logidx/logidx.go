package logidx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/flowctl/flowctl/flow/internal/searchidx"
	"github.com/flowctl/flowctl/flow/store"
)

// Bucket holds the index.
const Bucket = "log_idx"

// Format is the layout of the bucket (doc.go); another one is rebuilt.
// Format 2 added the full-text index (package searchidx), which this
// stamp and "through" govern too; format 3 is that index's chunks with
// their best posting first and a byte or two a posting (searchidx's
// doc.go); format 4 keeps the postings of the last events in pending
// entries, one per event, merged into the chunks every
// searchidx.PendingSpan seqs.
const Format = 4

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
}

// Add lists the event at seq.
func (w *Writer) Add(seq uint64, ev *store.Event) {
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

// Flush writes the buffered seqs into tx and empties w.
func (w *Writer) Flush(tx store.Tx) error {
	slices.Sort(w.order) // keys in order: bbolt moves fewer
	for _, p := range w.order {
		if err := appendList(tx, []byte(p), *w.lists[p]); err != nil {
			return err
		}
	}
	if w.last != 0 {
		if err := w.words.Flush(tx, w.last); err != nil {
			return err
		}
		if err := tx.Put(Bucket, keyThrough, binary.BigEndian.AppendUint64(nil, w.last)); err != nil {
			return err
		}
	}
	w.lists, w.order, w.last = nil, nil, 0
	return nil
}

// appendList adds seqs, each larger than every seq stored, to prefix's
// list: into its last chunk while it has room, then in new chunks.
func appendList(tx store.Tx, prefix []byte, seqs []uint64) error {
	k, v, err := tx.Last(Bucket, prefix, chunkKey(prefix, math.MaxUint64))
	if err != nil {
		return err
	}
	var chunk []uint64
	if k == nil {
		if prefix[0] == kindType {
			// The first event of a type: list the type for patterns.
			typ := string(prefix[3:])
			if err := tx.Put(Bucket, append([]byte{kindTypeName}, typ...), []byte{}); err != nil {
				return err
			}
		}
	} else if chunk, err = decodeChunk(nil, prefix, k, v); err != nil {
		return err
	} else if len(chunk) == ChunkSize {
		chunk = nil
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
