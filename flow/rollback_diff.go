package flow

import (
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// DiffChanges is a page of the changes of project from point a to point
// b (DiffPage of the states at both: the limit changes after the first
// offset, limit <= 0 all of them after offset), with the seqs the points
// resolve to and how many changes there are in all, read in one
// transaction. For a page (limit > 0) whose later point is the head, its state is the
// inline projection's and only the state at the earlier one is read
// (snapstore.DiffHead): an entity at the head alone is counted, and read
// (for its title) only when the page lists it. Otherwise both states are
// read as DiffScopes reads them. It returns ErrNotFound for an unknown
// project and the errors of a point that does not resolve.
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
		x, y, bare, err := e.diffStates(tx, project, from, to, limit > 0)
		if err != nil {
			return err
		}
		changes, total = DiffPage(x, y, offset, limit)
		return nameBare(src, project, changes, bare)
	})
	if err != nil {
		return 0, 0, nil, 0, err
	}
	return from, to, changes, total, nil
}

// diffStates returns project's states at seqs a and b less the
// entities that are the same pointer or encode alike in both (and their
// checkpoints): what DiffPage needs. For a page (a list of all the
// changes names every entity at the head alone, which snapshots name
// cheaper) when the later of the two is the head, the state there holds
// the entities at the head alone bare (ids in bare, by
// snapstore.KindIndex; nameBare names a page's).
func (e *Engine) diffStates(tx store.Tx, project string, a, b uint64, page bool) (x, y *projection.Scope, bare [4]map[string]bool, err error) {
	lo, hi := a, b
	if b < a {
		lo, hi = b, a
	}
	var sl, sh *projection.Scope
	if head, _ := tx.Head(); page && hi == head {
		d, err := snapstore.DiffHead(tx, project, lo, e.warn)
		if err != nil {
			return nil, nil, bare, err
		}
		sl, sh, bare = d.A, d.Head, d.Bare
	} else {
		if sl, sh, err = snapstore.DiffAt(tx, project, lo, hi, e.warn); err != nil {
			return nil, nil, bare, err
		}
	}
	if b < a {
		sl, sh = sh, sl
	}
	x, y = sameEncoded(sl, sh)
	return x, y, bare, nil
}

// nameBare titles the changes of entities held bare (see diffStates)
// from the projections, which hold them at the head.
func nameBare(src projection.Store, project string, changes []Change, bare [4]map[string]bool) error {
	for i, c := range changes {
		k, ok := snapstore.KindIndex(c.Kind)
		if !ok || !bare[k][c.ID] {
			continue
		}
		var err error
		switch k {
		case 0:
			var v *projection.Plan
			if v, err = src.Plan(project, c.ID); v != nil {
				changes[i].Title = v.Title
			}
		case 1:
			var v *projection.Task
			if v, err = src.Task(project, c.ID); v != nil {
				changes[i].Title = v.Title
			}
		case 2:
			var v *projection.Approval
			if v, err = src.Approval(project, c.ID); v != nil {
				changes[i].Title = v.Message
			}
		case 3:
			var v *projection.Exec
			if v, err = src.Exec(project, c.ID); v != nil {
				changes[i].Title = v.Command + v.Code
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
