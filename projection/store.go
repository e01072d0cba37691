package projection

import (
	"slices"
	"strings"
)

// Store is what the fold reads and writes. A getter returns the current
// entity (nil when there is none) for the fold to change and put back;
// the fold always puts what it changed.
type Store interface {
	Project(name string) (*Project, error)
	Plan(project, id string) (*Plan, error)
	Task(project, id string) (*Task, error)
	Approval(project, id string) (*Approval, error)
	Exec(project, id string) (*Exec, error)
	Checkpoint(project, id string) (*Checkpoint, error)
	PutProject(*Project) error
	PutPlan(*Plan) error
	PutTask(*Task) error
	PutApproval(*Approval) error
	PutExec(*Exec) error
	PutCheckpoint(*Checkpoint) error
	// Delete removes an entity of kind (plan, task, approval, exec).
	Delete(kind, project, id string) error
}

// Entity kinds a rollback can remove.
const (
	KindApproval = "approval"
	KindExec     = "exec"
)

// Memory is a Store in memory: the target of a full replay, and the state
// that snapshots encode.
type Memory struct {
	Projects    map[string]*Project
	Plans       map[string]*Plan       // key project + "/" + id
	Tasks       map[string]*Task       // key project + "/" + id
	Approvals   map[string]*Approval   // key project + "/" + id
	Execs       map[string]*Exec       // key project + "/" + id
	Checkpoints map[string]*Checkpoint // key project + "/" + id

	// The fold's cache of strings (see fold.payload) and its merges'
	// buffers and memory of recent contexts; nil until the first fold.
	seen  *stringCache
	canon *canon
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{
		Projects:    map[string]*Project{},
		Plans:       map[string]*Plan{},
		Tasks:       map[string]*Task{},
		Approvals:   map[string]*Approval{},
		Execs:       map[string]*Exec{},
		Checkpoints: map[string]*Checkpoint{},
	}
}

// NewMemorySized returns an empty in-memory store with room for the
// entities of projects projects that have given out the ids n counts (a
// project's Counters: at least as many as it has entities), so that a
// replay whose sizes are known ahead does not grow its maps as it goes.
// It holds the same as NewMemory's; only its maps' first sizes differ.
func NewMemorySized(projects int, n Counters) *Memory {
	return &Memory{
		Projects:    make(map[string]*Project, projects),
		Plans:       make(map[string]*Plan, n.Plans),
		Tasks:       make(map[string]*Task, n.Tasks),
		Approvals:   make(map[string]*Approval, n.Approvals),
		Execs:       make(map[string]*Exec, n.Execs),
		Checkpoints: make(map[string]*Checkpoint, n.Checkpoints),
	}
}

// Key is the key of an entity within its kind: "project/id".
func Key(project, id string) string { return project + "/" + id }

// keyBuf holds a key built for a lookup, on the stack for most keys:
// m[string(b)] does not allocate, m[Key(p, id)] does.
type keyBuf [64]byte

func (b *keyBuf) key(project, id string) []byte {
	k := append(b[:0], project...)
	k = append(k, '/')
	return append(k, id...)
}

// get looks up the entity of project and id in m.
func get[V any](m map[string]*V, project, id string) *V {
	var b keyBuf
	return m[string(b.key(project, id))]
}

// put stores v as the entity of project and id in m. Putting back the
// entity that is there already (as the fold does after every change)
// costs a lookup and no new key.
func put[V any](m map[string]*V, project, id string, v *V) {
	var b keyBuf
	k := b.key(project, id)
	if old, ok := m[string(k)]; ok && old == v {
		return
	}
	m[string(k)] = v
}

func (m *Memory) Project(name string) (*Project, error)        { return m.Projects[name], nil }
func (m *Memory) Plan(p, id string) (*Plan, error)             { return get(m.Plans, p, id), nil }
func (m *Memory) Task(p, id string) (*Task, error)             { return get(m.Tasks, p, id), nil }
func (m *Memory) Approval(p, id string) (*Approval, error)     { return get(m.Approvals, p, id), nil }
func (m *Memory) Exec(p, id string) (*Exec, error)             { return get(m.Execs, p, id), nil }
func (m *Memory) Checkpoint(p, id string) (*Checkpoint, error) { return get(m.Checkpoints, p, id), nil }

func (m *Memory) PutProject(v *Project) error {
	if m.Projects[v.Name] != v { // putting back the project there: a lookup, no assignment
		m.Projects[v.Name] = v
	}
	return nil
}

func (m *Memory) PutPlan(v *Plan) error         { put(m.Plans, v.Project, v.ID, v); return nil }
func (m *Memory) PutTask(v *Task) error         { put(m.Tasks, v.Project, v.ID, v); return nil }
func (m *Memory) PutApproval(v *Approval) error { put(m.Approvals, v.Project, v.ID, v); return nil }
func (m *Memory) PutExec(v *Exec) error         { put(m.Execs, v.Project, v.ID, v); return nil }
func (m *Memory) PutCheckpoint(v *Checkpoint) error {
	put(m.Checkpoints, v.Project, v.ID, v)
	return nil
}

// addTask, addApproval and addExec store an entity that is not in m:
// one assignment, without first looking for the one it replaces. Only
// the fold calls them, after Apply gave m its string cache: the key is
// made in the cache's arena.
func (m *Memory) addTask(v *Task)         { m.Tasks[m.seen.arena.key(v.Project, v.ID)] = v }
func (m *Memory) addApproval(v *Approval) { m.Approvals[m.seen.arena.key(v.Project, v.ID)] = v }
func (m *Memory) addExec(v *Exec)         { m.Execs[m.seen.arena.key(v.Project, v.ID)] = v }

// Delete removes an entity of kind.
func (m *Memory) Delete(kind, project, id string) error {
	k := Key(project, id)
	switch kind {
	case KindPlan:
		delete(m.Plans, k)
	case KindTask:
		delete(m.Tasks, k)
	case KindApproval:
		delete(m.Approvals, k)
	case KindExec:
		delete(m.Execs, k)
	}
	return nil
}

// sortedValues returns the values of m whose key starts with prefix,
// ordered by key number (T-2 before T-10).
func sortedValues[V any](m map[string]*V, project string) []*V {
	type kv struct {
		id string
		v  *V
	}
	var all []kv
	for k, v := range m {
		if id, ok := strings.CutPrefix(k, project+"/"); ok {
			all = append(all, kv{id, v})
		}
	}
	slices.SortFunc(all, func(a, b kv) int { return CompareIDs(a.id, b.id) })
	out := make([]*V, len(all))
	for i, x := range all {
		out[i] = x.v
	}
	return out
}

// TasksOf returns the project's tasks in id order.
func (m *Memory) TasksOf(project string) []*Task { return sortedValues(m.Tasks, project) }

// PlansOf returns the project's plans in id order.
func (m *Memory) PlansOf(project string) []*Plan { return sortedValues(m.Plans, project) }

// ApprovalsOf returns the project's approvals in id order.
func (m *Memory) ApprovalsOf(project string) []*Approval {
	return sortedValues(m.Approvals, project)
}

// ExecsOf returns the project's exec records in id order.
func (m *Memory) ExecsOf(project string) []*Exec { return sortedValues(m.Execs, project) }

// CheckpointsOf returns the project's checkpoints in id order.
func (m *Memory) CheckpointsOf(project string) []*Checkpoint {
	return sortedValues(m.Checkpoints, project)
}
