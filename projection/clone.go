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

// Clone returns a deep copy of p: it shares no slice or pointer with p.
func (p *Project) Clone() *Project {
	c := *p
	c.Settings = slices.Clone(p.Settings)
	if p.Origin != nil {
		o := *p.Origin
		c.Origin = &o
	}
	return &c
}

// Clone returns a copy of p.
func (p *Plan) Clone() *Plan {
	c := *p
	return &c
}

// Clone returns a copy of a.
func (a *Approval) Clone() *Approval {
	c := *a
	return &c
}

// Clone returns a deep copy of x: it shares no slice with x.
func (x *Exec) Clone() *Exec {
	c := *x
	c.AddedVars = slices.Clone(x.AddedVars)
	c.AddedImports = slices.Clone(x.AddedImports)
	return &c
}

// Clone returns a copy of c.
func (c *Checkpoint) Clone() *Checkpoint {
	out := *c
	return &out
}
