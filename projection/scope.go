package projection

// Scope is one project's whole projected state: what a snapshot holds.
// Every slice is in id order, so its msgpack encoding is deterministic.
//
//codec:decode,append
type Scope struct {
	Project     *Project      `msgpack:"project"`
	Plans       []*Plan       `msgpack:"plans"`
	Tasks       []*Task       `msgpack:"tasks"`
	Approvals   []*Approval   `msgpack:"approvals"`
	Execs       []*Exec       `msgpack:"execs"`
	Checkpoints []*Checkpoint `msgpack:"checkpoints"`
}

// Scope returns the state of one project held in m (Project is nil when
// the project does not exist in m).
func (m *Memory) Scope(project string) *Scope {
	return &Scope{
		Project:     m.Projects[project],
		Plans:       NonNil(m.PlansOf(project)),
		Tasks:       NonNil(m.TasksOf(project)),
		Approvals:   NonNil(m.ApprovalsOf(project)),
		Execs:       NonNil(m.ExecsOf(project)),
		Checkpoints: NonNil(m.CheckpointsOf(project)),
	}
}

// NonNil returns s, or an empty slice for nil: lists encode as [] and
// equal states encode alike.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Load puts every entity of s into m.
func (m *Memory) Load(s *Scope) {
	if s.Project != nil {
		m.PutProject(s.Project)
	}
	for _, v := range s.Plans {
		m.PutPlan(v)
	}
	for _, v := range s.Tasks {
		m.PutTask(v)
	}
	for _, v := range s.Approvals {
		m.PutApproval(v)
	}
	for _, v := range s.Execs {
		m.PutExec(v)
	}
	for _, v := range s.Checkpoints {
		m.PutCheckpoint(v)
	}
}

// PutAll puts every entity of m into dst.
func (m *Memory) PutAll(dst Store) error {
	for _, put := range []func() error{
		func() error { return putEach(m.Projects, dst.PutProject) },
		func() error { return putEach(m.Plans, dst.PutPlan) },
		func() error { return putEach(m.Tasks, dst.PutTask) },
		func() error { return putEach(m.Approvals, dst.PutApproval) },
		func() error { return putEach(m.Execs, dst.PutExec) },
		func() error { return putEach(m.Checkpoints, dst.PutCheckpoint) },
	} {
		if err := put(); err != nil {
			return err
		}
	}
	return nil
}

func putEach[V any](m map[string]*V, put func(*V) error) error {
	for _, v := range m {
		if err := put(v); err != nil {
			return err
		}
	}
	return nil
}
