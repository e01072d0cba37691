package snapshot

import (
	"bytes"
	"encoding/binary"

	"github.com/klauspost/compress/s2"
)

// A delta's names section (format 7, doc.go): what a far diff reads of
// each entity a delta holds (NameFields), whether it changes the project
// and the ids it deletes, stored before the body and checked by a CRC of
// its own, so that a reader of many deltas reads them without the
// bodies.

// NameFields are the fields a names section holds of each entity, by
// kind (plans, tasks, approvals, exec records): its id, the title a diff
// names it by (a plan's or task's title, an approval's message, an exec
// record's command and code) and an approval's or exec record's task.
var NameFields = DeltaFields{{"id", "title"}, {"id", "title"}, {"id", "message", "task"}, {"id", "command", "code", "task"}}

// maxHeadBody bounds the stored body length a head declares, so that the
// size it adds up to does not overflow.
const maxHeadBody = 1 << 40

// appendNames appends to dst the names section, uncompressed, of the
// delta whose body (decompressed) is body: EachDeltaEntity's reading of
// it with NameFields.
func appendNames(dst, body []byte) ([]byte, error) {
	var ents []byte
	count := 0
	project, at, err := eachDeltaEntity(body, &NameFields, func(kind int, fields [][]byte, bad uint) error {
		count++
		ents = append(ents, byte(kind), byte(bad))
		for _, f := range fields {
			if f == nil {
				ents = append(ents, 0)
				continue
			}
			ents = binary.AppendUvarint(ents, uint64(len(f))+1)
			ents = append(ents, f...)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := readDeleted(body[at:]); err != nil {
		return nil, err
	}
	flags := byte(0)
	if project {
		flags = 1
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(count))
	dst = append(dst, ents...)
	return append(dst, body[at:]...), nil
}

// Head returns the head of the delta b when b is of format 7 (a names
// section) and its declared lengths add up to len(b): its bytes up to
// and with the head's CRC, which NamesReader.Names reads (the body after
// it is not read, nor any CRC checked). Else nil.
func Head(b []byte) []byte {
	if len(b) < 10 || binary.BigEndian.Uint16(b[8:]) != NamesDeltaVersion {
		return nil
	}
	_, f, err := frameOf(b, len(b))
	if err != nil {
		return nil
	}
	return b[:f.headEnd]
}

// NamesReader reads the names sections of deltas (Names), each
// decompressed into one buffer it keeps. The zero NamesReader is ready.
type NamesReader struct {
	buf []byte
}

// Names checks head, the head of a delta of format 7 (Head's), as Frame
// checks a whole snapshot (length, magic, format, declared lengths, the
// head's CRC: the body is not there to check), and returns its header
// and its names section, decompressed into the reader's buffer, valid
// until the reader's next Names (EachName reads it). The names section
// is the body's as the writer read it: CheckNames checks it against the
// body.
func (r *NamesReader) Names(head []byte) (Header, []byte, error) {
	if len(head) < bodyLenSize+crcSize {
		return Header{}, nil, corruptf("%d bytes, shorter than a head", len(head))
	}
	m := binary.BigEndian.Uint64(head[len(head)-crcSize-bodyLenSize:])
	if m > maxHeadBody {
		return Header{}, nil, corruptf("a stored body of %d bytes", m)
	}
	h, f, err := frameOf(head, len(head)+int(m)+crcSize)
	switch {
	case err != nil:
		return h, nil, err
	case !h.HasNames() || f.headEnd != len(head):
		return h, nil, corruptf("not the head of a delta with names")
	}
	if err := checkHeadCRC(head); err != nil {
		return h, nil, err
	}
	if f.late != nil {
		return f.lateHeader, nil, f.late
	}
	stored := head[f.namesAt:f.namesEnd]
	n, err := s2.DecodedLen(stored)
	switch {
	case err != nil:
		return h, nil, corruptf("names section does not decompress: %v", err)
	case n > MaxBody:
		return h, nil, corruptf("a names section of %d bytes decompressed, over the limit of %d", n, MaxBody)
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	names, err := decodeBlock(r.buf[:n], stored)
	if err != nil {
		return h, nil, err
	}
	return h, names, nil
}

// EachName calls each with every entity of a names section (Names's), as
// EachDeltaEntity calls it with the delta's body and NameFields: in the
// body's order, fields the values of NameFields[kind] (subslices of
// names; nil for one the entity does not have as a string), bad those
// that are not strings. It returns whether the delta changes the
// project and the ids it deletes, or each's error, or ErrCorrupt for
// names that do not read as a names section.
func EachName(names []byte, each func(kind int, fields [][]byte, bad uint) error) (project bool, deleted *Deleted, err error) {
	bad := corruptf("names section does not read")
	if len(names) < 1 || names[0] > 1 {
		return false, nil, bad
	}
	project = names[0] == 1
	count, k := binary.Uvarint(names[1:])
	if k <= 0 || count > uint64(len(names)) { // an entity takes two bytes at least
		return false, nil, bad
	}
	p := 1 + k
	var fields [MaxDeltaFields][]byte
	for range count {
		if p+2 > len(names) || names[p] > 3 {
			return false, nil, bad
		}
		kind, b := int(names[p]), uint(names[p+1])
		want := len(NameFields[kind])
		if b >= 1<<want {
			return false, nil, bad
		}
		p += 2
		for i := range want {
			n, k := binary.Uvarint(names[p:])
			if k <= 0 || n > uint64(len(names)-p-k)+1 {
				return false, nil, bad
			}
			p += k
			if n == 0 {
				fields[i] = nil
				continue
			}
			fields[i] = names[p : p+int(n)-1 : p+int(n)-1]
			p += int(n) - 1
		}
		if err := each(kind, fields[:want], b); err != nil {
			return false, nil, err
		}
	}
	d, err := readDeleted(names[p:])
	if err != nil {
		return false, nil, err
	}
	return project, d, nil
}

// CheckNames checks b as Check does and, when it has a names section
// (format 7), that the section is the one its body gives (what
// PackDeltaNames wrote): a reader of the section alone trusts it.
func CheckNames(b []byte) error {
	h, body, err := Check(b)
	if err != nil || !h.HasNames() {
		return err
	}
	var r NamesReader
	_, stored, err := r.Names(Head(b))
	if err != nil {
		return err
	}
	want, err := appendNames(nil, body)
	if err != nil {
		return err
	}
	if !bytes.Equal(stored, want) {
		return corruptf("names section differs from the body's")
	}
	return nil
}
