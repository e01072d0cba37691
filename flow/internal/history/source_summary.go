package history

import (
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
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
	s, err := projstore.Mem{Memory: mem}.Summaries(bucket, project)
	if err != nil {
		return nil, err
	}
	if a.sums == nil {
		a.sums = map[string][]projstore.IndexEntry{}
	}
	a.sums[key] = s
	return s, nil
}

func (a *Source) SummaryCounts(bucket, project string) (map[string]int, error) {
	s, err := a.summaries(bucket, project)
	out := map[string]int{}
	for _, e := range s {
		out[e.Status]++
	}
	return out, err
}

func (a *Source) SummaryIDs(bucket, project, status string) ([]string, error) {
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
