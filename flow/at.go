package flow

import (
	"fmt"

	"github.com/flowctl/flowctl/eventlog"
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
// the project up to the point (see atSource); anything else reads the
// project's whole state there: the nearest snapshot at or below the
// point plus the events in between. Writes through it fail.
func (e *Engine) At(project string, p Point) *Engine {
	v := *e
	v.at = &at{project: project, point: p}
	return &v
}

// atState returns the source the view answers from, and the seq it is at.
func (e *Engine) atState(tx *eventlog.Tx) (source, uint64, error) {
	seq, err := resolvePoint(tx, newTxStore(tx), e.at.project, e.at.point)
	if err != nil {
		return nil, 0, err
	}
	return newAtSource(e, tx, e.at.project, seq), seq, nil
}

// errAtWrite refuses a write through a point-in-time view.
func (e *Engine) errAtWrite() error {
	return fmt.Errorf("%w: a view at %s is read-only", ErrInvalid, e.at.point)
}
