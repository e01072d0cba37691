package snapstore

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// A state as Put handles it: the encodings of its entities, each with
// the SHA-256 of its encoding (its fingerprint), in the body's order. Put
// reads the current state as the inline projection stores it, without
// decoding an entity: a stored entity's body unpacks to the encoding a
// snapshot body holds (projection.AppendEntity; an exec stored by
// reference is read back from the log and encoded), so only the entities whose
// fingerprints differ from the base's are decoded (to check that their
// bytes are the canonical encoding, and to build the delta).

// kinds are the buckets of the listed kinds, in the body's order.
var kinds = [5]string{projstore.BucketPlans, projstore.BucketTasks, projstore.BucketApprovals, projstore.BucketExecs, projstore.BucketCheckpts}

// rawEntity is one entity: its id, its encoding and its fingerprint;
// read from the store (readRaw), also the SHA-256 of its stored value
// (sealed: checksum and all), which names its encoding (see readRaw).
type rawEntity struct {
	id  string
	b   []byte
	fp  [32]byte // snapshot.EntityDigest of b
	sfp [32]byte // zero: not read from the store
	n   int      // len(b), kept when b is not
}

// rawState is a project's whole state: the project entity (b nil when
// there is none) and each kind's entities in id order; read from the
// store, also in key order (scan), as the buckets list them.
type rawState struct {
	project rawEntity
	lists   [5][]rawEntity
	scan    [5][]rawEntity // readRaw's: key order; nil when encoded here
	trusted bool           // encoded here (rawOf): canonical
}

// scope is s as a snapshot.RawScope.
func (s *rawState) scope() *snapshot.RawScope {
	r := &snapshot.RawScope{Project: s.project.b}
	for i, l := range r.Lists() {
		*l = make([][]byte, len(s.lists[i]))
		for j, e := range s.lists[i] {
			(*l)[j] = e.b
		}
	}
	return r
}

// prints is what Put keeps of a state: the fingerprints of its entities
// (lists, in id order, without their bytes) and, when the state was read
// from the store and the Cache had room for it, its entities as read
// (scan, in key order, with their bytes and stored values' fingerprints),
// which the next readRaw takes instead of encoding again the entities
// whose stored values did not change.
type prints struct {
	project rawEntity // b nil
	lists   [5][]rawEntity
	scan    [5][]rawEntity // nil: none kept
	size    int            // the bytes scan (or, with whole, lists) holds
	sum     snapshot.StateSum
	bytes   [5]int // the bytes of each list's encodings
	// whole: lists keep each entity's bytes (b), so that a full snapshot
	// of the state needs no read (track.go).
	whole bool
}

// printsOf keeps s's fingerprints and, with bytes, its entities as read
// (whose bytes must be s's own, not a transaction's): then s's lists
// themselves, which share the bytes, else copies without them.
func printsOf(s *rawState, bytes bool) *prints {
	p := &prints{project: rawEntity{id: s.project.id, fp: s.project.fp, n: len(s.project.b)}, lists: s.lists}
	p.tally()
	if !bytes || s.scan[0] == nil {
		p.strip()
		return p
	}
	p.scan, p.whole = s.scan, true
	for _, l := range s.scan {
		for _, e := range l {
			p.size += len(e.b)
		}
	}
	return p
}

// strip makes p keep fingerprints only: its lists copied without their
// bytes, no entities as read.
func (p *prints) strip() {
	for i, l := range p.lists {
		out := make([]rawEntity, len(l))
		for j, e := range l {
			out[j] = rawEntity{id: e.id, fp: e.fp, n: e.n}
		}
		p.lists[i] = out
	}
	p.scan, p.size, p.whole = [5][]rawEntity{}, 0, false
}

// readRaw reads project's state from the inline projection's buckets
// through tx, every record's checksum checked (a damaged one is a
// projstore.ErrDamaged), in id order, its bytes its own (which printsOf
// may keep). With reuse (the entities of a state read before, kept by
// printsOf), an entity whose stored value is, byte for byte (by its
// SHA-256), the one reuse read under its key is not read again, but
// given reuse's encoding and fingerprint. A stored value names its
// encoding: an entity's body is its encoding packed, and an exec stored
// by reference names its event, which the log never changes (reuse must
// come from a transaction that committed, or this one: see Cache).
func readRaw(tx store.Tx, project string, reuse *prints) (*rawState, error) {
	s := &rawState{}
	v, err := tx.Get(projstore.BucketProjects, []byte(project))
	if err != nil || v == nil {
		return s, err
	}
	if s.project.b, err = projstore.EntityMsgpack(tx, projstore.BucketProjects, []byte(project), v); err != nil {
		return nil, err
	}
	s.project = entity(snapshot.KindProject, project, s.project.b)
	prefix := project + "/"
	for i, bucket := range kinds {
		var old []rawEntity
		if reuse != nil {
			old = reuse.scan[i]
		}
		l := make([]rawEntity, 0, len(old)+16)
		err := store.ScanShared(tx, bucket, []byte(prefix), func(k, v []byte) error {
			id := k[len(prefix):]
			sfp := sha256.Sum256(v)
			for len(old) > 0 && old[0].id < string(id) {
				old = old[1:]
			}
			if len(old) > 0 && old[0].id == string(id) && old[0].sfp == sfp {
				l = append(l, old[0])
				old = old[1:]
				return nil
			}
			body, err := projstore.EntityMsgpack(tx, bucket, k, v)
			if err != nil {
				return err
			}
			body = bytes.Clone(body) // the scan's are valid for the call only (ScanShared)
			e := entity(snapshot.KindList+i, string(id), body)
			e.sfp = sfp
			l = append(l, e)
			return nil
		})
		if err != nil {
			return nil, err
		}
		s.scan[i] = l
		s.lists[i] = sortByID(l) // a new slice: l stays in key order
	}
	return s, nil
}

// sortByID sorts l, in key order (as the bucket lists it), in id order
// (projection.CompareIDs). Ids of the form PREFIX-N (N without a leading
// zero) in key order are in id order within each run of one prefix and
// one number of digits, so such a list is sorted by a stable grouping by
// prefix and length, in linear time; any other id makes it sort by
// comparison, each id split once.
func sortByID(l []rawEntity) []rawEntity {
	if out, ok := groupByID(l); ok {
		return out
	}
	return compareSort(l)
}

// groupByID is sortByID for lists whose ids are all PREFIX-N: a
// counting sort of l by prefix and number of digits, stable.
func groupByID(l []rawEntity) ([]rawEntity, bool) {
	type group struct {
		prefix string
		digits int
		n      int // entities, then where the group starts in the output
	}
	var groups []group // few: one per prefix and length
	at := make([]int32, len(l))
	last := -1
	for i, e := range l {
		prefix, num, ok := strings.Cut(e.id, "-")
		if !ok || len(num) == 0 || num[0] == '0' || len(num) > 18 || strings.TrimLeft(num, "0123456789") != "" {
			return nil, false
		}
		if last < 0 || groups[last].prefix != prefix || groups[last].digits != len(num) {
			last = slices.IndexFunc(groups, func(g group) bool { return g.prefix == prefix && g.digits == len(num) })
			if last < 0 {
				groups, last = append(groups, group{prefix: prefix, digits: len(num)}), len(groups)
			}
		}
		groups[last].n++
		at[i] = int32(last)
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(strings.Compare(groups[a].prefix, groups[b].prefix), cmp.Compare(groups[a].digits, groups[b].digits))
	})
	start := 0
	for _, g := range order {
		n := groups[g].n
		groups[g].n, start = start, start+n
	}
	out := make([]rawEntity, len(l))
	for i, e := range l {
		g := &groups[at[i]]
		out[g.n] = e
		g.n++
	}
	return out, true
}

// compareIDs is projection.CompareIDs, without parsing the numbers of
// ids of the form PREFIX-N (N without a leading zero): two such numbers
// compare as their lengths, then their digits.
func compareIDs(a, b string) int {
	if a == b {
		return 0
	}
	pa, na, oka := strings.Cut(a, "-")
	pb, nb, okb := strings.Cut(b, "-")
	if !oka || !okb || !plainNumber(na) || !plainNumber(nb) {
		return projection.CompareIDs(a, b)
	}
	return cmp.Or(strings.Compare(pa, pb), cmp.Compare(len(na), len(nb)), strings.Compare(na, nb))
}

// plainNumber reports whether n is a number of at most 18 digits without
// a leading zero (so strconv.Atoi reads it, and its digits order it).
func plainNumber(n string) bool {
	if len(n) == 0 || len(n) > 18 || n[0] == '0' {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// compareSort sorts l in id order by comparison, each id split once.
func compareSort(l []rawEntity) []rawEntity {
	type keyed struct {
		prefix string
		n      int
		e      *rawEntity
	}
	ks := make([]keyed, len(l))
	for i := range l {
		prefix, num, _ := strings.Cut(l[i].id, "-")
		n, _ := strconv.Atoi(num)
		ks[i] = keyed{prefix, n, &l[i]}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		return cmp.Or(strings.Compare(a.prefix, b.prefix), cmp.Compare(a.n, b.n), strings.Compare(a.e.id, b.e.id))
	})
	out := make([]rawEntity, len(l))
	for i, k := range ks {
		out[i] = *k.e
	}
	return out
}

// rawOf encodes a decoded state (the canonical encodings).
func rawOf(st *projection.Scope) *rawState {
	s := &rawState{}
	if st.Project != nil {
		s.project = one(snapshot.KindProject, st.Project.Name, st.Project)
	}
	add := func(i int, id string, v any) { s.lists[i] = append(s.lists[i], one(snapshot.KindList+i, id, v)) }
	for _, v := range st.Plans {
		add(0, v.ID, v)
	}
	for _, v := range st.Tasks {
		add(1, v.ID, v)
	}
	for _, v := range st.Approvals {
		add(2, v.ID, v)
	}
	for _, v := range st.Execs {
		add(3, v.ID, v)
	}
	for _, v := range st.Checkpoints {
		add(4, v.ID, v)
	}
	for i := range s.lists {
		s.lists[i] = projection.NonNil(s.lists[i])
	}
	return s
}

// one is the rawEntity of entity v, of kind (snapshot.KindProject or
// KindList+i).
func one(kind int, id string, v any) rawEntity {
	b, _ := projection.AppendEntity(nil, v)
	return entity(kind, id, b)
}

// entities of a decoded delta's changed lists, by kind, and their ids.
func changedOf(c *projection.Scope) [5][]rawEntity {
	var out [5][]rawEntity
	for _, v := range c.Plans {
		out[0] = append(out[0], one(snapshot.KindList+0, v.ID, v))
	}
	for _, v := range c.Tasks {
		out[1] = append(out[1], one(snapshot.KindList+1, v.ID, v))
	}
	for _, v := range c.Approvals {
		out[2] = append(out[2], one(snapshot.KindList+2, v.ID, v))
	}
	for _, v := range c.Execs {
		out[3] = append(out[3], one(snapshot.KindList+3, v.ID, v))
	}
	for _, v := range c.Checkpoints {
		out[4] = append(out[4], one(snapshot.KindList+4, v.ID, v))
	}
	return out
}

// errNotCanonical: a stored entity is not the encoding of what it
// decodes to, or is not stored under its own id: Put reads the state
// decoded instead (ScopeOf).
var errNotCanonical = errors.New("snapstore: a stored entity is not in canonical form")

// canonical checks that entity e of kind i (-1: the project) of project,
// which the base does not have as it is, decodes, is stored under its
// own id and project, and re-encodes to its own bytes.
func canonical(project string, i int, e rawEntity) error {
	if e.b == nil || project == "" { // "": a state encoded here
		return nil
	}
	var v interface{ EntityID() string }
	switch i {
	case -1:
		p := new(projection.Project)
		if _, err := projection.DecodeEntity(e.b, p); err != nil || p.Name != project {
			return errNotCanonical
		}
		return same(e, p)
	case 0:
		v = new(projection.Plan)
	case 1:
		v = new(projection.Task)
	case 2:
		v = new(projection.Approval)
	case 3:
		v = new(projection.Exec)
	case 4:
		v = new(projection.Checkpoint)
	}
	if _, err := projection.DecodeEntity(e.b, v); err != nil || v.EntityID() != e.id || entityProject(v) != project {
		return errNotCanonical
	}
	return same(e, v)
}

func entityProject(v any) string {
	switch v := v.(type) {
	case *projection.Plan:
		return v.Project
	case *projection.Task:
		return v.Project
	case *projection.Approval:
		return v.Project
	case *projection.Exec:
		return v.Project
	case *projection.Checkpoint:
		return v.Project
	}
	return ""
}

// same checks that v encodes to e's bytes.
func same(e rawEntity, v any) error {
	if b, _ := projection.AppendEntity(nil, v); string(b) != string(e.b) {
		return errNotCanonical
	}
	return nil
}

// diffRaw returns what changed from base to cur: the changed entities
// (all of cur's with a fingerprint base does not have under their id, in
// id order; the project's when it changed) and the deleted ids. With
// check, each changed entity is checked canonical (a delta's proof,
// resolvesTo, checks them without: it decodes and re-encodes them).
func diffRaw(project string, base *prints, cur *rawState, check bool) (*snapshot.RawScope, *snapshot.Deleted, error) {
	if cur.trusted || !check {
		project = "" // no check: see canonical
	}
	ch := &snapshot.RawScope{}
	if cur.project.b != nil && (base == nil || base.project.fp != cur.project.fp || base.project.id == "") {
		if err := canonical(project, -1, cur.project); err != nil {
			return nil, nil, err
		}
		ch.Project = cur.project.b
	}
	del := &snapshot.Deleted{}
	dels := []*[]string{&del.Plans, &del.Tasks, &del.Approvals, &del.Execs, &del.Checkpoints}
	for i, l := range ch.Lists() {
		var b []rawEntity
		if base != nil {
			b = base.lists[i]
		}
		changed, deleted, err := diffList(project, i, b, cur.lists[i])
		if err != nil {
			return nil, nil, err
		}
		*l, *dels[i] = changed, deleted
	}
	return ch, del, nil
}

// diffList is diffRaw for the entities of kind i.
func diffList(project string, i int, base, cur []rawEntity) (changed [][]byte, deleted []string, err error) {
	changed, deleted = [][]byte{}, []string{}
	j := 0
	for _, e := range cur {
		for j < len(base) && compareIDs(base[j].id, e.id) < 0 {
			deleted = append(deleted, base[j].id)
			j++
		}
		if j < len(base) && base[j].id == e.id {
			j++
			if base[j-1].fp == e.fp {
				continue
			}
		}
		if err := canonical(project, i, e); err != nil {
			return nil, nil, err
		}
		changed = append(changed, e.b)
	}
	for ; j < len(base); j++ {
		deleted = append(deleted, base[j].id)
	}
	return changed, deleted, nil
}

// resolvesTo reports whether delta b, decoded, applied to the state of
// fingerprints base gives the state cur: every entity the delta holds is
// re-encoded and fingerprinted, merged by id into base's as Delta.Apply
// merges them, and the result compared with cur's, entity by entity.
// Since the state hash is the hash of the entities' encodings in that
// order, this proves what ResolvesTo proves (that a read resolves the
// delta to the state it names) without re-encoding the entities the
// delta does not hold. It also proves each of the delta's entities the
// canonical encoding of what it holds, stored under its own id: the
// entity decoded from it re-encodes to it, with that id.
func resolvesTo(base *prints, b []byte, cur *rawState) bool {
	_, d, err := snapshot.DecodeDelta(b)
	if err != nil {
		return false
	}
	project := base.project
	if d.Changed.Project != nil {
		project = one(snapshot.KindProject, d.Changed.Project.Name, d.Changed.Project)
	}
	if project.fp != cur.project.fp || (cur.project.b == nil) != (project.id == "") {
		return false
	}
	changed := changedOf(d.Changed)
	del := []([]string){d.Deleted.Plans, d.Deleted.Tasks, d.Deleted.Approvals, d.Deleted.Execs, d.Deleted.Checkpoints}
	for i := range changed {
		if !mergesTo(base.lists[i], changed[i], del[i], cur.lists[i]) {
			return false
		}
	}
	return true
}

// mergesTo reports whether base with changed put in by id (replacing or
// inserted) and the ids in deleted removed is want, fingerprint for
// fingerprint.
func mergesTo(base, changed []rawEntity, deleted []string, want []rawEntity) bool {
	slices.SortFunc(changed, func(a, b rawEntity) int { return projection.CompareIDs(a.id, b.id) })
	gone := make(map[string]bool, len(deleted))
	for _, id := range deleted {
		gone[id] = true
	}
	n, i, j := 0, 0, 0
	next := func() (rawEntity, bool) {
		for i < len(base) || j < len(changed) {
			var e rawEntity
			switch {
			case j == len(changed) || (i < len(base) && compareIDs(base[i].id, changed[j].id) < 0):
				e, i = base[i], i+1
			case i < len(base) && base[i].id == changed[j].id:
				e, i, j = changed[j], i+1, j+1
			default:
				e, j = changed[j], j+1
			}
			if !gone[e.id] {
				return e, true
			}
		}
		return rawEntity{}, false
	}
	for e, ok := next(); ok; e, ok = next() {
		if n == len(want) || want[n].id != e.id || want[n].fp != e.fp {
			return false
		}
		n++
	}
	return n == len(want)
}

// Cache keeps, per project, the fingerprints of the newest snapshot Put
// stored, so that the next Put in the same process diffs against them
// rather than decoding that snapshot's chain. An entry is used only when
// the project's newest stored snapshot is the one it describes (its seq
// and state hash, its chain's headers checked): a transaction that rolled
// back, or a snapshot written by another process, makes it miss. A nil
// *Cache keeps nothing. It is safe for concurrent use.
//
// With the fingerprints, it keeps the entities of each snapshot's state as
// Put read them from the store (their bytes, and the fingerprints of their
// stored values), up to MaxCacheBytes of them in all, so that the next Put
// of the project reads again only the entities whose stored values
// changed since (readRaw): a snapshot costs about the entities the
// project changed, not its whole state, but for hashing the state.
type Cache struct {
	mu       sync.Mutex
	bases    map[string]cached
	size     int                 // the bytes of the entities kept
	touched  map[string]*journal // per project in bases: what was folded since (track.go)
	captured int                 // the bytes of the encodings the journals keep
	tracked  int                 // snapshots stored from a journal
	hits     int                 // entities a journal's capture gave (track.go)
	wholes   int                 // full snapshots from a state kept whole (putWhole)
}

// MaxCacheBytes bounds the bytes of the entities a Cache keeps: a state
// that would take it over is kept as fingerprints only (its next Put reads
// the whole state again).
const MaxCacheBytes = 512 << 20

type cached struct {
	seq   uint64
	hash  [32]byte
	state *prints
	// chain is the chain whose top is this snapshot (Format 0: not
	// known), events the project's event count at seq: what the next
	// Put needs to write a delta on it from a journal (track.go).
	chain  chainOf
	events uint64
}

// maxCached is the most projects a Cache keeps.
const maxCached = 64

func (c *Cache) get(project string, seq uint64, hash [32]byte) *prints {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.bases[project]; ok && e.seq == seq && e.hash == hash {
		return e.state
	}
	return nil
}

// newest returns the prints the cache keeps of project's newest stored
// snapshot before the head of tx, if it keeps that one's (its seq and
// state hash); else nil. Its entities were read in a transaction that
// committed (or tx itself): that snapshot is stored.
func (c *Cache) newest(tx store.Tx, project string) (*prints, error) {
	if c == nil {
		return nil, nil
	}
	seq, _ := tx.Head()
	prefix := Prefix(project)
	k, v, err := tx.Last(Bucket, prefix, Key(project, seq-1))
	if err != nil || k == nil || len(k) != len(prefix)+8 {
		return nil, err
	}
	h, err := snapshot.Frame(v)
	if err != nil {
		return nil, nil // damaged: Put writes a full snapshot
	}
	return c.get(project, binary.BigEndian.Uint64(k[len(prefix):]), h.StateHash), nil
}

func (c *Cache) put(project string, e cached) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bases == nil {
		c.bases, c.touched = map[string]cached{}, map[string]*journal{}
	}
	old, ok := c.bases[project]
	if !ok && len(c.bases) >= maxCached {
		for k, e := range c.bases { // any one: the cache is an optimisation
			c.size -= e.state.size
			if j := c.touched[k]; j != nil {
				c.captured -= j.bytes()
			}
			delete(c.bases, k)
			delete(c.touched, k)
			break
		}
	}
	if ok {
		c.size -= old.state.size
	}
	if p := e.state; c.size+p.size > MaxCacheBytes {
		p.strip()
	}
	c.size += e.state.size
	c.bases[project] = e
	if j := c.touched[project]; j != nil {
		c.captured -= j.bytes()
	}
	c.touched[project] = newJournal()
}

// chainOf is what Put needs of the chain of the newest stored snapshot:
// its header, and the links' sizes unpacked.
type chainOf struct {
	top        snapshot.Header
	deltas     int // the deltas of the chain, the top included
	deltaBytes int // their size unpacked
	fullBytes  int // the full snapshot's size unpacked
}

// unpacked is the size of the snapshot of scope, a delta or not, whose
// body is body bytes long, stored unpacked (format 1 or 2): the size the
// policy weighs snapshots by, packed or not, so that it takes the
// decisions it took before snapshots were packed (and weighs what a
// read decodes, not what the disk holds).
func unpacked(scope string, delta bool, body int) int {
	if delta {
		return snapshot.MinDeltaSize + len(scope) + body
	}
	return snapshot.MinSize + len(scope) + body
}

// headChain finds project's newest stored snapshot before seq and walks
// its chain by headers (framing, CRC, CheckHeader, each link's state
// hash the one the delta above was made on), decoding no body. ok is
// false when there is none or a check fails: a full snapshot is due.
func headChain(tx store.Tx, project string, seq uint64) (c chainOf, v []byte, ok bool, err error) {
	prefix := Prefix(project)
	k, v, err := tx.Last(Bucket, prefix, Key(project, seq-1))
	if err != nil || k == nil || len(k) != len(prefix)+8 {
		return c, nil, false, err
	}
	top := v
	var want [32]byte
	for at := binary.BigEndian.Uint64(k[len(prefix):]); ; {
		h, ferr := snapshot.Frame(v)
		if ferr == nil {
			ferr = CheckHeader(tx, h, project, at)
		}
		if ferr == nil && c.deltas > 0 && h.StateHash != want {
			ferr = &snapshot.CorruptError{Reason: "a base is not the state its delta was made on"}
		}
		if ferr != nil {
			if errors.Is(ferr, snapshot.ErrCorrupt) {
				ferr = nil
			}
			return c, nil, false, ferr
		}
		if c.top.Format == 0 { // the newest: the first link
			c.top = h
		}
		if !h.IsDelta() {
			c.fullBytes = unpacked(h.Scope, false, int(h.BodyLen))
			return c, top, true, nil
		}
		c.deltas, c.deltaBytes = c.deltas+1, c.deltaBytes+unpacked(h.Scope, true, int(h.BodyLen))
		if c.deltas > maxChainRead {
			return c, nil, false, nil
		}
		if v, err = tx.Get(Bucket, Key(project, h.BaseSeq)); err != nil || v == nil {
			return c, nil, false, err
		}
		want, at = h.BaseHash, h.BaseSeq
	}
}

// baseOf returns the fingerprints of the state of the newest stored
// snapshot (chain c, stored as v): the cache's, or else the chain
// resolved and encoded. nil when it does not resolve.
func baseOf(tx store.Tx, project string, c chainOf, v []byte, cache *Cache) (*prints, error) {
	if p := cache.get(project, c.top.Seq, c.top.StateHash); p != nil {
		return p, nil
	}
	r, _, err := Resolve(tx, project, c.top.Seq, v)
	if errors.Is(err, snapshot.ErrCorrupt) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return printsOf(rawOf(Normalize(r.State)), false), nil // fingerprints of this binary's kind
}

// putRaw stores the snapshot of state cur at the head of tx: a delta on
// the newest stored snapshot when the policy allows (see Put),
// else a full one, both packed. It returns the state hash and the size
// of the whole state's snapshot unpacked.
func putRaw(tx store.Tx, project string, cur *rawState, cache *Cache) ([32]byte, int, error) {
	seq, chain := tx.Head()
	return putRawAt(tx, project, seq, chain, cur, cache)
}

// putRawAt is putRaw for the state cur of project at seq, whose chain
// hash is chain: a delta on the newest stored snapshot before seq.
func putRawAt(tx store.Tx, project string, seq uint64, chain store.Hash, cur *rawState, cache *Cache) ([32]byte, int, error) {
	h := snapshot.Header{ProjectionVersion: writeVersion(), Scope: project, Seq: seq, ChainHash: chain}
	rs := cur.scope()
	full := unpacked(project, false, rs.RawLen())
	np := printsOf(cur, true)
	b, nh, base, c, err := deltaRaw(tx, h, cur, rs, np, full, cache)
	if err == nil && b == nil {
		_, _, err = diffRaw(project, base, cur, true) // every entity not the base's checked canonical
	}
	if err != nil {
		return nh.StateHash, full, err
	}
	if b == nil {
		if b, nh, err = snapshot.PackFullSum(h, snapshot.AppendRawScope(make([]byte, 0, full), rs), np.sum.Hash()); err != nil {
			return nh.StateHash, full, err
		}
		c = chainOf{top: nh, fullBytes: full}
	} else {
		c = chainOf{top: nh, deltas: c.deltas + 1, deltaBytes: c.deltaBytes + unpacked(project, true, int(nh.BodyLen)), fullBytes: c.fullBytes}
	}
	p := new(projection.Project)
	if _, err := projection.DecodeEntity(cur.project.b, p); err != nil || cur.project.b == nil {
		c = chainOf{} // no delta from a journal on it
	}
	cache.put(project, cached{seq: seq, hash: nh.StateHash, state: np, chain: c, events: p.Events})
	return nh.StateHash, full, tx.Put(Bucket, Key(project, seq), b)
}

// deltaRaw returns the packed delta that turns the newest stored
// snapshot into cur (whose body rs writes; full: its snapshot's size
// unpacked), and its
// header; nil when a full snapshot is due (Put's rules), with the
// fingerprints of the newest snapshot's state when they were read. The
// delta's entities are not checked canonical before the proof
// (resolvesTo), which checks them: each is decoded, re-encoded and
// fingerprinted, and must be the state's.
func deltaRaw(tx store.Tx, h snapshot.Header, cur *rawState, rs *snapshot.RawScope, np *prints, full int, cache *Cache) ([]byte, snapshot.Header, *prints, chainOf, error) {
	if h.Seq == 0 {
		return nil, h, nil, chainOf{}, nil
	}
	c, v, ok, err := headChain(tx, h.Scope, h.Seq)
	if err != nil || !ok || c.deltas >= MaxDeltaChain {
		return nil, h, nil, c, err
	}
	base, err := baseOf(tx, h.Scope, c, v, cache)
	if err != nil || base == nil {
		return nil, h, nil, c, err
	}
	changed, deleted, err := diffRaw(h.Scope, base, cur, false)
	if err != nil {
		return nil, h, base, c, err
	}
	body := snapshot.AppendDeltaBody(nil, changed, deleted)
	if n := unpacked(h.Scope, true, len(body)); n > full/2 || c.deltaBytes+n > MaxChainBytes*c.fullBytes {
		return nil, h, base, c, nil
	}
	h.StateHash = np.sum.Hash()
	h.BaseSeq, h.BaseHash = c.top.Seq, c.top.StateHash
	b, nh, err := snapshot.PackDeltaNames(h, body)
	if err != nil || !resolvesTo(base, b, cur) {
		return nil, h, base, c, err // never stored: the whole state is
	}
	return b, nh, base, c, nil
}
