package flow

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// commandMachine drives random command sequences through the engine,
// with two actors, and checks after every command that the inline
// projections equal a full replay of the log (Verify), that a refused
// command appended nothing, and that dependencies stay acyclic.
type commandMachine struct {
	t     *rapid.T
	path  string
	actor string
	e     *Engine
	clock time.Time
	tasks int
	plans int
}

func (m *commandMachine) open(actor string) {
	if m.e != nil && m.actor == actor {
		return
	}
	if m.e != nil {
		m.e.Close()
	}
	e, err := Open(m.path, Options{Create: true, NoSync: true, Actor: actor, Session: "s-" + actor, Now: m.now})
	if err != nil {
		m.t.Fatal(err)
	}
	m.e, m.actor = e, actor
}

func (m *commandMachine) now() time.Time {
	m.clock = m.clock.Add(time.Minute)
	return m.clock
}

func (m *commandMachine) head() uint64 {
	seq, _, err := storeHead(m.e.log)
	if err != nil {
		m.t.Fatal(err)
	}
	return seq
}

// do runs one command as a random actor and checks what it left behind.
func (m *commandMachine) do(t *rapid.T, run func() error) {
	m.open(rapid.SampledFrom([]string{"ann", "bob"}).Draw(t, "actor"))
	before := m.head()
	err := run()
	if err != nil {
		if c := ErrorCode(err); c == CodeInternal || c == CodeCorrupt {
			t.Fatalf("command failed with %s: %v", c, err)
		}
		if after := m.head(); after != before {
			t.Fatalf("refused command (%v) moved the head from %d to %d", err, before, after)
		}
	}
}

func (m *commandMachine) taskID(t *rapid.T, label string) string {
	return projection.ShortID("T", rapid.IntRange(1, max(m.tasks, 1)+1).Draw(t, label))
}

func (m *commandMachine) AddTask(t *rapid.T) {
	deps := rapid.SliceOfN(rapid.IntRange(1, max(m.tasks, 1)), 0, 3).Draw(t, "deps")
	var ids []string
	for _, d := range deps {
		ids = append(ids, projection.ShortID("T", d))
	}
	plan := ""
	if m.plans > 0 && rapid.Bool().Draw(t, "inPlan") {
		plan = projection.ShortID("P", rapid.IntRange(1, m.plans).Draw(t, "plan"))
	}
	m.do(t, func() error {
		_, err := m.e.AddTask(NewTask{Project: "p", Title: "t", Deps: ids, Plan: plan,
			Write: Write{Key: rapid.SampledFrom([]string{"", "", "k1", "k2"}).Draw(t, "key")}})
		if err == nil {
			p, _ := m.e.Project("p")
			m.tasks = p.Counters.Tasks
		}
		return err
	})
}

func (m *commandMachine) AddPlan(t *rapid.T) {
	m.do(t, func() error {
		_, err := m.e.AddPlan(NewPlan{Project: "p", Title: "plan"})
		if err == nil {
			m.plans++
		}
		return err
	})
}

func (m *commandMachine) Move(t *rapid.T) {
	id := m.taskID(t, "task")
	to := rapid.SampledFrom([]string{"todo", "doing", "done", "blocked", "cancelled"}).Draw(t, "to")
	force := rapid.Bool().Draw(t, "force")
	version := rapid.Uint64Range(0, 4).Draw(t, "ifVersion")
	m.do(t, func() error {
		_, err := m.e.MoveTask(Move{Project: "p", ID: id, To: to, Force: force, Write: Write{IfVersion: version}})
		return err
	})
}

func (m *commandMachine) Claim(t *rapid.T) {
	id := m.taskID(t, "task")
	op := rapid.SampledFrom([]string{"claim", "heartbeat", "release"}).Draw(t, "op")
	m.do(t, func() error {
		in := Claim{Project: "p", ID: id, Lease: time.Duration(rapid.IntRange(1, 5).Draw(t, "minutes")) * time.Minute}
		var err error
		switch op {
		case "claim":
			_, err = m.e.ClaimTask(in)
		case "heartbeat":
			_, err = m.e.Heartbeat(in)
		default:
			_, err = m.e.ReleaseTask(in)
		}
		return err
	})
}

func (m *commandMachine) Dep(t *rapid.T) {
	id, dep := m.taskID(t, "task"), m.taskID(t, "dep")
	add := rapid.Bool().Draw(t, "add")
	m.do(t, func() error {
		in := DepChange{Project: "p", ID: id, Dep: dep}
		var err error
		if add {
			_, err = m.e.AddDep(in)
		} else {
			_, err = m.e.RemoveDep(in)
		}
		return err
	})
}

func (m *commandMachine) Edit(t *rapid.T) {
	id := m.taskID(t, "task")
	title := rapid.SampledFrom([]string{"t", "renamed", ""}).Draw(t, "title")
	tags := rapid.SliceOfN(rapid.SampledFrom([]string{"a", "b"}), 0, 2).Draw(t, "tags")
	m.do(t, func() error {
		_, err := m.e.EditTask(TaskEdit{Project: "p", ID: id, Title: &title, Tags: &tags})
		return err
	})
}

// Check runs after every action.
func (m *commandMachine) Check(t *rapid.T) {
	if _, err := m.e.Verify(); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	tasks, err := m.e.Tasks("p", TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if path, _ := depPathIn(tasks, task.ID); path != nil {
			t.Fatalf("dependency cycle through %s: %v", task.ID, path)
		}
		if !slices.IsSortedFunc(task.Deps, projection.CompareTaskIDs) {
			t.Fatalf("%s deps not sorted: %v", task.ID, task.Deps)
		}
	}
}

// depPathIn finds a cycle back to id through the deps of tasks.
func depPathIn(tasks []*projection.Task, id string) ([]string, error) {
	byID := map[string]*projection.Task{}
	for _, t := range tasks {
		byID[t.ID] = t
	}
	var walk func(cur string, seen map[string]bool) []string
	walk = func(cur string, seen map[string]bool) []string {
		for _, d := range byID[cur].Deps {
			if d == id {
				return []string{cur, d}
			}
			if !seen[d] {
				seen[d] = true
				if p := walk(d, seen); p != nil {
					return append([]string{cur}, p...)
				}
			}
		}
		return nil
	}
	if byID[id] == nil {
		return nil, errors.New("no such task")
	}
	return walk(id, map[string]bool{}), nil
}

func TestProperty_CommandsKeepProjectionsEqualToReplay(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := &commandMachine{t: rt, path: filepath.Join(t.TempDir(), "flow.db"), clock: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		m.open("ann")
		defer func() { m.e.Close() }()
		if _, err := m.e.CreateProject(NewProject{Name: "p"}); err != nil {
			rt.Fatal(err)
		}
		rt.Repeat(rapid.StateMachineActions(m))
		// A rebuild from the log reproduces the same projections.
		if _, err := m.e.Rebuild(); err != nil {
			rt.Fatal(err)
		}
		m.Check(rt)
	})
}
