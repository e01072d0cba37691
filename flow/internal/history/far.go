package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// A diff of two far points without either whole state (Far). The
// entities that differ between points A and B are those the events in
// (A, B] wrote, and every event is on the stream of the entity it
// changes (EntityAt's placement rules): a task's stream holds its own
// events and those of its approvals and exec records, a plan's its own,
// the project's its own and those of the approvals and exec records of
// no task. So Far finds the entities the events in (A, B] wrote without
// folding them: from the snapshot deltas between the points (each names
// the entities that changed since the snapshot before it), and from the
// project's records only where no delta links two snapshots (from A to
// the first, across a full snapshot, from the last to B: each at most a
// snapshot gap); then it reads, for each stream that was there at A, its
// entities at A (EntityAt: that stream alone, and the project's
// rollbacks) and at B, and, for each entity created after A, only its
// title at B. At the head (B is the head and the projections are this
// binary's), the state at B is the projections', read by key. So a far
// diff costs the deltas between the points, a few snapshot gaps of
// records and the entities that changed, not the state at either point,
// and holds only those entities.

// farCreates are the events that create an entity of a kind a diff
// lists, by the index of its kind in a Scope's lists (plans, tasks,
// approvals, execs): each puts a new entity whose id is the payload's
// "id" (the fold's counter checks it is the next one, and ids are never
// reused).
var farCreates = map[string]int{
	projection.TypePlanCreated:       0,
	projection.TypeTaskCreated:       1,
	projection.TypeApprovalRequested: 2,
	projection.TypeExecRecorded:      3,
}

// farBuckets are the projections' buckets of the kinds a diff lists, in
// farCreates' order.
var farBuckets = [4]string{projstore.BucketPlans, projstore.BucketTasks, projstore.BucketApprovals, projstore.BucketExecs}

// farPrefixes are the ids' prefixes of those kinds.
var farPrefixes = [4]string{projection.PrefixPlan, projection.PrefixTask, projection.PrefixApproval, projection.PrefixExec}

// Far returns project's entities that events in (a, b] wrote (a <= b),
// as they stood at a and as they stand at b, each state a Scope of those
// entities only, as Between does: every entity that differs between the
// two points is there, and the others that are there are the same in
// both (a comparison tells them by their encodings). The entities at b
// alone (created after a) hold only their id and the title a diff names
// them by (a plan's or task's title, an approval's message, an exec
// record's command and code) when the projections hold them as they
// were at b: a diff lists them as added, by title. The project is there
// when an event on its stream is in (a, b] (its description and archived
// flag change only there), else nil in both. Checkpoints are left out.
//
// An entity at b is read from the inline projections, by key, when they
// are this binary's fold and its last change (Meta.Seq) is at or below
// b, as Source reads it; else from its stream's fold up to b (EntityAt).
//
// It returns ErrNotBetween when the events cannot be read that way: a
// rollback among them (it changes entities without touching them on
// their streams), an event on a stream outside the catalog or of another
// project, an entity's fold that fails (EntityAt), or a payload whose id
// does not read.
func Far(tx store.Tx, project string, a, b uint64, warn func(string, ...any)) (*projection.Scope, *projection.Scope, error) {
	x, y, born, err := FarBorn(tx, project, a, b, warn)
	if err != nil {
		return nil, nil, err
	}
	for k := range born.Len() {
		id, title := born.ID(k), born.Title(k)
		switch born.Kind(k) {
		case 0:
			y.Plans = append(y.Plans, &projection.Plan{ID: id, Title: title})
		case 1:
			y.Tasks = append(y.Tasks, &projection.Task{ID: id, Title: title})
		case 2:
			y.Approvals = append(y.Approvals, &projection.Approval{ID: id, Message: title})
		case 3:
			v := &projection.Exec{}
			v.ID, v.Command = id, title
			y.Execs = append(y.Execs, v)
		}
	}
	return x, y, nil
}

// FarBorn is Far with the entities at b alone apart: the scopes hold
// the entities that were there at a (at a and at b), and born those
// created after a, each by its id and title only, in no order. A diff
// lists each of them as added (or, from b to a, removed), so nothing
// but their titles is read or held.
func FarBorn(tx store.Tx, project string, a, b uint64, warn func(string, ...any)) (*projection.Scope, *projection.Scope, *Borns, error) {
	if b < a {
		return nil, nil, nil, errors.New("history: Far needs a <= b")
	}
	f := &far{tx: tx, project: project, a: a, b: b, warn: warn, seen: map[string]bool{},
		folds: map[string]*projection.Memory{}, x: &projection.Scope{}, y: &projection.Scope{}}
	for i := range f.noted {
		f.noted[i] = map[string]bool{}
	}
	// A rollback of the whole project, anywhere in its history, declines:
	// it restores entities without their streams' events in some cases
	// (plans), and the reads at a point around it are left to the states.
	head, _ := tx.Head()
	rb, err := ProjectRollbacks(tx, project, 0, head, warn)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(rb) > 0 {
		return nil, nil, nil, ErrNotBetween
	}
	ok, err := projstore.Current(tx)
	if err != nil {
		return nil, nil, nil, err
	}
	if ok {
		f.now = projstore.NewTx(tx)
	}
	if err := f.scan(); err != nil {
		return nil, nil, nil, err
	}
	f.bornIdx, f.noted = bornIndex{}, [4]map[string]bool{} // the scan's
	if err := f.streams(); err != nil {
		return nil, nil, nil, err
	}
	if err := f.finish(); err != nil {
		return nil, nil, nil, err
	}
	born, err := f.bornAtB()
	if err != nil {
		return nil, nil, nil, err
	}
	f.x.Plans, f.y.Plans = projection.NonNil(f.x.Plans), projection.NonNil(f.y.Plans)
	f.x.Tasks, f.y.Tasks = projection.NonNil(f.x.Tasks), projection.NonNil(f.y.Tasks)
	f.x.Approvals, f.y.Approvals = projection.NonNil(f.x.Approvals), projection.NonNil(f.y.Approvals)
	f.x.Execs, f.y.Execs = projection.NonNil(f.x.Execs), projection.NonNil(f.y.Execs)
	f.x.Checkpoints, f.y.Checkpoints = []*projection.Checkpoint{}, []*projection.Checkpoint{}
	return f.x, f.y, born, nil
}

// FarFirst reports whether Far should be tried before Between for the
// points a and b (a <= b): whether at least n of project's snapshots
// lie in (a, b] (read by key only). Between folds every event of the
// project from the snapshot at or below a to b; Far reads the log only
// from a to the first snapshot after it and from the last to b, and the
// deltas between, so across a few snapshots it reads less (Between
// weighs its fold against whole states, not against Far).
func FarFirst(tx store.Tx, project string, a, b uint64, n int) (bool, error) {
	prefix := snapstore.Prefix(project)
	seen := 0
	err := store.ScanShared(tx, snapstore.Bucket, prefix, func(k, _ []byte) error {
		if len(k) != len(prefix)+8 {
			return nil
		}
		seq := binary.BigEndian.Uint64(k[len(prefix):])
		if seq > b {
			return store.ErrStop
		}
		if seq > a {
			if seen++; seen >= n {
				return store.ErrStop
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrStop) {
		return false, err
	}
	return seen >= n, nil
}

// far is one Far read.
type far struct {
	tx      store.Tx
	project string
	a, b    uint64
	now     *projstore.Tx // the projections, when this binary's; else nil
	warn    func(string, ...any)

	// seen are the streams there at a whose entities (all of them) may
	// differ.
	seen map[string]bool
	// born are the entities created in (a, b] (bornIdx: their index
	// there by kind and id); extra the others a delta holds, each read at
	// a from its stream's fold (seen) and, when that does not hold it,
	// at b (finish).
	born        []bornRec
	bornStreams []string // the streams of born's that a record created
	bornIdx     bornIndex
	extra       []noted
	noted       [4]map[string]bool // the entities in extra, by kind and id
	// counters are the project's at a, when known.
	counters       [4]int
	known          bool
	projectTouched bool
	// folds are the streams folded up to b (EntityAt), by stream.
	folds map[string]*projection.Memory
	x, y  *projection.Scope
	// title is a title joined (nameFrom).
	title []byte
	// arena holds the ids and titles of born, one after the other
	// (bornRec's offsets): none is a string of its own, and FarBorn's
	// Borns are all of them as one string, not copied.
	arena strings.Builder
	idBuf []byte // an id made (newBorn)
	// overflow is set once the arena is past what bornRec's offsets
	// hold (2 GiB): its titles are not read, and bornAtB declines.
	overflow bool
}

// Borns are the entities created in (a, b] (FarBorn), each by its
// kind (the index of its list in a Scope: plans, tasks, approvals,
// execs; farCreates'), id and the title a diff names it by (a plan's or
// task's title, an approval's message, an exec record's command and
// code, joined). A far diff lists tens of thousands of them: they are
// held without a string or a pointer each, their ids and titles
// substrings of one string.
type Borns struct {
	recs []bornRec
	s    string // the ids and titles, one after the other
}

// Len is how many entities b holds (none when b is nil).
func (b *Borns) Len() int {
	if b == nil {
		return 0
	}
	return len(b.recs)
}

// Kind is the kind of the k-th entity.
func (b *Borns) Kind(k int) int { return int(b.recs[k].kind) }

// Num is the number of the k-th entity's id when it is its kind's
// PREFIX-Num (projection.IDNumber), else 0.
func (b *Borns) Num(k int) int { return int(b.recs[k].num) }

// ID is the k-th entity's id.
func (b *Borns) ID(k int) string { r := &b.recs[k]; return b.s[r.off:r.idEnd] }

// Title is the k-th entity's title.
func (b *Borns) Title(k int) string { r := &b.recs[k]; return b.s[r.tOff:r.tEnd] }

// bornRec is an entity created in (a, b], as a far read holds it: its
// id and title in the read's arena (Borns' string).
type bornRec struct {
	kind   uint8
	named  bool  // its title is its title (as far as the scan has read)
	num    int32 // its id's number (PREFIX-num of its kind), or 0
	stream int32 // 1 + the index in far.bornStreams of the stream of the record that created it, or 0
	off    int32 // its id is arena[off:idEnd]
	idEnd  int32
	tOff   int32 // its title is arena[tOff:tEnd]
	tEnd   int32
}

// noted is an entity a delta holds that was there at a, or may have
// been (far.extra).
type noted struct {
	kind       int
	id, stream string
}

// newBorn notes the entity of kind i with id (number num when it is
// PREFIX-num, else 0; id is not read when num is not 0), created by an
// event on stream ("": unknown), and returns its index in born.
func (f *far) newBorn(i, num int, id, stream string) int {
	r := bornRec{kind: uint8(i), num: int32(num), off: f.end()}
	if num > 0 {
		f.idBuf = appendID(f.idBuf[:0], i, num)
		f.arena.Write(f.idBuf)
	} else {
		f.arena.WriteString(id)
	}
	r.idEnd = f.end()
	r.tOff, r.tEnd = r.idEnd, r.idEnd
	if stream != "" {
		f.bornStreams = append(f.bornStreams, stream)
		r.stream = int32(len(f.bornStreams))
	}
	f.born = append(f.born, r)
	return len(f.born) - 1
}

// arenaAt is the arena from off to end (a string that stays as it is:
// the arena is only appended to).
func (f *far) arenaAt(off, end int32) string {
	if f.overflow {
		return ""
	}
	return f.arena.String()[off:end]
}

// end is the arena's length, as an offset (0 once it overflows).
func (f *far) end() int32 {
	n := f.arena.Len()
	if n > math.MaxInt32 {
		f.overflow = true
		return 0
	}
	return int32(n)
}

// bornStream is the stream of the event that created r, when known.
func (f *far) bornStream(r *bornRec) string {
	if r.stream > 0 {
		return f.bornStreams[r.stream-1]
	}
	return ""
}

// appendID appends the id of kind i with number n (PREFIX-n) to b.
func appendID(b []byte, i, n int) []byte {
	b = append(b, farPrefixes[i]...)
	return strconv.AppendInt(append(b, '-'), int64(n), 10)
}

// titleKeys are the fields a diff titles an entity of each kind by
// (farCreates' index), joined.
var titleKeys = [4][]string{{"title"}, {"title"}, {"message"}, {"command", "code"}}

// scan finds what the events in (a, b] wrote: from each snapshot of the
// project in (a, b] that is a delta on the one before it (in (a, b]),
// the entities it holds (what changed between the two, its body checked
// as any read checks it); from the project's records elsewhere (from a
// to the first snapshot, across a full snapshot or a delta that does not
// check, from the last snapshot to b: each at most a snapshot gap of the
// project's events), their streams and the entities their events create.
// So it reads the log only between snapshots that are not linked.
func (f *far) scan() error {
	type snap struct {
		seq uint64
		v   []byte
	}
	var snaps []snap
	prefix := snapstore.Prefix(f.project)
	// Shared: only the snapshots in (a, b] are copied (the others are
	// not read), and the scan stops past b.
	err := store.ScanShared(f.tx, snapstore.Bucket, prefix, func(k, v []byte) error {
		if len(k) != len(prefix)+8 {
			return nil
		}
		seq := binary.BigEndian.Uint64(k[len(prefix):])
		if seq > f.b {
			return store.ErrStop
		}
		if seq > f.a {
			// Only a delta on the snapshot before it is read (fromDelta);
			// the others are left to the log, not copied or read.
			var body []byte
			if len(snaps) > 0 && deltaOn(v, snaps[len(snaps)-1].seq) {
				// A delta with a names section is read by its head alone:
				// its body's pages are not copied, nor touched.
				if head := snapshot.Head(v); head != nil {
					v = head
				}
				body = bytes.Clone(v)
			}
			snaps = append(snaps, snap{seq, body})
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrStop) {
		return err
	}
	// The deltas are checked (decompressed, hashed) and walked for their
	// entities' fields on another goroutine (checkAhead), while this one
	// reads the log and notes the entities of the deltas before them.
	var bodies [][]byte
	for _, sn := range snaps {
		if sn.v != nil {
			bodies = append(bodies, sn.v)
		}
	}
	ahead := checkAhead(bodies)
	defer ahead.stop()
	first := f.a
	if len(snaps) > 0 {
		first = snaps[0].seq
	}
	if err := f.countersAt(first); err != nil {
		return err
	}
	if f.known {
		f.bornIdx.base = f.counters
	}
	prev := f.a
	grown := false
	for i, sn := range snaps {
		snaps[i].v = nil // read once
		n := len(f.born) + len(f.extra)
		var ok bool
		if sn.v != nil {
			var err error
			if ok, err = f.fromDelta(prev, sn.seq, ahead.next()); err != nil {
				return err
			}
		}
		if ok && !grown {
			// The deltas after it hold about as many entities each: born
			// is grown once, not copied again and again (an eighth more
			// than that, as the deltas vary), and the arena with it, by
			// the bytes an entity took so far (at most 64 an entity).
			grown = true
			more := (len(f.born) + len(f.extra) - n) * (len(snaps) - i - 1)
			more = min(more+more/8, maxBornHint)
			f.born = slices.Grow(f.born, more)
			if len(f.born) > 0 {
				f.arena.Grow(more * min(f.arena.Len()/len(f.born)+1, 64))
			}
		}
		if !ok {
			if err := f.fromLog(prev, sn.seq); err != nil {
				return err
			}
		}
		prev = sn.seq
	}
	return f.fromLog(prev, f.b)
}

// countersAt sets the project's counters at a, or above them: an id
// above them is of an entity created after a (one at or below them that
// was not there at a is read as one a delta holds that the state at a
// does not: finish). They are those of the status summary of the
// project's first snapshot after a, at first (counters only rise: a
// rollback of the whole project, which lowers them, makes Far decline;
// the entities created between a and first are met in the log, fromLog),
// else those of its nearest snapshot at or below a and the ids its
// events after it up to a create. Without a summary they are unknown
// (none is taken as created after a: each is read at a).
func (f *far) countersAt(first uint64) error {
	p, seq, err := f.summaryProject(first)
	if err != nil || p == nil {
		return err
	}
	c := [4]int{p.Counters.Plans, p.Counters.Tasks, p.Counters.Approvals, p.Counters.Execs}
	if seq > f.a {
		f.counters, f.known = c, true
		return nil
	}
	if p, seq, err = f.summaryProject(f.a); err != nil || p == nil {
		return err
	}
	c = [4]int{p.Counters.Plans, p.Counters.Tasks, p.Counters.Approvals, p.Counters.Execs}
	err = f.tx.ReplayProject(f.project, seq+1, func(r *store.Record) error {
		if r.Seq > f.a {
			return store.ErrStop
		}
		if i, ok := farCreates[r.Type]; ok {
			id, ok := snapshot.StringFields(r.Data, "id")
			if !ok {
				return errWhole
			}
			if n, ok := projection.IDNumber(farPrefixes[i], id[0]); ok {
				c[i] = max(c[i], n)
			}
		}
		return nil
	})
	if errors.Is(err, errWhole) {
		return nil
	}
	if err == nil {
		f.counters, f.known = c, true
	}
	return err
}

// summaryProject is the project of the status summary of the project's
// newest snapshot at or below seq, and that snapshot's seq; nil when
// there is none that reads.
func (f *far) summaryProject(seq uint64) (*projection.Project, uint64, error) {
	sum, err := snapstore.NearestSummary(f.tx, f.project, seq, f.warn)
	if err != nil || sum == nil || sum.Project == nil {
		return nil, 0, err
	}
	p := new(projection.Project)
	if ok, err := projection.DecodeEntity(sum.Project, p); err != nil || !ok || p.Name != f.project {
		return nil, 0, nil
	}
	return p, sum.Seq, nil
}

// bornAfter reports whether the entity of kind i with id was created
// after a (its number is above the counter at a).
func (f *far) bornAfter(i int, id string) bool {
	if !f.known {
		return false
	}
	n, ok := idNumber(farPrefixes[i], id) // projection.IDNumber's, without building "prefix-"
	return ok && n > f.counters[i]
}

// maxBornHint bounds how many entities scan makes room for in born
// ahead of the deltas that hold them.
const maxBornHint = 1 << 18

// deltaOn reports whether the snapshot v looks like a delta on the one
// at base by its header's format and base seq, unchecked (fromDelta
// checks it): a scan copies only those.
func deltaOn(v []byte, base uint64) bool {
	if len(v) < 94 || string(v[:8]) != snapshot.Magic {
		return false
	}
	switch binary.BigEndian.Uint16(v[8:]) {
	case snapshot.DeltaVersion, snapshot.PackedDeltaVersion, snapshot.SumDeltaVersion, snapshot.NamesDeltaVersion:
		return binary.BigEndian.Uint64(v[86:]) == base
	}
	return false
}

// fromDelta notes the entities of the snapshot at seq when it is a
// delta on the snapshot at prev that checks (d: it read ahead, its
// entities' ids and the fields they are named by and placed with,
// deltaKeys, from its body or its names section); false when it is not.
// Nothing of d is copied but what is kept.
func (f *far) fromDelta(prev, seq uint64, d *readDelta) (bool, error) {
	h := d.h
	if !d.framed || !h.IsDelta() || h.BaseSeq != prev || prev == f.a {
		return false, nil
	}
	if err := snapstore.CheckHeader(f.tx, h, f.project, seq); err != nil {
		if errors.Is(err, snapshot.ErrCorrupt) {
			return false, nil
		}
		return false, err
	}
	for i := range d.ents {
		e := &d.ents[i]
		if err := f.fromEntity(e.kind, e.fields[:len(deltaKeys[e.kind])], e.bad); err != nil {
			return false, nil // errUnread
		}
	}
	switch {
	case errors.Is(d.err, snapshot.ErrCorrupt):
		return false, nil
	case d.err != nil:
		return false, d.err
	}
	if d.project {
		f.projectTouched = true
	}
	if deleted := d.deleted; len(deleted.Plans)+len(deleted.Tasks)+len(deleted.Approvals)+len(deleted.Execs) > 0 { // a rollback's: the caller reads the states
		return false, ErrNotBetween
	}
	return true, nil
}

// deltaKeys are the fields fromEntity reads of a delta's entities, by
// kind: the id, the title a diff names it by (titleKeys), and an
// approval's or exec record's task, which places it on its task's stream
// (the project's for none).
// They are those a delta's names section holds (snapshot.NameFields), so
// that a delta with one is read from it alone.
var deltaKeys = snapshot.NameFields

// errUnread ends the read of a delta that does not read as a scan needs
// (an entity without an id, a field that is not a string): its interval
// is read from the log.
var errUnread = errors.New("history: a delta's entity does not read")

// fromEntity notes one entity of a delta (as snapshot.EachDeltaEntity
// passes it on: kind i, its fields deltaKeys[i], bad those that are not
// strings).
func (f *far) fromEntity(i int, fields [][]byte, bad uint) error {
	idb := fields[0]
	if idb == nil || bad&1 != 0 {
		return errUnread
	}
	title := fields[1 : len(titleKeys[i])+1]
	titleBad := bad&(1<<(len(titleKeys[i])+1)-2) != 0
	// An entity met before (deltas hold an active one again and again)
	// is noted already: a task created after a only takes this newer
	// encoding for its title.
	if k, ok := bornAt(&f.bornIdx, i, idb); ok {
		if i == 1 {
			f.nameFrom(k, title, titleBad)
		}
		return nil
	}
	if f.noted[i][string(idb)] {
		return nil
	}
	if num, ok := idNumber(farPrefixes[i], idb); ok && f.known && num > f.counters[i] { // bornAfter, without a string
		if i >= 2 && bad != 0 { // an approval or exec record is named, and placed, by its fields
			return errUnread
		}
		bornPut(&f.bornIdx, i, idb, len(f.born))
		k := f.newBorn(i, num, "", "")
		f.nameFrom(k, title, titleBad)
		return nil
	}
	id := string(idb)
	stream := projection.PlanStream(f.project, id)
	switch i {
	case 1:
		stream = projection.TaskStream(f.project, id)
	case 2, 3:
		task := len(fields) - 1
		switch {
		case bad&(1<<task) != 0:
			return errUnread
		case len(fields[task]) == 0:
			stream = projection.ProjectStream(f.project)
		default:
			stream = projection.TaskStream(f.project, string(fields[task]))
		}
	}
	f.note(i, id, stream, nil)
	return nil
}

// nameFrom sets the title of the entity born[k] from the fields of an
// encoding it is named by (titleKeys', joined), as name does; bad when
// one of them is not a string. A title that is the same is not copied
// again.
func (f *far) nameFrom(k int, title [][]byte, bad bool) {
	r := &f.born[k]
	switch {
	case bad:
		if r.kind == 1 {
			r.named = false
		}
		return
	case len(title) == 1:
		if !r.named || f.arenaAt(r.tOff, r.tEnd) != string(title[0]) {
			f.setTitle(r, title[0])
		}
	default:
		f.title = f.title[:0]
		for _, t := range title {
			f.title = append(f.title, t...)
		}
		if !r.named || f.arenaAt(r.tOff, r.tEnd) != string(f.title) {
			f.setTitle(r, f.title)
		}
	}
	r.named = true
}

// setTitle makes t r's title: appended to the arena (a title it had
// before is left there, unused).
func (f *far) setTitle(r *bornRec, t []byte) {
	r.tOff = f.end()
	f.arena.Write(t)
	r.tEnd = f.end()
}

// note adds the entity of kind i with id (on stream; e its encoding at
// some point in (a, b], or nil) to those that may differ.
func (f *far) note(i int, id, stream string, e []byte) {
	if _, ok := f.bornIdx.get(i, id); ok || f.bornAfter(i, id) { // created after a (its event met, or its id above a's counter)
		f.addBorn(i, id, stream, e)
		return
	}
	f.seen[stream] = true
	f.noted[i][id] = true
	f.extra = append(f.extra, noted{i, id, stream})
}

// addBorn notes an entity created after a, once, and its title from e
// (its encoding, or the payload of the event that created it: the same
// keys). A plan's title, an approval's message and an exec record's
// command and code never change after it is created (only a rollback
// sets them again, and Far declines those): the first e names it. A
// task's title changes with task.updated only: scan meets the events
// and deltas in seq order, so each e (a delta's encoding at its seq, the
// created payload) names it again, and a task.updated met in the log
// after it unnames it (fromLog): a task still named after the scan is
// named as it stands at b. The title is read from e at once (a string
// of its own), so no delta's body is held.
func (f *far) addBorn(i int, id, stream string, e []byte) {
	k, ok := f.bornIdx.get(i, id)
	if !ok {
		f.bornIdx.put(i, id, len(f.born))
		num, _ := idNumber(farPrefixes[i], id)
		k = f.newBorn(i, num, id, stream)
	}
	if e == nil || (i != 1 && f.born[k].named) {
		return
	}
	f.name(k, e)
}

// name sets the title of the entity born[k] from its encoding (or
// created payload) e; a task whose e does not read is read at b.
func (f *far) name(k int, e []byte) {
	r := &f.born[k]
	t, ok := snapshot.StringFields(e, titleKeys[r.kind]...)
	switch {
	case !ok:
		if r.kind == 1 {
			r.named = false
		}
	default:
		r.tOff = f.end()
		for _, s := range t {
			f.arena.WriteString(s)
		}
		r.tEnd, r.named = f.end(), true
	}
}

// unname forgets the title of the task with id created after a (a
// task.updated after what named it may change it): it is read at b.
func (f *far) unname(id string) {
	if k, ok := f.bornIdx.get(1, id); ok {
		f.born[k].named = false
	}
}

// fromLog notes what the project's records in (from, to] wrote.
func (f *far) fromLog(from, to uint64) error {
	if to <= from {
		return nil
	}
	err := f.tx.ReplayProject(f.project, from+1, func(r *store.Record) error {
		if r.Seq > to {
			return store.ErrStop
		}
		if r.Type == projection.TypeRollbackApplied || r.Type == projection.TypeRollbackMarked {
			return errWhole
		}
		kind, p, id, ok := projection.ParseStream(r.Stream)
		if !ok || p != f.project {
			return errWhole
		}
		if i, ok := farCreates[r.Type]; ok {
			ids, ok := snapshot.StringFields(r.Data, "id")
			if !ok || ids[0] == "" {
				return errWhole
			}
			f.addBorn(i, strings.Clone(ids[0]), strings.Clone(r.Stream), r.Data)
		}
		if r.Type == projection.TypeTaskUpdated && kind == projection.KindTask {
			f.unname(id)
		}
		switch {
		case kind == projection.KindProject:
			f.projectTouched = true
			f.seen[f.stream(r.Stream)] = true
		case kind == projection.KindPlan && f.bornAfter(0, id), kind == projection.KindTask && f.bornAfter(1, id):
			// a stream begun after a: its entities are born
		case r.Version == 1:
			// the same
		default:
			f.seen[f.stream(r.Stream)] = true
		}
		return nil
	})
	if errors.Is(err, errWhole) {
		return ErrNotBetween
	}
	return err
}

// stream returns s as a string of its own (a lent record's may not be
// kept).
func (f *far) stream(s string) string {
	if _, ok := f.seen[s]; ok {
		return s
	}
	return strings.Clone(s)
}

// fold returns the fold of stream up to b (EntityAt), once per stream.
func (f *far) fold(stream string) (*projection.Memory, error) {
	if m, ok := f.folds[stream]; ok {
		return m, nil
	}
	m, err := EntityAt(f.tx, f.project, stream, f.b, f.warn)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, ErrNotBetween
	}
	f.folds[stream] = m
	return m, nil
}

// streams reads the entities of each stream that was there at a, at a
// (EntityAt) and at b (atB), in the streams' order, and the project
// when its own stream is among those the events are on.
func (f *far) streams() error {
	if f.projectTouched {
		f.seen[projection.ProjectStream(f.project)] = true
	}
	names := make([]string, 0, len(f.seen))
	for s := range f.seen {
		names = append(names, s)
	}
	slices.Sort(names)
	for _, s := range names {
		atA, err := EntityAt(f.tx, f.project, s, f.a, f.warn)
		if err != nil {
			return err
		}
		if atA == nil {
			return ErrNotBetween
		}
		if s == projection.ProjectStream(f.project) {
			if err := f.projectAtB(atA); err != nil {
				return err
			}
		}
		if f.x.Plans, f.y.Plans, err = pairsAtB(f, 0, s, atA.Plans, f.x.Plans, f.y.Plans, planOf); err != nil {
			return err
		}
		if f.x.Tasks, f.y.Tasks, err = pairsAtB(f, 1, s, atA.Tasks, f.x.Tasks, f.y.Tasks, taskOf2); err != nil {
			return err
		}
		if f.x.Approvals, f.y.Approvals, err = pairsAtB(f, 2, s, atA.Approvals, f.x.Approvals, f.y.Approvals, approvalOf); err != nil {
			return err
		}
		if f.x.Execs, f.y.Execs, err = pairsAtB(f, 3, s, atA.Execs, f.x.Execs, f.y.Execs, execOf); err != nil {
			return err
		}
	}
	return nil
}

// projectAtB sets the project at a (from its stream's fold atA: nil
// when the stream began after a) and at b: the projections' when no
// event on its stream came after b (Meta.Seq), else its stream's fold.
func (f *far) projectAtB(atA *projection.Memory) error {
	f.x.Project = atA.Projects[f.project]
	if f.now != nil {
		p, err := f.now.Project(f.project)
		if err != nil {
			return err
		}
		if p != nil && p.Seq <= f.b {
			f.y.Project = p
			return nil
		}
	}
	m, err := f.fold(projection.ProjectStream(f.project))
	if err != nil {
		return err
	}
	f.y.Project = m.Projects[f.project]
	return nil
}

// Readers of one kind's entity in the projections and in a fold.
type kindOf[V any] struct {
	now  func(s *projstore.Tx, project, id string) (*V, error)
	mem  func(m *projection.Memory, key string) *V
	meta func(v *V) *projection.Meta
}

var (
	planOf = kindOf[projection.Plan]{(*projstore.Tx).Plan,
		func(m *projection.Memory, k string) *projection.Plan { return m.Plans[k] },
		func(v *projection.Plan) *projection.Meta { return &v.Meta }}
	taskOf2 = kindOf[projection.Task]{(*projstore.Tx).Task,
		func(m *projection.Memory, k string) *projection.Task { return m.Tasks[k] },
		func(v *projection.Task) *projection.Meta { return &v.Meta }}
	approvalOf = kindOf[projection.Approval]{(*projstore.Tx).Approval,
		func(m *projection.Memory, k string) *projection.Approval { return m.Approvals[k] },
		func(v *projection.Approval) *projection.Meta { return &v.Meta }}
	execOf = kindOf[projection.Exec]{(*projstore.Tx).Exec,
		func(m *projection.Memory, k string) *projection.Exec { return m.Execs[k] },
		func(v *projection.Exec) *projection.Meta { return &v.Meta }}
)

// pairsAtB appends the entities of m (kind i of stream's fold at a,
// keyed project/id) to x, and each one at b to y (none is gone: only a
// rollback removes an entity).
func pairsAtB[V any](f *far, i int, stream string, m map[string]*V, x, y []*V, k kindOf[V]) ([]*V, []*V, error) {
	for key, v := range m {
		w, err := atB(f, stream, key[len(f.project)+1:], k)
		if err != nil {
			return nil, nil, err
		}
		x = append(x, v)
		if w != nil {
			y = append(y, w)
		}
	}
	return x, y, nil
}

// atB reads the entity with id of stream at b: the projections' when its
// last change is at or below b, else from the stream's fold.
func atB[V any](f *far, stream, id string, k kindOf[V]) (*V, error) {
	if f.now != nil {
		v, err := k.now(f.now, f.project, id)
		if err != nil {
			return nil, err
		}
		if v != nil && k.meta(v).Seq <= f.b {
			return v, nil
		}
	}
	m, err := f.fold(stream)
	if err != nil {
		return nil, err
	}
	return k.mem(m, f.project+"/"+id), nil
}

// bornAtB names the entities created in (a, b] as they stand at b
// (bornTitle), leaves out those not there at b and returns them: their
// ids and titles the arena's one string. An arena past what its offsets
// hold (2 GiB) makes it decline.
func (f *far) bornAtB() (*Borns, error) {
	if f.end(); f.overflow {
		return nil, ErrNotBetween
	}
	n := 0
	for k := range f.born {
		r := &f.born[k]
		if !r.named {
			title, ok, err := f.bornTitle(r)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			r.tOff = f.end()
			f.arena.WriteString(title)
			r.tEnd, r.named = f.end(), true
		}
		r.stream = 0
		f.born[n] = *r
		n++
	}
	if f.end(); f.overflow {
		return nil, ErrNotBetween
	}
	b := &Borns{recs: f.born[:n], s: f.arena.String()}
	f.born, f.bornStreams, f.arena = nil, nil, strings.Builder{}
	return b, nil
}

// bornTitle is the title of the entity r at b: its title when the scan
// named it, else from the projections' encoding when its last change is
// at or below b, else from the entity read whole (atB); false when it is
// not there at b.
func (f *far) bornTitle(r *bornRec) (string, bool, error) {
	if r.named {
		return f.arenaAt(r.tOff, r.tEnd), true, nil
	}
	kind, id, stream := int(r.kind), f.arenaAt(r.off, r.idEnd), f.bornStream(r)
	if f.now != nil {
		key := []byte(f.project + "/" + id)
		v, err := f.tx.Get(farBuckets[kind], key)
		if err != nil {
			return "", false, err
		}
		if v != nil {
			e, err := projstore.EntityMsgpack(f.tx, farBuckets[kind], key, v)
			if err != nil {
				return "", false, err
			}
			if seq, ok := snapshot.UintField(e, "seq"); ok && seq <= f.b && seq > 0 {
				if t, ok := snapshot.StringFields(e, titleKeys[kind]...); ok {
					return strings.Join(t, ""), true, nil
				}
			}
		}
	}
	switch {
	case stream != "":
	case kind == 0:
		stream = projection.PlanStream(f.project, id)
	case kind == 1:
		stream = projection.TaskStream(f.project, id)
	default: // named by bornIn
		return "", false, ErrNotBetween
	}
	switch kind {
	case 0:
		v, err := atB(f, stream, id, planOf)
		if v == nil {
			return "", false, err
		}
		return v.Title, true, nil
	case 1:
		v, err := atB(f, stream, id, taskOf2)
		if v == nil {
			return "", false, err
		}
		return v.Title, true, nil
	case 2:
		v, err := atB(f, stream, id, approvalOf)
		if v == nil {
			return "", false, err
		}
		return v.Message, true, nil
	}
	v, err := atB(f, stream, id, execOf)
	if v == nil {
		return "", false, err
	}
	return v.Command + v.Code, true, nil
}

// finish reads at b the entities a delta holds that the state at a does
// not (ids out of their counter's order: an import's), as added.
func (f *far) finish() error {
	var at [4]map[string]bool
	for i := range at {
		at[i] = map[string]bool{}
	}
	for _, v := range f.x.Plans {
		at[0][v.ID] = true
	}
	for _, v := range f.x.Tasks {
		at[1][v.ID] = true
	}
	for _, v := range f.x.Approvals {
		at[2][v.ID] = true
	}
	for _, v := range f.x.Execs {
		at[3][v.ID] = true
	}
	for _, r := range f.extra {
		if at[r.kind][r.id] {
			continue
		}
		at[r.kind][r.id] = true
		f.newBorn(r.kind, 0, r.id, r.stream)
	}
	f.extra = nil
	return nil
}
