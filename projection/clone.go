package projection

import "slices"

// Clone returns a deep copy of t: it shares no slice or pointer with t.
func (t *Task) Clone() *Task {
	c := *t
	c.Tags = slices.Clone(t.Tags)
	c.Deps = slices.Clone(t.Deps)
	c.Steps = slices.Clone(t.Steps)
	c.PendingApprovals = slices.Clone(t.PendingApprovals)
	if t.Claim != nil {
		claim := *t.Claim
		c.Claim = &claim
	}
	return &c
}

// Clone returns a copy of p.
func (p *Project) Clone() *Project {
	c := *p
	return &c
}
