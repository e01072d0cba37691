package projection

// Scope is one project's whole projected state: what a snapshot holds.
// Every slice is in id order, so its msgpack encoding is deterministic.
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
		Plans:       nonNilList(m.PlansOf(project)),
		Tasks:       nonNilList(m.TasksOf(project)),
		Approvals:   nonNilList(m.ApprovalsOf(project)),
		Execs:       nonNilList(m.ExecsOf(project)),
		Checkpoints: nonNilList(m.CheckpointsOf(project)),
	}
}

func nonNilList[T any](s []T) []T {
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
