package flow

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// DiffChanges is a page of the changes of project from point a to point
// b (DiffPage of the states at both: the limit changes after the first
// offset, limit <= 0 all of them after offset), with the seqs the points
// resolve to and how many changes there are in all, read in one
// transaction (diffPage). It returns ErrNotFound for an unknown project
// and the errors of a point that does not resolve.
func (e *Engine) DiffChanges(project string, a, b Point, offset, limit int) (from, to uint64, changes []Change, total int, err error) {
	err = e.view(func(tx store.Tx) error {
		src := projstore.NewTx(tx)
		if _, err := mustProject(src, project); err != nil {
			return err
		}
		var err error
		if from, err = resolvePoint(tx, src, project, a); err != nil {
			return err
		}
		if to, err = resolvePoint(tx, src, project, b); err != nil {
			return err
		}
		changes, total, err = e.diffPage(tx, src, project, from, to, offset, limit)
		return err
	})
	if err != nil {
		return 0, 0, nil, 0, err
	}
	return from, to, changes, total, nil
}

// DiffEach is DiffChanges streamed: head is called once, with the seqs
// the points resolve to and how many changes there are in all, before
// each is called with every change of the page (offset, limit), in
// DiffPage's order, all in one transaction (diffEach). A far diff holds
// only the entities there at the earlier point that events between the
// points changed and the ids and titles of those created between them,
// not its changes: each is made as it is passed on. A store that can
// (trimmer) keeps the part of its file held in memory small meanwhile,
// as Verify does: a far diff reads the log between snapshots that are
// not linked (a few snapshot gaps of the project's records, spread over
// every page of the log there at 10M events) and the deltas between,
// each once, and at 10M events those pages were most of the process's
// peak resident memory.
func (e *Engine) DiffEach(project string, a, b Point, offset, limit int, head func(from, to uint64, total int) error, each func(Change) error) error {
	if t, ok := e.log.(trimmer); ok {
		defer t.KeepTrimmed()()
	}
	return e.view(func(tx store.Tx) error {
		src := projstore.NewTx(tx)
		if _, err := mustProject(src, project); err != nil {
			return err
		}
		from, err := resolvePoint(tx, src, project, a)
		if err != nil {
			return err
		}
		to, err := resolvePoint(tx, src, project, b)
		if err != nil {
			return err
		}
		return e.diffEach(tx, src, project, from, to, offset, limit, func(total int) error { return head(from, to, total) }, each)
	})
}

// diffPage is DiffPage of project's states at seqs a and b: diffEach's
// changes, gathered.
func (e *Engine) diffPage(tx store.Tx, src *projstore.Tx, project string, a, b uint64, offset, limit int) ([]Change, int, error) {
	out, total := []Change{}, 0
	err := e.diffEach(tx, src, project, a, b, offset, limit, func(n int) error {
		total = n
		return nil
	}, func(c Change) error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// diffEach passes on the page (offset, limit) of the changes of
// project's states at seqs a and b, after their number (head). When the
// points are near, only the entities the events between them touch are
// read, at both points (history.Between). Else, for a page (limit > 0)
// from or to the head, only the state at the other point is read
// (snapstore.DiffHead: the head's is the projections'), the changes of
// the entities it holds are listed whole, and the entities at the head
// alone come from the status index in id order (EachID), merged in, up
// to the end of the page and counted after it: only those on the page
// are read, for their titles. Otherwise only the entities the events
// between them changed are read, at both points (history.FarBorn: from
// the snapshot deltas between them), those created between them by id
// and title only, each an added (or removed) change merged into the
// others' by id as it is passed on; or, when Far declines (a rollback),
// both states as a diff reads them (snapstore.DiffAt), less the
// entities that encode alike. Far comes before Between when the points
// span a few snapshots (history.FarFirst), but for a page to the head.
func (e *Engine) diffEach(tx store.Tx, src *projstore.Tx, project string, a, b uint64, offset, limit int, head func(total int) error, each func(Change) error) error {
	lo, hi := a, b
	if b < a {
		lo, hi = b, a
	}
	var born *history.Borns
	var sl, sh *projection.Scope
	h, _ := tx.Head()
	farFirst, err := history.FarFirst(tx, project, lo, hi, farSnapshots)
	if err != nil {
		return err
	}
	err = history.ErrNotBetween
	if farFirst && (limit <= 0 || hi != h) {
		sl, sh, born, err = history.FarBorn(tx, project, lo, hi, e.warn)
	}
	if errors.Is(err, history.ErrNotBetween) {
		sl, sh, err = history.Between(tx, project, lo, hi, e.warn)
	}
	if errors.Is(err, history.ErrNotBetween) {
		// A page to the head reads the state at the other point and the
		// page's entities at the head alone: less than Far's every
		// changed entity when the points are far (a checkpoint long ago).
		if limit > 0 && hi == h {
			changes, total, err := diffHeadPage(tx, src, project, a, b, offset, limit, e.warn)
			if err != nil {
				return err
			}
			if err := head(total); err != nil {
				return err
			}
			for _, c := range changes {
				if err := each(c); err != nil {
					return err
				}
			}
			return nil
		}
		if !farFirst { // else Far declined already
			sl, sh, born, err = history.FarBorn(tx, project, lo, hi, e.warn)
		}
		if errors.Is(err, history.ErrNotBetween) {
			sl, sh, err = snapstore.DiffAt(tx, project, lo, hi, e.warn)
		}
	}
	if err != nil {
		return err
	}
	op := OpAdded
	if b < a {
		sl, sh, op = sh, sl, OpRemoved
	}
	known, _ := DiffPage(sameEncodedAll(sl, sh))
	if err := head(len(known) + born.Len()); err != nil {
		return err
	}
	return mergeBorn(known, born, op, pager{skip: max(offset, 0), limit: limit, each: each})
}

// farSnapshots is how many of the project's snapshots between two points
// make a diff try Far before Between (history.FarFirst): three, so that
// Far reads at least one delta.
const farSnapshots = 3

// pager passes on the changes of a page: skip changes on, at most limit
// of them (0: no limit).
type pager struct {
	skip, limit int
	n, listed   int
	each        func(Change) error
}

// add passes c on when it falls in the page; errPageFull once the page
// is full.
func (p *pager) add(c Change) error {
	if p.limit > 0 && p.listed >= p.limit {
		return errPageFull
	}
	p.n++
	if p.n <= p.skip {
		return nil
	}
	p.listed++
	return p.each(c)
}

// bornKinds are the kinds of history.Born, by its Kind.
var bornKinds = [4]string{projection.KindPlan, projection.KindTask, projection.KindApproval, projection.KindExec}

// mergeBorn passes on the changes known (in DiffPage's order) and one op
// change for each entity of born (added, or removed from b to a), by
// kind, then id, as DiffPage orders them, up to the end of the page.
// born is sorted by index, and not at all when it comes in order (as
// FarBorn's mostly do: each kind's ids in the order they were made); an
// id that is its kind's PREFIX-N is compared by its number alone, any
// other parsed once.
func mergeBorn(known []Change, born *history.Borns, op string, p pager) error {
	n := born.Len()
	nums := make([]int, n)
	var counts [4]int
	for i := range n {
		counts[born.Kind(i)]++
	}
	var byKind [4][]int32
	for k := range byKind {
		byKind[k] = make([]int32, 0, counts[k])
	}
	for i := range n {
		if nums[i] = born.Num(i); nums[i] == 0 {
			_, num, _ := strings.Cut(born.ID(i), "-")
			nums[i], _ = strconv.Atoi(num)
		}
		byKind[born.Kind(i)] = append(byKind[born.Kind(i)], int32(i))
	}
	compare := func(i, j int32) int {
		if born.Num(int(i)) > 0 && born.Num(int(j)) > 0 { // both PREFIX-N of their kind: the same prefix
			return cmp.Compare(nums[i], nums[j])
		}
		x, y := born.ID(int(i)), born.ID(int(j))
		px, _, _ := strings.Cut(x, "-")
		py, _, _ := strings.Cut(y, "-")
		return cmp.Or(strings.Compare(px, py), cmp.Compare(nums[i], nums[j]), strings.Compare(x, y))
	}
	err := func() error {
		i := 0
		for ; i < len(known) && known[i].Kind == "project"; i++ {
			if err := p.add(known[i]); err != nil {
				return err
			}
		}
		for k, kind := range bornKinds {
			list := byKind[k]
			if !slices.IsSortedFunc(list, compare) {
				slices.SortFunc(list, compare)
			}
			for n, j := range list {
				id := born.ID(int(j))
				if n > 0 && born.ID(int(list[n-1])) == id { // once an id
					continue
				}
				for ; i < len(known) && known[i].Kind == kind && projection.CompareIDs(known[i].ID, id) < 0; i++ {
					if err := p.add(known[i]); err != nil {
						return err
					}
				}
				if err := p.add(Change{Kind: kind, ID: id, Op: op, Title: born.Title(int(j))}); err != nil {
					return err
				}
			}
			for ; i < len(known) && known[i].Kind == kind; i++ {
				if err := p.add(known[i]); err != nil {
					return err
				}
			}
		}
		for ; i < len(known); i++ {
			if err := p.add(known[i]); err != nil {
				return err
			}
		}
		return nil
	}()
	if errors.Is(err, errPageFull) {
		return nil
	}
	return err
}

// diffHeadPage is diffPage's page from or to the head (the later of a
// and b), reading only the state at the earlier point.
func diffHeadPage(tx store.Tx, src *projstore.Tx, project string, a, b uint64, offset, limit int, warn func(string, ...any)) ([]Change, int, error) {
	d, err := snapstore.DiffHead(tx, project, min(a, b), warn)
	if err != nil {
		return nil, 0, err
	}
	x, y, op := d.A, d.Head, OpAdded
	if b < a {
		x, y, op = d.Head, d.A, OpRemoved
	}
	known, _ := DiffPage(sameEncodedAll(x, y))
	return mergeHeadAlone(src, project, d, known, op, offset, limit)
}

// sameEncodedAll is sameEncoded with DiffPage's offset and limit for
// the whole list.
func sameEncodedAll(a, b *projection.Scope) (*projection.Scope, *projection.Scope, int, int) {
	x, y := sameEncoded(a, b)
	return x, y, 0, 0
}

// headKinds are the kinds DiffHead lists, in its order (HeadDiff.AtA's).
var headKinds = [4]struct{ kind, bucket, prefix string }{
	{projection.KindPlan, projstore.BucketPlans, projection.PrefixPlan},
	{projection.KindTask, projstore.BucketTasks, projection.PrefixTask},
	{projection.KindApproval, projstore.BucketApprovals, projection.PrefixApproval},
	{projection.KindExec, projstore.BucketExecs, projection.PrefixExec},
}

// errPageFull ends a walk of the ids at the head alone.
var errPageFull = errors.New("the page is full")

// mergeHeadAlone is the page (offset, limit) of the changes known (of
// the entities at the point DiffHead read, in scopediff's order) and of
// the entities at the head alone, each an op change (added to the head,
// removed from it), in the same order, with how many there are in all.
func mergeHeadAlone(src *projstore.Tx, project string, d *snapstore.HeadDiff, known []Change, op string, offset, limit int) ([]Change, int, error) {
	p, err := mustProject(src, project)
	if err != nil {
		return nil, 0, err
	}
	last := [4]int{p.Counters.Plans, p.Counters.Tasks, p.Counters.Approvals, p.Counters.Execs}
	l := &limiter{skip: max(offset, 0), limit: limit, out: []Change{}}
	i := 0
	for i < len(known) && known[i].Kind == "project" {
		l.add(known[i : i+1])
		i++
	}
	for k, hk := range headKinds {
		j := i
		for j < len(known) && known[j].Kind == hk.kind {
			j++
		}
		mine := known[i:j]
		i = j
		counts, err := src.SummaryCounts(hk.bucket, project)
		if err != nil {
			return nil, 0, err
		}
		alone := -d.Kept[k]
		for _, n := range counts {
			alone += n
		}
		err = src.EachID(hk.bucket, project, "", hk.prefix, last[k], func(id string) error {
			if d.AtA[k][id] {
				return nil
			}
			for len(mine) > 0 && projection.CompareIDs(mine[0].ID, id) < 0 {
				l.add(mine[:1])
				mine = mine[1:]
			}
			if l.full() {
				return errPageFull
			}
			alone--
			if l.outside() {
				l.total++
				return nil
			}
			c := Change{Kind: hk.kind, ID: id, Op: op}
			if err := titleAtHead(src, project, &c); err != nil {
				return err
			}
			l.add([]Change{c})
			return nil
		})
		if err != nil && !errors.Is(err, errPageFull) {
			return nil, 0, err
		}
		l.total += max(alone, 0)
		l.add(mine)
	}
	l.add(known[i:])
	return l.out, l.total, nil
}

// titleAtHead sets c's title (scopediff's: a plan's or task's title, an
// approval's message, an exec record's command and code) from the
// projections, which hold the entity at the head.
func titleAtHead(src projection.Store, project string, c *Change) error {
	var err error
	switch c.Kind {
	case projection.KindPlan:
		var v *projection.Plan
		if v, err = src.Plan(project, c.ID); v != nil {
			c.Title = v.Title
		}
	case projection.KindTask:
		var v *projection.Task
		if v, err = src.Task(project, c.ID); v != nil {
			c.Title = v.Title
		}
	case projection.KindApproval:
		var v *projection.Approval
		if v, err = src.Approval(project, c.ID); v != nil {
			c.Title = v.Message
		}
	case projection.KindExec:
		var v *projection.Exec
		if v, err = src.Exec(project, c.ID); v != nil {
			c.Title = v.Command + v.Code
		}
	}
	return err
}
