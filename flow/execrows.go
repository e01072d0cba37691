package flow

import "github.com/flowctl/flowctl/flow/internal/projstore"

// ExecRow is what the exec summary keeps of an exec record: the fields
// the statistics of a project's exec records read (package digest's
// Stats).
type ExecRow = projstore.ExecRow

// execRowSource is a source that keeps the exec summary (the stored
// projections, a replay in memory).
type execRowSource interface {
	ExecRows(project string) ([]ExecRow, int, error)
}

// ExecRows returns the rows of project's exec records, ordered by seq,
// then id. The stored projections read them from the exec summary, one
// scan of small values, and read the execs it has no row of (a file
// written before it, or by a flowctl without it) from their events, as
// Execs does; a view At a point reads its execs. The project is not
// checked: an unknown one has no rows.
func (r *Reader) ExecRows(project string) ([]ExecRow, error) {
	if s, ok := r.src.(execRowSource); ok {
		rows, _, err := s.ExecRows(project)
		return rows, err
	}
	xs, err := r.src.Execs(project)
	rows := make([]ExecRow, len(xs))
	for i, x := range xs {
		rows[i] = projstore.ExecRowOf(x)
	}
	return projstore.SortExecRows(rows), err
}
