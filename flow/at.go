package flow

import (
	"errors"
	"fmt"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// at is the point a read-only view answers queries at.
type at struct {
	project string
	point   Point
}

// At returns a read-only view of the engine that answers every query
// about project as it stood at point p. A read of one entity by id (a
// task, its context and steps, a plan, an approval, an exec record, a
// checkpoint) folds only that entity's own stream and the rollbacks of
// the project up to the point (see history.Source); anything else reads the
// project's whole state there: the nearest snapshot at or below the
// point plus the events in between. Writes through it fail.
func (e *Engine) At(project string, p Point) *Engine {
	v := *e
	v.at = &at{project: project, point: p}
	return &v
}

// atState returns the source the view answers from, and the seq it is at.
func (e *Engine) atState(tx store.Tx) (source, uint64, error) {
	seq, err := resolvePoint(tx, projstore.NewTx(tx), e.at.project, e.at.point)
	if err != nil {
		return nil, 0, err
	}
	return history.NewSource(tx, e.at.project, seq, e.warn), seq, nil
}

// errAtWrite refuses a write through a point-in-time view.
func (e *Engine) errAtWrite() error {
	return fmt.Errorf("%w: a view at %s is read-only", ErrInvalid, e.at.point)
}

// Begun returns ErrNotFound when project did not exist yet at point p:
// its first event is after it, so a view there holds nothing of it. A
// point that does not resolve is the error a view would give (ErrInvalid
// past the head, ErrNotFound for an unknown checkpoint); a project with
// no event at all is left to the reads to report.
func (e *Engine) Begun(project string, p Point) error {
	return e.view(func(tx store.Tx) error {
		seq, err := resolvePoint(tx, projstore.NewTx(tx), project, p)
		if err != nil {
			return err
		}
		first, err := firstSeq(tx, projection.ProjectStream(project))
		if err != nil || first <= seq {
			return err
		}
		return fmt.Errorf("%w: project %s did not exist yet at seq %d: its first event is seq %d", ErrNotFound, project, seq, first)
	})
}

// checkPlacement is history.CheckPlacement with its refusal an ErrInvalid
// error: an event is not on the stream the engine's commands put it on.
func checkPlacement(src projection.Store, r *store.Record) error {
	err := history.CheckPlacement(src, r)
	if pe := (*history.PlacementError)(nil); errors.As(err, &pe) {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return err
}
