package history

import (
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
)

// The summary index's queries read the whole state, as projstore.Mem does
// (projstore/summary.go).

func (a *Source) SummaryCounts(bucket, project string) (map[string]int, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return projstore.Mem{Memory: mem}.SummaryCounts(bucket, project)
}

func (a *Source) SummaryIDs(bucket, project, status string) ([]string, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return projstore.Mem{Memory: mem}.SummaryIDs(bucket, project, status)
}

func (a *Source) SummaryStatus(bucket, project, id string) (string, error) {
	mem, err := a.state()
	if err != nil {
		return "", err
	}
	return projstore.Mem{Memory: mem}.SummaryStatus(bucket, project, id)
}

func (a *Source) ClaimedTaskIDs(project string, now time.Time) ([]string, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return projstore.Mem{Memory: mem}.ClaimedTaskIDs(project, now)
}

func (a *Source) Summaries(bucket, project string) ([]projstore.IndexEntry, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return projstore.Mem{Memory: mem}.Summaries(bucket, project)
}
