package snapstore

import (
	"bytes"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// A snapshot at the cost of what changed. The Cache keeps, per project,
// the fingerprints of the newest snapshot Put stored (its entities'
// digests, their sum: the state hash of formats 5 to 7, and the header
// of its chain), and the engine tells it (Track) which entities each
// event it folds writes, and that the event was folded. The next Put of
// the project, when the newest stored snapshot is still the one the
// Cache describes and every event of the project since was folded
// through Track (the project's event count says so), reads only the
// entities the events wrote, brings the fingerprints and the sum up to
// date with them, and stores the delta of those entities, proven as any
// delta is: so it costs what the project changed since its last
// snapshot, not the size of its state. A full snapshot, when the policy
// makes one due, is made from the state the Cache keeps whole (every
// entity's encoding, up to MaxCacheBytes in all), else reads the whole
// state, as before.
//
// A batch's inline projection tells the Cache what its flushes write
// (Flushed: the sealed value and the entity's encoding, which Put takes
// instead of reading the entity back, when the value stored is still the
// one captured); then Track only counts the events, and the flushes name
// the entities (every write of an entity goes through a flush before a
// snapshot reads it). A command's own projection, which does not tell,
// is wrapped by Track to name the entities the fold puts.
//
// An entity the journal names but that did not change costs a read; an
// entity it misses would make a wrong snapshot, so anything that may
// write projections without Track makes the Cache forget its journals:
// a transaction that fails (the engine calls Reset), a fold Track did not
// see (the event count), another process (it cannot write while this one
// holds the file), a snapshot this Put did not write (the newest stored
// snapshot's seq and state hash). Then Put reads the whole state.

// maxJournal bounds the entities a journal names: past it, the next Put
// of the project reads the whole state.
const maxJournal = 1 << 18

// maxJournalBytes bounds the bytes the journals of a Cache keep (their
// captures' values and encodings): past it, they name entities without
// keeping them.
const maxJournalBytes = 128 << 20

// journal is what the engine folded of a project since the snapshot the
// Cache keeps of it: how many events (of increasing seqs; an event
// folded again, by a transaction run again, is not counted again: then
// the count falls short and Put reads the whole state), the entities
// they wrote, with what the flushes wrote of them (Flushed).
type journal struct {
	folded uint64 // events
	last   uint64 // the seq of the last one counted
	keys   map[tkey]capture
	over   bool // more than maxJournal: useless
}

// capture is what a flush last wrote of an entity (Flushed): the sealed
// value it put and the entity's msgpack; nil, nil when none is kept. Put
// takes the msgpack for the entity's encoding when the value stored is,
// byte for byte, the one captured: the encoding the stored value
// unpacks to (projstore.EntityMsgpack), without unpacking it or, for an
// exec stored by reference, reading its event.
type capture struct {
	sealed, msgpack []byte
}

// tkey is an entity a journal names: its kind (a list of a RawScope) and
// id.
type tkey struct {
	kind int
	id   string
}

// bytes is the size of the encodings j keeps.
func (j *journal) bytes() int {
	n := 0
	for _, cp := range j.keys {
		n += cp.size()
	}
	return n
}

// size is the memory cp holds.
func (cp capture) size() int { return len(cp.sealed) + len(cp.msgpack) }

func newJournal() *journal {
	return &journal{keys: map[tkey]capture{}}
}

// Reset makes c forget what it keeps (the snapshots' fingerprints, the
// journals): the engine calls it when a transaction failed, since the
// journals may name writes that did not commit.
func (c *Cache) Reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bases, c.touched, c.size, c.captured = nil, nil, 0, 0
}

// Track returns s, through which the engine folds record r, made to tell
// c which entities the fold writes: s itself when c keeps no project's
// snapshot, or when s tells c of its flushes (projstore.Tx.Notifies).
func (c *Cache) Track(s projection.Store, r *store.Record) projection.Store {
	if c == nil {
		return s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.touched) == 0 {
		return s
	}
	if j := c.touched[r.Project]; j != nil && !j.over && r.Seq > j.last {
		j.folded, j.last = j.folded+1, r.Seq
	}
	if n, ok := s.(interface{ Notifies() bool }); ok && n.Notifies() {
		return s // its flushes name what it writes (Flushed), before any snapshot reads it
	}
	return tracker{Store: s, c: c}
}

// Tracked is how many snapshots c made from a journal (the entities the
// folds since the last one wrote) rather than from the whole state: for
// tests.
func (c *Cache) Tracked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tracked
}

// Reused is how many entities c's snapshots took from a journal's
// captures rather than reading them, and how many full snapshots it made
// from a state it kept whole rather than read: for tests.
func (c *Cache) Reused() (captured, whole int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.wholes
}

// touch notes that entity id of kind (a list's index) of project was
// written or deleted.
func (c *Cache) touch(project string, kind int, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j := c.touched[project]
	if j == nil || j.over {
		return
	}
	if kind < 0 {
		j.over = true
		return
	}
	k := tkey{kind, id}
	if _, ok := j.keys[k]; !ok { // a capture already there stays: the sealed value says if it is still good
		j.keys[k] = capture{}
		j.over = len(j.keys) > maxJournal
	}
}

// Flushed hears what a flush of the inline projection wrote
// (projstore.FlushFunc): it keeps, in project's journal, a copy of the
// entity's msgpack and the sealed value, up to maxJournalBytes in all.
func (c *Cache) Flushed(bucket, key string, sealed, msgpack []byte) {
	if c == nil {
		return
	}
	kind := slices.Index(kinds[:], bucket)
	cut := strings.LastIndexByte(key, '/')
	if kind < 0 || cut < 0 {
		return // the project entity: Put reads it anyway
	}
	project, id := key[:cut], key[cut+1:]
	c.mu.Lock()
	defer c.mu.Unlock()
	j := c.touched[project]
	if j == nil || j.over {
		return
	}
	k := tkey{kind, id}
	old, ok := j.keys[k]
	c.captured -= old.size()
	cp := capture{}
	if sealed != nil && c.captured+len(sealed)+len(msgpack) <= maxJournalBytes {
		cp = capture{sealed: sealed, msgpack: bytes.Clone(msgpack)}
		c.captured += cp.size()
	}
	j.keys[k] = cp
	if !ok {
		j.over = len(j.keys) > maxJournal
	}
}

// tracker is a projection.Store that tells its Cache what it writes.
type tracker struct {
	projection.Store
	c *Cache
}

func (t tracker) PutPlan(v *projection.Plan) error {
	t.c.touch(v.Project, 0, v.ID)
	return t.Store.PutPlan(v)
}

func (t tracker) PutTask(v *projection.Task) error {
	t.c.touch(v.Project, 1, v.ID)
	return t.Store.PutTask(v)
}

func (t tracker) PutApproval(v *projection.Approval) error {
	t.c.touch(v.Project, 2, v.ID)
	return t.Store.PutApproval(v)
}

func (t tracker) PutExec(v *projection.Exec) error {
	t.c.touch(v.Project, 3, v.ID)
	return t.Store.PutExec(v)
}

func (t tracker) PutCheckpoint(v *projection.Checkpoint) error {
	t.c.touch(v.Project, 4, v.ID)
	return t.Store.PutCheckpoint(v)
}

func (t tracker) Delete(kind, project, id string) error {
	i := -1 // unknown: the journal is given up
	switch kind {
	case projection.KindPlan:
		i = 0
	case projection.KindTask:
		i = 1
	case projection.KindApproval:
		i = 2
	case projection.KindExec:
		i = 3
	}
	t.c.touch(project, i, id)
	return t.Store.Delete(kind, project, id)
}

// take removes from c and returns what it keeps of project's newest
// snapshot and the journal since, when both can make the next snapshot:
// the newest snapshot stored before seq is the one kept (its seq, state
// hash and fold version), its chain checks and the journal is whole.
// Otherwise it leaves c as it is (Put's reading of the whole state may use
// what it keeps).
func (c *Cache) take(tx store.Tx, project string, seq uint64) (cached, *journal, bool, error) {
	if c == nil || seq == 0 {
		return cached{}, nil, false, nil
	}
	c.mu.Lock()
	e, ok := c.bases[project]
	j := c.touched[project]
	c.mu.Unlock()
	if !ok || j == nil || j.over {
		return e, nil, false, nil
	}
	// The chain is walked by its headers, as for any delta (headChain):
	// a writer never builds on a chain a read would not resolve.
	ch, _, ok, err := headChain(tx, project, seq)
	if err != nil || !ok || ch.top.Seq != e.seq || ch.top.StateHash != e.hash || ch.top.ProjectionVersion != writeVersion() {
		return e, nil, false, err
	}
	e.chain = ch
	c.mu.Lock()
	defer c.mu.Unlock()
	if now, ok := c.bases[project]; !ok || now.state != e.state || c.touched[project] != j {
		return e, nil, false, nil
	}
	c.size -= e.state.size
	c.captured -= j.bytes()
	delete(c.bases, project)
	delete(c.touched, project)
	return e, j, true, nil
}

// putTracked stores the snapshot of project at the head of tx from what
// the Cache keeps of its newest snapshot and the journal since (see
// above). done is false when it cannot (nothing kept, or a check failed):
// then Put reads the whole state. It returns the project entity's
// encoding and the size of the whole state's snapshot unpacked.
func (c *Cache) putTracked(tx store.Tx, project string) (pb []byte, full int, done bool, err error) {
	seq, chain := tx.Head()
	e, j, ok, err := c.take(tx, project, seq)
	if !ok || err != nil {
		return nil, 0, false, err
	}
	pv, err := tx.Get(projstore.BucketProjects, []byte(project))
	if err != nil || pv == nil {
		return nil, 0, false, err
	}
	if pb, err = projstore.EntityMsgpack(tx, projstore.BucketProjects, []byte(project), pv); err != nil {
		return nil, 0, false, err
	}
	pb = bytes.Clone(pb)
	p := new(projection.Project)
	if _, err := projection.DecodeEntity(pb, p); err != nil || p.Name != project {
		return nil, 0, false, nil
	}
	if p.Events != e.events+j.folded {
		// A fold Track did not see: the snapshot's fingerprints are still
		// good, the journal is not.
		c.mu.Lock()
		if _, ok := c.bases[project]; !ok && c.bases != nil {
			c.bases[project] = e
			c.size += e.state.size
		}
		c.mu.Unlock()
		return nil, 0, false, nil
	}
	st := e.state // taken: ours to change
	st.scan, st.size = [5][]rawEntity{}, 0
	if st.whole {
		for _, n := range st.bytes {
			st.size += n
		}
	}
	ch := &snapshot.RawScope{}
	del := &snapshot.Deleted{}
	dels := []*[]string{&del.Plans, &del.Tasks, &del.Approvals, &del.Execs, &del.Checkpoints}
	changed := ch.Lists()
	type named struct {
		id string
		capture
	}
	byKind, chIDs := [5][]named{}, [5][]string{}
	for k, cp := range j.keys {
		byKind[k.kind] = append(byKind[k.kind], named{k.id, cp})
	}
	prefix := project + "/"
	bodyLen, hits := 0, 0
	for i, ids := range byKind {
		*changed[i], *dels[i] = [][]byte{}, []string{}
		slices.SortFunc(ids, func(a, b named) int { return compareIDs(a.id, b.id) })
		for _, n := range ids {
			id := n.id
			key := []byte(prefix + id)
			v, err := tx.Get(kinds[i], key)
			if err != nil {
				return nil, 0, false, err
			}
			at, found := slices.BinarySearchFunc(st.lists[i], id, func(e rawEntity, id string) int { return compareIDs(e.id, id) })
			if v == nil {
				if found {
					st.drop(i, at)
					*dels[i] = append(*dels[i], id)
				}
				continue
			}
			b := n.msgpack // the journal's own copy
			if n.sealed == nil || !bytes.Equal(v, n.sealed) {
				if b, err = projstore.EntityMsgpack(tx, kinds[i], key, v); err != nil {
					return nil, 0, false, err
				}
				b = bytes.Clone(b)
			} else {
				hits++
			}
			ne := entity(snapshot.KindList+i, id, b)
			if found && st.lists[i][at].fp == ne.fp {
				continue
			}
			// Checked canonical by the proof (provenDelta).
			st.set(i, at, found, ne)
			*changed[i] = append(*changed[i], ne.b)
			chIDs[i] = append(chIDs[i], id)
			bodyLen += len(ne.b) + len(id) + 8
		}
	}
	pe := entity(snapshot.KindProject, project, pb)
	if st.project.id == "" || st.project.fp != pe.fp {
		if canonical(project, -1, pe) != nil {
			return nil, 0, false, nil
		}
		if st.project.id != "" {
			st.sum.Sub(snapshot.KindProject, st.project.fp)
		}
		st.sum.Add(snapshot.KindProject, pe.fp)
		ch.Project = pb
	}
	st.project = rawEntity{id: project, fp: pe.fp, n: pe.n}
	full = unpacked(project, false, st.rawLen())
	h := snapshot.Header{ProjectionVersion: writeVersion(), Scope: project, Seq: seq, ChainHash: chain}
	body := snapshot.AppendDeltaBody(make([]byte, 0, bodyLen+len(pb)+64), ch, del)
	n := unpacked(project, true, len(body))
	if e.chain.deltas >= MaxDeltaChain || n > full/2 || e.chain.deltaBytes+n > MaxChainBytes*e.chain.fullBytes {
		if st.whole {
			pb, full, done, err := c.putWhole(tx, project, h, st, pb, ch, chIDs, p.Events)
			if done {
				c.mu.Lock()
				c.hits += hits
				c.mu.Unlock()
			}
			return pb, full, done, err
		}
		// A full snapshot is due: the whole state, read and checked
		// against the state kept (the entities that differ from it are
		// checked canonical).
		cur, err := readRaw(tx, project, nil)
		if err != nil {
			return nil, 0, false, err
		}
		if _, _, err := diffRaw(project, st, cur, true); err != nil {
			return nil, 0, false, nil
		}
		np := printsOf(cur, true) // kept whole, room permitting: the next full snapshot reads nothing
		rs := cur.scope()
		full = unpacked(project, false, rs.RawLen())
		b, nh, err := snapshot.PackFullSum(h, snapshot.AppendRawScope(make([]byte, 0, full), rs), np.sum.Hash())
		if err != nil {
			return nil, 0, false, err
		}
		c.put(project, cached{seq: seq, hash: nh.StateHash, state: np, events: p.Events,
			chain: chainOf{top: nh, fullBytes: full}})
		c.mu.Lock()
		c.tracked++
		c.hits += hits
		c.mu.Unlock()
		return cur.project.b, full, true, tx.Put(Bucket, Key(project, seq), b)
	}
	h.StateHash = st.sum.Hash()
	h.BaseSeq, h.BaseHash = e.seq, e.hash
	b, nh, err := snapshot.PackDeltaNames(h, body)
	if err != nil {
		return nil, 0, false, err
	}
	if !provenDelta(b, ch, chIDs, del) {
		return nil, 0, false, nil
	}
	c.put(project, cached{seq: seq, hash: nh.StateHash, state: st, events: p.Events,
		chain: chainOf{top: nh, deltas: e.chain.deltas + 1, deltaBytes: e.chain.deltaBytes + n, fullBytes: e.chain.fullBytes}})
	c.mu.Lock()
	c.tracked++
	c.hits += hits
	c.mu.Unlock()
	return pb, full, true, tx.Put(Bucket, Key(project, seq), b)
}

// putWhole is putTracked's full snapshot of state st, which keeps every
// entity's bytes (prints.whole): those of the state of the last snapshot,
// proven when it was stored (or read whole), brought up to date with the entities the
// journal named (ch, whose ids are ids; pb the project entity's), which
// are checked canonical here as a delta's proof checks them. It reads
// nothing else.
func (c *Cache) putWhole(tx store.Tx, project string, h snapshot.Header, st *prints, pb []byte, ch *snapshot.RawScope, ids [5][]string, events uint64) ([]byte, int, bool, error) {
	for i, l := range ch.Lists() {
		for k, b := range *l {
			if canonical(project, i, rawEntity{id: ids[i][k], b: b}) != nil {
				return nil, 0, false, nil
			}
		}
	}
	rs := &snapshot.RawScope{Project: pb}
	for i, l := range rs.Lists() {
		*l = make([][]byte, len(st.lists[i]))
		for j, x := range st.lists[i] {
			if x.b == nil || len(x.b) != x.n {
				return nil, 0, false, nil
			}
			(*l)[j] = x.b
		}
	}
	full := unpacked(project, false, rs.RawLen())
	b, nh, err := snapshot.PackFullSum(h, snapshot.AppendRawScope(make([]byte, 0, full), rs), st.sum.Hash())
	if err != nil {
		return nil, 0, false, err
	}
	c.put(project, cached{seq: h.Seq, hash: nh.StateHash, state: st, events: events,
		chain: chainOf{top: nh, fullBytes: full}})
	c.mu.Lock()
	c.tracked++
	c.wholes++
	c.mu.Unlock()
	return pb, full, true, tx.Put(Bucket, Key(project, h.Seq), b)
}

// provenDelta reports whether delta b decodes to the changes ch (whose
// entities' ids are ids) and del: each entity it holds is of the
// delta's project (DecodeDelta checks) with the id it was read under,
// and re-encodes to the bytes put in, in order (so those bytes are the
// canonical encoding of what they hold), and it deletes the ids given. With the base's state hash checked by every
// read, this proves that a read resolves b to the state it names (the
// sum of the state kept, brought up to date with exactly these entities).
func provenDelta(b []byte, ch *snapshot.RawScope, ids [5][]string, del *snapshot.Deleted) bool {
	_, d, err := snapshot.DecodeDelta(b)
	if err != nil {
		return false
	}
	if (d.Changed.Project == nil) != (ch.Project == nil) {
		return false
	}
	if ch.Project != nil {
		if enc, _ := projection.AppendEntity(nil, d.Changed.Project); !bytes.Equal(enc, ch.Project) {
			return false
		}
	}
	// Each entity re-encoded into one scratch buffer: the proof needs its
	// bytes and id, not its fingerprint (changedOf).
	var buf []byte
	l := ch.Lists()
	if !provenList(&buf, d.Changed.Plans, *l[0], ids[0]) || !provenList(&buf, d.Changed.Tasks, *l[1], ids[1]) ||
		!provenList(&buf, d.Changed.Approvals, *l[2], ids[2]) || !provenList(&buf, d.Changed.Execs, *l[3], ids[3]) ||
		!provenList(&buf, d.Changed.Checkpoints, *l[4], ids[4]) {
		return false
	}
	return slices.Equal(d.Deleted.Plans, del.Plans) && slices.Equal(d.Deleted.Tasks, del.Tasks) &&
		slices.Equal(d.Deleted.Approvals, del.Approvals) && slices.Equal(d.Deleted.Execs, del.Execs) &&
		slices.Equal(d.Deleted.Checkpoints, del.Checkpoints)
}

// provenList reports whether the entities got, decoded from a delta, are
// those put in, in order: each with the id given (ids) and re-encoding to
// the bytes given (want). buf is scratch.
func provenList[T interface{ EntityID() string }](buf *[]byte, got []T, want [][]byte, ids []string) bool {
	if len(got) != len(want) || len(ids) != len(want) {
		return false
	}
	for k, v := range got {
		*buf, _ = projection.AppendEntity((*buf)[:0], v)
		if v.EntityID() != ids[k] || !bytes.Equal(*buf, want[k]) {
			return false
		}
	}
	return true
}

// drop removes the at-th entity of list i from p.
func (p *prints) drop(i, at int) {
	old := p.lists[i][at]
	p.sum.Sub(snapshot.KindList+i, old.fp)
	p.bytes[i] -= old.n
	p.size -= len(old.b)
	p.lists[i] = slices.Delete(p.lists[i], at, at+1)
}

// set puts e in list i of p at at: in place of the entity there when
// found, else inserted.
func (p *prints) set(i, at int, found bool, e rawEntity) {
	k := rawEntity{id: e.id, fp: e.fp, n: e.n}
	if p.whole {
		k.b = e.b
	}
	if found {
		old := p.lists[i][at]
		p.sum.Sub(snapshot.KindList+i, old.fp)
		p.bytes[i] -= old.n
		p.size -= len(old.b)
		p.lists[i][at] = k
	} else {
		p.lists[i] = slices.Insert(p.lists[i], at, k)
	}
	p.size += len(k.b)
	p.sum.Add(snapshot.KindList+i, e.fp)
	p.bytes[i] += e.n
}

// rawLen is the length of the body of the state p describes.
func (p *prints) rawLen() int {
	var counts [5]int
	for i, l := range p.lists {
		counts[i] = len(l)
	}
	proj := -1
	if p.project.id != "" {
		proj = p.project.n
	}
	return snapshot.RawLenOf(proj, counts, p.bytes)
}

// tally sums p's entities: its state sum and each list's bytes.
func (p *prints) tally() {
	p.sum, p.bytes = snapshot.StateSum{}, [5]int{}
	if p.project.id != "" {
		p.sum.Add(snapshot.KindProject, p.project.fp)
	}
	for i, l := range p.lists {
		for _, e := range l {
			p.sum.Add(snapshot.KindList+i, e.fp)
			p.bytes[i] += e.n
		}
	}
}

// entity is the rawEntity of kind (snapshot.KindProject or KindList+i)
// whose encoding is b.
func entity(kind int, id string, b []byte) rawEntity {
	return rawEntity{id: id, b: b, fp: snapshot.EntityDigest(kind, b), n: len(b)}
}
