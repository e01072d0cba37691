package digest

import (
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/scopediff"
)

// DiffResult is the answer of Diff.
type DiffResult struct {
	Project string        `json:"project"`
	From    uint64        `json:"from"`
	To      uint64        `json:"to"`
	Changes []flow.Change `json:"changes"`
}

// Diff reports what changed in project between points a and b, entity by
// entity (flow.Change), reading both states in one flow.Engine.Scopes.
// It returns flow.ErrNotFound for an unknown project and the errors of a
// point that does not resolve.
func Diff(e *flow.Engine, project string, a, b flow.Point) (*DiffResult, error) {
	s, err := e.Scopes(project, a, b)
	if err != nil {
		return nil, err
	}
	return &DiffResult{Project: project, From: s[0].Seq, To: s[1].Seq, Changes: scopediff.Of(s[0].Scope, s[1].Scope)}, nil
}
