package history

import (
	"encoding/binary"

	"github.com/flowctl/flowctl/snapshot"
)

// aheadBuffers is how many deltas a far read holds read at once: the one
// it notes, those read ahead of it (aheadBuffers-2) and the one being
// read.
const aheadBuffers = 4

// deltasAhead reads deltas on a goroutine of its own, in order, a few
// ahead of the one they are taken for (next): each is framed
// (snapshot.Frame), checked (snapshot.DeltaReader.Check: decompressed,
// hashed) and only then walked for the fields a scan notes of its
// entities (deltaKeys); or, for a delta with a names section (given by
// its head, snapshot.Head), its head is checked and its names section
// read (snapshot.NamesReader, EachName), the body not read. So that all
// of that runs beside the noting of those before them, and the reading
// of the log. Each delta is read into one of aheadBuffers slots (its
// body, its entities' fields, subslices of the body), which the
// goroutine writes again only after the caller has taken the delta after
// it: a delta next returns is valid until next is called again.
type deltasAhead struct {
	out  chan *readDelta
	done chan struct{}
}

// readDelta is a delta read ahead: its header (framed: it is framed as
// it should be, else nothing else is read), the fields of its entities,
// in the body's order, and what snapshot.EachDeltaEntity returns of it,
// or the error of its check (no entities) or of its walk (after the
// entities read before it).
type readDelta struct {
	h       snapshot.Header
	framed  bool
	ents    []deltaEntity
	project bool
	deleted *snapshot.Deleted
	err     error
}

// deltaEntity is one entity of a delta as snapshot.EachDeltaEntity
// passes it on: its kind, its fields deltaKeys[kind] (the first ones of
// fields) and which are not strings.
type deltaEntity struct {
	kind   int
	bad    uint
	fields [maxDeltaKeys][]byte
}

// maxDeltaKeys is how many fields deltaKeys names of a kind at most.
const maxDeltaKeys = 4

// aheadSlot is what one delta is read into.
type aheadSlot struct {
	r     snapshot.DeltaReader
	names snapshot.NamesReader
	d     readDelta
}

// checkAhead starts reading the deltas vs, in order.
func checkAhead(vs [][]byte) *deltasAhead {
	d := &deltasAhead{out: make(chan *readDelta, aheadBuffers-2), done: make(chan struct{})}
	if len(vs) == 0 {
		return d
	}
	go func() {
		var slots [aheadBuffers]aheadSlot
		for k, v := range vs {
			s := &slots[k%aheadBuffers]
			s.d = readDelta{ents: s.d.ents[:0]}
			s.d.err = s.read(v)
			select {
			case d.out <- &s.d:
			case <-d.done:
				return
			}
		}
	}()
	return d
}

// read reads the delta v (a whole snapshot, or the head of one with a
// names section) into s.d.
func (s *aheadSlot) read(v []byte) error {
	each := func(kind int, fields [][]byte, bad uint) error {
		e := deltaEntity{kind: kind, bad: bad}
		copy(e.fields[:], fields)
		s.d.ents = append(s.d.ents, e)
		return nil
	}
	var err error
	if len(v) >= 10 && binary.BigEndian.Uint16(v[8:]) == snapshot.NamesDeltaVersion {
		var names []byte
		if s.d.h, names, err = s.names.Names(v); err != nil {
			return err
		}
		s.d.framed = true
		s.d.project, s.d.deleted, err = snapshot.EachName(names, each)
		return err
	}
	if s.d.h, err = snapshot.Frame(v); err != nil {
		return err
	}
	s.d.framed = true
	body, err := s.r.Check(v)
	if err != nil {
		return err
	}
	s.d.project, s.d.deleted, err = snapshot.EachDeltaEntity(body, &deltaKeys, each)
	return err
}

// next returns the next delta read: valid until next is called again.
func (d *deltasAhead) next() *readDelta { return <-d.out }

// stop ends the reading ahead (the deltas not taken are dropped).
func (d *deltasAhead) stop() { close(d.done) }
