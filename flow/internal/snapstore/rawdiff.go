package snapstore

import (
	"bytes"
	"errors"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// DiffAt returns, for a diff of project from seq a to seq b (a <= b), the
// project's entities at a and at b less those that are the same at both
// without a doubt: the same encoding in the nearest snapshots of both
// points and touched by no event of either tail. What is left compares as
// the whole states do (scopediff.Of of digest.Changed of them is that of
// the whole states; checkpoints, which a diff leaves out, are left out).
// The project entity is always there.
//
// When both points read from the same snapshot, or from none, the states
// are read as ListsAt reads them (the later folded on from the earlier:
// they share what did not change). Otherwise each snapshot's chain is
// resolved raw (snapshot.DecodeRaw: its entities' encodings, none
// decoded), each tail folded over a store that decodes an entity the
// first time an event reads it, and only the entities whose encodings
// differ between the two, or that a tail touched, are decoded: a diff
// of two far points costs what differs, not two whole states decoded.
// A snapshot that fails a check sends the read the ListsAt way, which
// reports it and reads around it.
func DiffAt(tx store.Tx, project string, a, b uint64, warn func(format string, args ...any)) (*projection.Scope, *projection.Scope, error) {
	sa, okA := newestAt(tx, project, a)
	sb, okB := newestAt(tx, project, b)
	if okA && okB && sa != sb {
		x, y, err := diffRaw2(tx, project, sa, a, sb, b)
		if err == nil || !errors.Is(err, errRawPath) {
			return x, y, err
		}
	}
	s, err := ListsAt(tx, project, []uint64{a, b}, warn)
	if err != nil {
		return nil, nil, err
	}
	return s[0], s[1], nil
}

// errRawPath sends DiffAt the ListsAt way.
var errRawPath = errors.New("snapstore: no raw read")

func diffRaw2(tx store.Tx, project string, sa, a, sb, b uint64) (*projection.Scope, *projection.Scope, error) {
	// the chains are read in tx, one after the other; their bodies are
	// decoded (decompressed, hashed, split) at once, on two goroutines:
	// pure work on bytes that stay valid while tx is open
	ca, err := chainAt(tx, project, sa)
	if err != nil {
		return nil, nil, err
	}
	cb, err := chainAt(tx, project, sb)
	if err != nil {
		return nil, nil, err
	}
	var rb *lazy
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		rb, errB = rawOfChain(project, cb)
	}()
	// a's tail is folded (in tx, on this goroutine) while b's chain may
	// still be decoding: b's is the later, most often the bigger state
	ra, err := rawOfChain(project, ca)
	if err == nil {
		_, err = FoldTo(tx, ra, project, sa, a)
	}
	<-done
	if err = errors.Join(err, errB); err != nil {
		if errors.Is(err, snapshot.ErrCorrupt) {
			return nil, nil, errRawPath
		}
		return nil, nil, err
	}
	if _, err := FoldTo(tx, rb, project, sb, b); err != nil {
		return nil, nil, err
	}
	x := &projection.Scope{}
	y := &projection.Scope{}
	if x.Project, err = ra.Project(project); err == nil {
		y.Project, err = rb.Project(project)
	}
	if err != nil {
		return nil, nil, err
	}
	x.Plans, y.Plans, err = differing(ra, rb, 0, ra.mem.Plans, rb.mem.Plans, (*lazy).Plan)
	if err == nil {
		x.Tasks, y.Tasks, err = differing(ra, rb, 1, ra.mem.Tasks, rb.mem.Tasks, (*lazy).Task)
	}
	if err == nil {
		x.Approvals, y.Approvals, err = differing(ra, rb, 2, ra.mem.Approvals, rb.mem.Approvals, (*lazy).Approval)
	}
	if err == nil {
		x.Execs, y.Execs, err = differing(ra, rb, 3, ra.mem.Execs, rb.mem.Execs, (*lazy).Exec)
	}
	if err != nil {
		return nil, nil, err
	}
	x.Checkpoints, y.Checkpoints = []*projection.Checkpoint{}, []*projection.Checkpoint{}
	return x, y, nil
}

// differing lists the entities of kind i at a (in ra) and at b (in rb)
// but those both hold raw (no tail touched them) with the same encoding;
// ma and mb are the decoded ones (the tails'). The lists come in no
// order.
//
// An entity a tail touched (decoded on either side) is read from both
// sides; one held raw on one side alone is named from its encoding
// (named: id and title), not decoded; one held raw on both sides with
// encodings that differ is decoded on both.
func differing[V any](ra, rb *lazy, i int, ma, mb map[string]*V, get func(*lazy, string, string) (*V, error)) ([]*V, []*V, error) {
	var x, y []*V
	both := func(id string) error {
		u, err := get(ra, ra.project, id)
		if err != nil {
			return err
		}
		v, err := get(rb, rb.project, id)
		if err != nil {
			return err
		}
		x, y = appendNonNil(x, u), appendNonNil(y, v)
		return nil
	}
	// the tails' first: an id among them is read from both sides, and
	// left out of the raw ones below
	touched := make(map[string]bool, len(ma)+len(mb))
	for _, m := range []map[string]*V{ma, mb} {
		for k := range m {
			touched[k[len(ra.project)+1:]] = true
		}
	}
	for id := range touched {
		if err := both(id); err != nil {
			return nil, nil, err
		}
	}
	// one held raw on one side alone, by no tail on the other: named
	one := func(id string, e []byte, to *[]*V) error {
		if v, ok := Named[V](i, id, e); ok {
			*to = append(*to, v)
			return nil
		}
		return both(id)
	}
	var changed []string
	for id, u := range ra.raw[i] {
		if touched[id] {
			continue
		}
		v, ok := rb.raw[i][id]
		switch {
		case !ok:
			if err := one(id, u, &x); err != nil {
				return nil, nil, err
			}
		case !bytes.Equal(u, v):
			changed = append(changed, id)
		}
	}
	for id, v := range rb.raw[i] {
		if _, ok := ra.raw[i][id]; !ok && !touched[id] {
			if err := one(id, v, &y); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, id := range changed {
		if err := both(id); err != nil {
			return nil, nil, err
		}
	}
	return projection.NonNil(x), projection.NonNil(y), nil
}

// chainAt returns the chain of project's snapshot at seq (links), or
// errRawPath when it does not check.
func chainAt(tx store.Tx, project string, seq uint64) ([]link, error) {
	v, err := tx.Get(Bucket, Key(project, seq))
	if err != nil || v == nil {
		return nil, errors.Join(err, errRawPath)
	}
	chain, err := links(tx, project, seq, v)
	if errors.Is(err, snapshot.ErrCorrupt) {
		return nil, errRawPath
	}
	return chain, err
}

// rawOfChain resolves a chain (links, each checked as Resolve checks
// it) into raw entities by id, each body checked as DecodeRaw and
// DecodeDeltaRaw check it.
func rawOfChain(scope string, chain []link) (*lazy, error) {
	_, full, err := snapshot.DecodeRaw(chain[len(chain)-1].v)
	if err != nil {
		return nil, err
	}
	l := &lazy{project: scope, mem: projection.NewMemory(), rawProject: full.Project}
	for i, list := range full.Lists()[:4] {
		l.raw[i] = make(map[string][]byte, len(*list))
		for _, e := range *list {
			id, ok := snapshot.EntityID(e, false)
			if !ok {
				return nil, &snapshot.CorruptError{Reason: "an entity without an id"}
			}
			l.raw[i][id] = e
		}
	}
	for k := len(chain) - 2; k >= 0; k-- {
		_, changed, deleted, err := snapshot.DecodeDeltaRaw(chain[k].v)
		if err != nil {
			return nil, err
		}
		if changed.Project != nil {
			l.rawProject = changed.Project
		}
		dels := [][]string{deleted.Plans, deleted.Tasks, deleted.Approvals, deleted.Execs}
		for i, list := range changed.Lists()[:4] {
			for _, id := range dels[i] {
				delete(l.raw[i], id)
			}
			for _, e := range *list {
				id, ok := snapshot.EntityID(e, false)
				if !ok {
					return nil, &snapshot.CorruptError{Reason: "an entity without an id"}
				}
				l.raw[i][id] = e
			}
		}
	}
	return l, nil
}

// links walks the chain of the snapshot v stored as scope@seq by headers,
// as Resolve does (top first).
func links(tx store.Tx, scope string, seq uint64, v []byte) ([]link, error) {
	var chain []link
	for at := seq; ; {
		h, err := snapshot.Frame(v)
		if err == nil {
			err = CheckHeader(tx, h, scope, at)
		}
		if err != nil {
			return nil, err
		}
		if n := len(chain); n > 0 && chain[n-1].h.BaseHash != h.StateHash {
			return nil, &snapshot.CorruptError{Reason: "a base that is not the state its delta was made on"}
		}
		chain = append(chain, link{h: h, v: v})
		if !h.IsDelta() {
			return chain, nil
		}
		if len(chain) > maxChainRead {
			return nil, &snapshot.CorruptError{Reason: "a chain too long"}
		}
		if v, err = tx.Get(Bucket, Key(scope, h.BaseSeq)); err != nil {
			return nil, err
		}
		if v == nil {
			return nil, &snapshot.CorruptError{Reason: "a base that is not stored"}
		}
		at = h.BaseSeq
	}
}

// lazy is a project's state held raw (its entities' encodings by id,
// kinds in the body's order but checkpoints) and decoded (mem): an
// entity is decoded and moved to mem the first time it is read, put or
// deleted. Checkpoints are not kept: a diff leaves them out, and the fold
// only puts new ones.
type lazy struct {
	project    string
	mem        *projection.Memory
	raw        [4]map[string][]byte
	rawProject []byte
}

var _ projection.Store = (*lazy)(nil)

// decode moves the entity of kind i with id from raw to mem.
func decodeRaw[V any](l *lazy, i int, id string, put func(*V) error) error {
	e, ok := l.raw[i][id]
	if !ok {
		return nil
	}
	delete(l.raw[i], id)
	v := new(V)
	if ok, err := projection.DecodeEntity(e, v); err != nil || !ok {
		return &snapshot.CorruptError{Reason: "an entity that does not decode"}
	}
	return put(v)
}

func (l *lazy) Project(name string) (*projection.Project, error) {
	if name != l.project {
		return nil, errRawPath
	}
	if p := l.mem.Projects[name]; p != nil || l.rawProject == nil {
		return p, nil
	}
	p := new(projection.Project)
	if ok, err := projection.DecodeEntity(l.rawProject, p); err != nil || !ok {
		return nil, &snapshot.CorruptError{Reason: "a project that does not decode"}
	}
	l.rawProject = nil
	return p, l.mem.PutProject(p)
}

func (l *lazy) Plan(project, id string) (*projection.Plan, error) {
	if err := decodeRaw(l, 0, id, l.mem.PutPlan); err != nil || project != l.project {
		return nil, errors.Join(err, errIf(project != l.project))
	}
	return l.mem.Plan(project, id)
}

func (l *lazy) Task(project, id string) (*projection.Task, error) {
	if err := decodeRaw(l, 1, id, l.mem.PutTask); err != nil || project != l.project {
		return nil, errors.Join(err, errIf(project != l.project))
	}
	return l.mem.Task(project, id)
}

func (l *lazy) Approval(project, id string) (*projection.Approval, error) {
	if err := decodeRaw(l, 2, id, l.mem.PutApproval); err != nil || project != l.project {
		return nil, errors.Join(err, errIf(project != l.project))
	}
	return l.mem.Approval(project, id)
}

func (l *lazy) Exec(project, id string) (*projection.Exec, error) {
	if err := decodeRaw(l, 3, id, l.mem.PutExec); err != nil || project != l.project {
		return nil, errors.Join(err, errIf(project != l.project))
	}
	return l.mem.Exec(project, id)
}

// Checkpoint: none is kept (see lazy); the fold reads none but the one a
// checkpoint event creates, which is new.
func (l *lazy) Checkpoint(project, id string) (*projection.Checkpoint, error) {
	return nil, errIf(project != l.project)
}

func errIf(b bool) error {
	if b {
		return errRawPath
	}
	return nil
}

func (l *lazy) PutProject(v *projection.Project) error {
	l.rawProject = nil
	return l.mem.PutProject(v)
}

func (l *lazy) PutPlan(v *projection.Plan) error {
	delete(l.raw[0], v.ID)
	return l.mem.PutPlan(v)
}

func (l *lazy) PutTask(v *projection.Task) error {
	delete(l.raw[1], v.ID)
	return l.mem.PutTask(v)
}

func (l *lazy) PutApproval(v *projection.Approval) error {
	delete(l.raw[2], v.ID)
	return l.mem.PutApproval(v)
}

func (l *lazy) PutExec(v *projection.Exec) error {
	delete(l.raw[3], v.ID)
	return l.mem.PutExec(v)
}

func (l *lazy) PutCheckpoint(*projection.Checkpoint) error { return nil }

// Delete removes an entity, raw or decoded.
func (l *lazy) Delete(kind, project, id string) error {
	i, ok := map[string]int{projection.KindPlan: 0, projection.KindTask: 1, projection.KindApproval: 2, projection.KindExec: 3}[kind]
	if !ok {
		return l.mem.Delete(kind, project, id)
	}
	delete(l.raw[i], id)
	return l.mem.Delete(kind, project, id)
}

func appendNonNil[V any](l []*V, v *V) []*V {
	if v == nil {
		return l
	}
	return append(l, v)
}

// Named returns an entity of kind i (plans, tasks, approvals, execs)
// holding only its id and what a diff titles it by (a plan's or task's
// title, an approval's message, an exec record's command and code), read
// from its encoding e; ok false when they do not read.
func Named[V any](i int, id string, e []byte) (*V, bool) {
	var v any
	switch i {
	case 0:
		f, ok := snapshot.StringFields(e, "title")
		if !ok {
			return nil, false
		}
		v = &projection.Plan{ID: id, Title: f[0]}
	case 1:
		f, ok := snapshot.StringFields(e, "title")
		if !ok {
			return nil, false
		}
		v = &projection.Task{ID: id, Title: f[0]}
	case 2:
		f, ok := snapshot.StringFields(e, "message")
		if !ok {
			return nil, false
		}
		v = &projection.Approval{ID: id, Message: f[0]}
	case 3:
		f, ok := snapshot.StringFields(e, "command", "code")
		if !ok {
			return nil, false
		}
		x := &projection.Exec{}
		x.ID, x.Command, x.Code = id, f[0], f[1]
		v = x
	}
	out, ok := v.(*V)
	return out, ok
}
