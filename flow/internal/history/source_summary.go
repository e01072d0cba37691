package history

import (
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/projection"
)

// The summary index's queries read the whole state, as projstore.Mem does
// (projstore/summary.go), each kind's entries listed once per Source
// (summaries): a status asks several questions of the same lists.

// summaries returns the entries of project's entities in bucket, as
// projstore.Mem lists them, listing them once.
func (a *Source) summaries(bucket, project string) ([]projstore.IndexEntry, error) {
	key := bucket + "\x00" + project
	if s, ok := a.sums[key]; ok {
		return s, nil
	}
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	s := entriesOf(mem, bucket, project)
	if a.sums == nil {
		a.sums = map[string][]projstore.IndexEntry{}
	}
	a.sums[key] = s
	return s, nil
}

// tailFor returns the tail view (tail.go) when it answers for project.
func (a *Source) tailFor(project string) (*tailView, error) {
	if project != a.project {
		return nil, nil
	}
	return a.tailState()
}

func (a *Source) SummaryCounts(bucket, project string) (map[string]int, error) {
	if v, err := a.tailFor(project); err != nil || v != nil {
		if err != nil {
			return nil, err
		}
		return v.counts(bucket), nil
	}
	s, err := a.summaries(bucket, project)
	out := map[string]int{}
	for _, e := range s {
		out[e.Status]++
	}
	return out, err
}

func (a *Source) SummaryIDs(bucket, project, status string) ([]string, error) {
	v, err := a.tailFor(project)
	if err != nil {
		return nil, err
	}
	if ids, ok := v.idsOf(bucket, status); ok {
		return ids, nil
	}
	s, err := a.summaries(bucket, project)
	var out []string
	for _, e := range s {
		if e.Status == status {
			out = append(out, e.ID)
		}
	}
	return projstore.SortIDs(out), err
}

func (a *Source) SummaryStatus(bucket, project, id string) (string, error) {
	if v, err := a.tailFor(project); err != nil || v != nil && bucket == projstore.BucketTasks {
		if err != nil {
			return "", err
		}
		t, err := a.Task(project, id) // a touched one from the view, else read by id
		if err != nil || t == nil {
			return "", err
		}
		return t.Status, nil
	}
	mem, err := a.state()
	if err != nil {
		return "", err
	}
	if bucket == projstore.BucketTasks {
		return projstore.Mem{Memory: mem}.SummaryStatus(bucket, project, id)
	}
	s, err := a.summaries(bucket, project)
	for _, e := range s {
		if e.ID == id {
			return e.Status, err
		}
	}
	return "", err
}

// ClaimedTaskIDs lists the tasks of project whose claim holds at now, in
// id order, as projstore.Mem does, without sorting every task first.
func (a *Source) ClaimedTaskIDs(project string, now time.Time) ([]string, error) {
	if v, err := a.tailFor(project); err != nil || v != nil {
		if err != nil {
			return nil, err
		}
		return v.claimed(now, func(id string) (*projection.Task, error) { return a.Task(project, id) })
	}
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range mem.Tasks {
		if t.Project == project && t.Claim.Live(now) {
			out = append(out, t.ID)
		}
	}
	return projstore.SortIDs(out), nil
}

func (a *Source) Summaries(bucket, project string) ([]projstore.IndexEntry, error) {
	s, err := a.summaries(bucket, project)
	return append([]projstore.IndexEntry(nil), s...), err
}

// entriesOf lists project's entities of bucket in mem as the status index
// lists them (projstore's indexSummary: a plan's or task's status and
// title, an approval's status and message, an exec record's "ok" or
// "failed"), in no order: projstore.Mem's Summaries without its sort of
// every entity.
func entriesOf(mem *projection.Memory, bucket, project string) []projstore.IndexEntry {
	var out []projstore.IndexEntry
	switch bucket {
	case projstore.BucketPlans:
		for _, v := range mem.Plans {
			if v.Project == project {
				out = append(out, projstore.IndexEntry{ID: v.ID, Status: v.Status, Title: v.Title})
			}
		}
	case projstore.BucketTasks:
		for _, v := range mem.Tasks {
			if v.Project == project {
				out = append(out, projstore.IndexEntry{ID: v.ID, Status: v.Status, Title: v.Title})
			}
		}
	case projstore.BucketApprovals:
		for _, v := range mem.Approvals {
			if v.Project == project {
				out = append(out, projstore.IndexEntry{ID: v.ID, Status: v.Status, Title: v.Message})
			}
		}
	case projstore.BucketExecs:
		for _, v := range mem.Execs {
			if v.Project == project {
				out = append(out, projstore.IndexEntry{ID: v.ID, Status: execStatus[v.Success]})
			}
		}
	}
	return out
}

// execStatus is an exec record's status in the status index.
var execStatus = map[bool]string{true: "ok", false: "failed"}
