package flow

import "time"

// The summary index's queries read the whole state, as memSource does
// (summary.go).

func (a *atSource) summaryCounts(bucket, project string) (map[string]int, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return memSource{mem}.summaryCounts(bucket, project)
}

func (a *atSource) summaryIDs(bucket, project, status string) ([]string, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return memSource{mem}.summaryIDs(bucket, project, status)
}

func (a *atSource) summaryStatus(bucket, project, id string) (string, error) {
	mem, err := a.state()
	if err != nil {
		return "", err
	}
	return memSource{mem}.summaryStatus(bucket, project, id)
}

func (a *atSource) claimedTaskIDs(project string, now time.Time) ([]string, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return memSource{mem}.claimedTaskIDs(project, now)
}

func (a *atSource) summaries(bucket, project string) ([]IndexEntry, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return memSource{mem}.summaries(bucket, project)
}
