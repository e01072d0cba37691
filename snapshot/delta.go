package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"unicode/utf8"

	"github.com/flowctl/flowctl/projection"
)

// Delta is what changed in a scope's state between a base snapshot and a
// later seq: the entities that are new or differ (Changed, in id order;
// Changed.Project is nil when the project entity did not change) and the
// ids of those that are gone (Deleted, in id order, per kind).
type Delta struct {
	Changed *projection.Scope
	Deleted Deleted
}

// Deleted lists, per kind, the ids of entities a delta removes.
type Deleted struct {
	Plans, Tasks, Approvals, Execs, Checkpoints []string
}

// lists returns the kinds' lists in their order in the body.
func (d *Deleted) lists() []*[]string {
	return []*[]string{&d.Plans, &d.Tasks, &d.Approvals, &d.Execs, &d.Checkpoints}
}

// Diff returns the delta that turns state base into state cur, both in
// id order as projection.Memory.Scope lists them. An entity is changed
// when its encoding differs.
func Diff(base, cur *projection.Scope) *Delta {
	d := &Delta{Changed: &projection.Scope{}}
	var a, b []byte
	if cur.Project != nil {
		a = encodeOne(a[:0], &projection.Scope{Project: base.Project})
		b = encodeOne(b[:0], &projection.Scope{Project: cur.Project})
		if base.Project == nil || !bytes.Equal(a, b) {
			d.Changed.Project = cur.Project
		}
	}
	d.Changed.Plans, d.Deleted.Plans = diffKind(base.Plans, cur.Plans, func(v *projection.Plan) *projection.Scope { return &projection.Scope{Plans: []*projection.Plan{v}} })
	d.Changed.Tasks, d.Deleted.Tasks = diffKind(base.Tasks, cur.Tasks, func(v *projection.Task) *projection.Scope { return &projection.Scope{Tasks: []*projection.Task{v}} })
	d.Changed.Approvals, d.Deleted.Approvals = diffKind(base.Approvals, cur.Approvals, func(v *projection.Approval) *projection.Scope {
		return &projection.Scope{Approvals: []*projection.Approval{v}}
	})
	d.Changed.Execs, d.Deleted.Execs = diffKind(base.Execs, cur.Execs, func(v *projection.Exec) *projection.Scope { return &projection.Scope{Execs: []*projection.Exec{v}} })
	d.Changed.Checkpoints, d.Deleted.Checkpoints = diffKind(base.Checkpoints, cur.Checkpoints, func(v *projection.Checkpoint) *projection.Scope {
		return &projection.Scope{Checkpoints: []*projection.Checkpoint{v}}
	})
	return d
}

func encodeOne(b []byte, s *projection.Scope) []byte { return projection.AppendScope(b, s) }

// diffKind walks two id-ordered lists of one kind together: the entities
// of cur that are not in base or encode differently, and the ids of base
// that are not in cur. Both results are non-nil, in id order.
func diffKind[V interface{ EntityID() string }](base, cur []V, one func(V) *projection.Scope) (changed []V, deleted []string) {
	changed, deleted = []V{}, []string{}
	var a, b []byte
	i, j := 0, 0
	for i < len(base) || j < len(cur) {
		c := 1 // base[i] alone
		switch {
		case i == len(base):
			c = -1 // cur[j] alone
		case j < len(cur):
			c = -projection.CompareIDs(base[i].EntityID(), cur[j].EntityID())
		}
		switch {
		case c > 0:
			deleted = append(deleted, base[i].EntityID())
			i++
		case c < 0:
			changed = append(changed, cur[j])
			j++
		default:
			a, b = encodeOne(a[:0], one(base[i])), encodeOne(b[:0], one(cur[j]))
			if !bytes.Equal(a, b) {
				changed = append(changed, cur[j])
			}
			i, j = i+1, j+1
		}
	}
	return changed, deleted
}

// Empty reports whether d changes nothing.
func (d *Delta) Empty() bool {
	c := d.Changed
	n := len(c.Plans) + len(c.Tasks) + len(c.Approvals) + len(c.Execs) + len(c.Checkpoints)
	for _, l := range d.Deleted.lists() {
		n += len(*l)
	}
	return c.Project == nil && n == 0
}

// Apply turns s, a state in id order (as Memory.Scope and Decode give
// it), into the state d leads to, in id order: it puts the changed
// entities in place of those with their ids, or among them, and removes
// the deleted ones. The entities are put as they are, not copied, and
// s's lists are changed in place: s owns both afterwards.
func (d *Delta) Apply(s *projection.Scope) {
	c := d.Changed
	if c.Project != nil {
		s.Project = c.Project
	}
	s.Plans = patch(s.Plans, c.Plans, d.Deleted.Plans)
	s.Tasks = patch(s.Tasks, c.Tasks, d.Deleted.Tasks)
	s.Approvals = patch(s.Approvals, c.Approvals, d.Deleted.Approvals)
	s.Execs = patch(s.Execs, c.Execs, d.Deleted.Execs)
	s.Checkpoints = patch(s.Checkpoints, c.Checkpoints, d.Deleted.Checkpoints)
}

// patch puts changed into list (in id order) and removes deleted from it.
// New ids mostly come after every id there: they are appended.
func patch[V interface{ EntityID() string }](list, changed []V, deleted []string) []V {
	list = projection.NonNil(list)
	find := func(id string) (int, bool) {
		if n := len(list); n == 0 || projection.CompareIDs(list[n-1].EntityID(), id) < 0 {
			return n, false
		}
		return slices.BinarySearchFunc(list, id, func(v V, id string) int { return projection.CompareIDs(v.EntityID(), id) })
	}
	for _, v := range changed {
		if i, ok := find(v.EntityID()); ok {
			list[i] = v
		} else {
			list = slices.Insert(list, i, v)
		}
	}
	for _, id := range deleted {
		if i, ok := find(id); ok {
			list = slices.Delete(list, i, i+1)
		}
	}
	return list
}

// appendDeltaBody writes d's body: the changed entities as a Scope (the
// full layout's body), then per kind a uvarint count and each deleted id
// as a uvarint length and its bytes.
func appendDeltaBody(b []byte, d *Delta) []byte {
	return appendDeletions(projection.AppendScope(b, d.Changed), &d.Deleted)
}

// appendDeletions writes the deleted ids of a delta's body.
func appendDeletions(b []byte, deleted *Deleted) []byte {
	for _, l := range deleted.lists() {
		b = binary.AppendUvarint(b, uint64(len(*l)))
		for _, id := range *l {
			b = binary.AppendUvarint(b, uint64(len(id)))
			b = append(b, id...)
		}
	}
	return b
}

// EncodeDelta returns the delta snapshot of d described by h, whose
// StateHash (the hash of the state d resolves to), BaseSeq and BaseHash
// the caller sets. It sets the format version and the body hash; it
// returns the completed header.
func EncodeDelta(h Header, d *Delta) ([]byte, Header, error) {
	if len(h.Scope) > MaxScope || !utf8.ValidString(h.Scope) {
		return nil, h, fmt.Errorf("snapshot: scope %q is not a valid name", h.Scope)
	}
	if h.BaseSeq >= h.Seq {
		return nil, h, fmt.Errorf("snapshot: a delta at seq %d needs a base before it, not at %d", h.Seq, h.BaseSeq)
	}
	h.Format = DeltaVersion
	b := append(make([]byte, 0, MinDeltaSize+len(h.Scope)+sizeHint(d.Changed)), Magic...)
	b = binary.BigEndian.AppendUint16(b, h.Format)
	b = binary.BigEndian.AppendUint32(b, h.ProjectionVersion)
	b = binary.BigEndian.AppendUint64(b, h.Seq)
	b = append(b, h.ChainHash[:]...)
	b = append(b, h.StateHash[:]...)
	b = binary.BigEndian.AppendUint64(b, h.BaseSeq)
	b = append(b, h.BaseHash[:]...)
	b = append(b, make([]byte, 32)...) // the body hash, once the body is written
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.Scope)))
	b = append(b, h.Scope...)
	bodyAt := len(b) + bodyLenSize
	b = appendDeltaBody(append(b, make([]byte, bodyLenSize)...), d)
	body := b[bodyAt:]
	binary.BigEndian.PutUint64(b[bodyAt-bodyLenSize:], uint64(len(body)))
	h.BodyHash, h.BodyLen = sha256.Sum256(body), uint64(len(body))
	copy(b[126:158], h.BodyHash[:])
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), h, nil
}

// DecodeDelta checks b as Decode does (length, framing, CRC and body
// hash before a byte of the body is decoded) and decodes a delta: every
// changed entity must be of the header's scope and no id may be listed
// twice. A full snapshot is refused as corrupt: it is not a delta. The
// delta keeps no reference to b.
func DecodeDelta(b []byte) (Header, *Delta, error) {
	h, body, err := checkFrame(b)
	if err == nil {
		body, err = unpack(h, body)
	}
	if err != nil {
		return h, nil, err
	}
	if !h.IsDelta() {
		return h, nil, corruptf("a full snapshot where a delta was expected")
	}
	d, err := decodeDelta(h, body)
	return h, d, err
}

// decodeDelta checks the body of delta h against its hash and decodes
// it.
func decodeDelta(h Header, body []byte) (*Delta, error) {
	d := new(Delta)
	var n int
	err := hashWhile(body, h.BodyHash, func() (err error) {
		d.Changed, n, err = projection.DecodeScope(body)
		return err
	})
	switch {
	case err == errBodyHash:
		return nil, err
	case err != nil:
		return nil, corruptf("delta body does not decode: %v", err)
	}
	rest := body[n:]
	for _, l := range d.Deleted.lists() {
		if *l, rest, err = readIDs(rest); err != nil {
			return nil, err
		}
	}
	if len(rest) != 0 {
		return nil, corruptf("delta body has %d bytes after the deletions", len(rest))
	}
	if err := checkDelta(h.Scope, d); err != nil {
		return nil, err
	}
	return d, nil
}

// readIDs reads a uvarint count and that many length-prefixed ids.
func readIDs(b []byte) ([]string, []byte, error) {
	count, k := binary.Uvarint(b)
	if k <= 0 || count > uint64(len(b)) { // each id takes a byte at least
		return nil, nil, corruptf("delta deletions: bad count")
	}
	b = b[k:]
	ids := make([]string, 0, count)
	for range count {
		n, k := binary.Uvarint(b)
		if k <= 0 || n == 0 || n > uint64(len(b)-k) {
			return nil, nil, corruptf("delta deletions: bad id length")
		}
		ids = append(ids, string(b[k:k+int(n)]))
		b = b[k+int(n):]
	}
	return ids, b, nil
}

// checkDelta checks that a decoded delta changes only scope's entities,
// none listed twice, none both changed and deleted.
func checkDelta(scope string, d *Delta) error {
	c := d.Changed
	if c.Project != nil && c.Project.Name != scope {
		return corruptf("delta holds project %q, the header says %q", c.Project.Name, scope)
	}
	kinds := []struct {
		name    string
		changed []string
		deleted []string
	}{
		{"plan", idsOf(c.Plans, func(v *projection.Plan) string { return v.Project }, scope), d.Deleted.Plans},
		{"task", idsOf(c.Tasks, func(v *projection.Task) string { return v.Project }, scope), d.Deleted.Tasks},
		{"approval", idsOf(c.Approvals, func(v *projection.Approval) string { return v.Project }, scope), d.Deleted.Approvals},
		{"exec", idsOf(c.Execs, func(v *projection.Exec) string { return v.Project }, scope), d.Deleted.Execs},
		{"checkpoint", idsOf(c.Checkpoints, func(v *projection.Checkpoint) string { return v.Project }, scope), d.Deleted.Checkpoints},
	}
	for _, k := range kinds {
		if k.changed == nil {
			return corruptf("delta holds a %s that is nil or not of project %q", k.name, scope)
		}
		all := slices.Concat(k.changed, k.deleted)
		slices.Sort(all)
		if len(slices.Compact(all)) != len(k.changed)+len(k.deleted) {
			return corruptf("delta lists a %s twice", k.name)
		}
	}
	return nil
}

// idsOf returns the ids of vs, or nil if one is nil or not of scope.
func idsOf[T any, P interface {
	*T
	EntityID() string
}](vs []P, project func(P) string, scope string) []string {
	ids := make([]string, 0, len(vs))
	for _, v := range vs {
		if v == nil || project(v) != scope {
			return nil
		}
		ids = append(ids, v.EntityID())
	}
	return ids
}
