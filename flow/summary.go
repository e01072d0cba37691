package flow

import "github.com/flowctl/flowctl/flow/internal/projstore"

// IndexEntry is an entity as the status index knows it: cheap to list
// for a whole project (shell completion reads it).
type IndexEntry = projstore.IndexEntry

// TaskIndex lists project's tasks from the status index, in id order.
func (e *Engine) TaskIndex(project string) ([]IndexEntry, error) {
	return e.index(projstore.BucketTasks, project)
}

// PlanIndex lists project's plans from the status index, in id order.
func (e *Engine) PlanIndex(project string) ([]IndexEntry, error) {
	return e.index(projstore.BucketPlans, project)
}

// ApprovalIndex lists project's approvals from the status index, in id
// order.
func (e *Engine) ApprovalIndex(project string) ([]IndexEntry, error) {
	return e.index(projstore.BucketApprovals, project)
}

func (e *Engine) index(bucket, project string) ([]IndexEntry, error) {
	var out []IndexEntry
	err := e.read(func(src source) error {
		if _, err := mustProject(src, project); err != nil {
			return err
		}
		var err error
		out, err = src.Summaries(bucket, project)
		return err
	})
	projstore.SortEntries(out)
	return out, err
}

// TaskIndex lists project's tasks from the status index as r sees them,
// in id order: their ids, statuses and titles without decoding a task.
func (r *Reader) TaskIndex(project string) ([]IndexEntry, error) {
	out, err := r.src.Summaries(projstore.BucketTasks, project)
	projstore.SortEntries(out)
	return out, err
}
