package workload

import (
	"fmt"
	"math/rand/v2"
)

// DefaultCheckpointEvery is how many events of a project pass between its
// checkpoints unless Options say.
const DefaultCheckpointEvery = 5000

// Options shape a workload.
type Options struct {
	Projects int    // how many projects take turns; at least 1
	Seed     uint64 // the random choices: same seed, same Ops
	// CheckpointEvery is how many events of a project pass between its
	// checkpoints: 0 means DefaultCheckpointEvery, a negative value none.
	CheckpointEvery int
}

// Generator hands out the Ops of a workload in order. It is not safe for
// concurrent use.
type Generator struct {
	rng        *rand.Rand
	projects   []*project
	checkpoint int // events of a project between checkpoints; 0: none
	created    int // projects whose CreateProject was handed out
	ops        uint64
}

// project is one project's place in its work.
type project struct {
	name                     string
	tasks, plans             int
	approvals, execs, checks int // ids handed out so far
	sinceCheckpoint          int
	todo                     []Op // the rest of the current task's commands
	buf                      []Op // todo's array, reused task after task
}

// New returns the generator of the workload of o. It panics when
// o.Projects is below 1.
func New(o Options) *Generator {
	if o.Projects < 1 {
		panic(fmt.Sprintf("workload: %d projects, want at least 1", o.Projects))
	}
	g := &Generator{rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)), checkpoint: o.CheckpointEvery}
	switch {
	case g.checkpoint == 0:
		g.checkpoint = DefaultCheckpointEvery
	case g.checkpoint < 0:
		g.checkpoint = 0
	}
	for i := range o.Projects {
		g.projects = append(g.projects, &project{name: ProjectName(i)})
	}
	return g
}

// Projects returns how many projects take turns: the first Projects Ops
// create them.
func (g *Generator) Projects() int { return len(g.projects) }

// Ops returns how many Ops the generator has handed out.
func (g *Generator) Ops() uint64 { return g.ops }

// Next returns the next Op: while projects remain to be created, the next
// CreateProject; then the next command of a project drawn at random.
func (g *Generator) Next() Op {
	g.ops++
	if g.created < len(g.projects) {
		p := g.projects[g.created]
		g.created++
		return Op{Kind: CreateProject, Project: p.name, ID: p.name, Text: "benchmark project " + p.name}
	}
	return g.nextOf(g.projects[g.rng.IntN(len(g.projects))])
}

// Fill appends the next n Ops to ops and returns it.
func (g *Generator) Fill(ops []Op, n int) []Op {
	for range n {
		ops = append(ops, g.Next())
	}
	return ops
}

// nextOf returns p's next command: a checkpoint when one is due, else the
// next command of its current task.
func (g *Generator) nextOf(p *project) Op {
	if g.checkpoint > 0 && p.sinceCheckpoint >= g.checkpoint {
		p.sinceCheckpoint = 0
		p.checks++
		return Op{Kind: Checkpoint, Project: p.name, ID: shortID("C", p.checks)}
	}
	if len(p.todo) == 0 {
		p.todo = g.taskLife(p, p.buf[:0])
		p.buf = p.todo
	}
	o := p.todo[0]
	p.todo = p.todo[1:]
	p.sinceCheckpoint++
	return o
}

// taskLife appends the commands of p's next task, first to last, to ops.
func (g *Generator) taskLife(p *project, ops []Op) []Op {
	if p.tasks%40 == 0 {
		p.plans++
		plan := shortID("P", p.plans)
		ops = append(ops, Op{Kind: AddPlan, Project: p.name, ID: plan, Title: "milestone " + plan, Text: "work planned for " + plan})
	}
	p.tasks++
	n, plan := p.tasks, shortID("P", p.plans)
	task := shortID("T", n)
	ops = append(ops, g.addTask(p, n), Op{Kind: StartTask, Project: p.name, Task: task})
	for s := 1; s <= 3; s++ {
		step := stepID(task, s)
		ops = append(ops,
			Op{Kind: AddStep, Project: p.name, ID: step, Task: task, Title: fmt.Sprintf("step %d: edit, build and test", s)},
			Op{Kind: StartStep, Project: p.name, ID: step, Task: task},
			Op{Kind: ProgressStep, Project: p.name, ID: step, Task: task},
			Op{Kind: CompleteStep, Project: p.name, ID: step, Task: task})
	}
	for c := range 6 {
		ops = append(ops, Op{Kind: MergeContext, Project: p.name, Task: task, Text: ContextPatch(n, c)})
	}
	for range 2 {
		ops = append(ops, Op{Kind: AddNote, Project: p.name, Task: task, Text: NoteText})
	}
	for s := 1; s <= 3; s++ {
		p.execs++
		ops = append(ops, Op{Kind: RecordExec, Project: p.name, ID: shortID("X", p.execs), Task: task, Step: stepID(task, s), Plan: plan})
	}
	p.approvals++
	approval := shortID("A", p.approvals)
	return append(ops,
		Op{Kind: RequestApproval, Project: p.name, ID: approval, Task: task},
		Op{Kind: GrantApproval, Project: p.name, ID: approval, Task: task},
		Op{Kind: FinishTask, Project: p.name, Task: task})
}

// addTask creates task n of p in p's current plan, depending on up to two
// of the twenty tasks before it, listed by number without repeats (as
// flow.Engine.AddTask normalizes them).
func (g *Generator) addTask(p *project, n int) Op {
	o := Op{Kind: AddTask, Project: p.name, ID: shortID("T", n), Plan: shortID("P", p.plans),
		Title: fmt.Sprintf("implement part %d of the feature", n), Text: TaskDescription, Priority: n % 4}
	a, b := n-1-g.rng.IntN(20), n-1-g.rng.IntN(20)
	lo, hi := min(a, b), max(a, b)
	if lo >= 1 {
		o.Deps = append(o.Deps, shortID("T", lo))
	}
	if hi >= 1 && hi != lo {
		o.Deps = append(o.Deps, shortID("T", hi))
	}
	return o
}
