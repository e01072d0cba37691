package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// history writes a flowctl history of a realistic shape through the
// engine's public commands, many commands per write transaction
// (flow.Engine.Batch). It has the shape of the generator of the engine's
// own point-in-time benchmarks (flow/timetravel_bench_test.go):
//
// Each project works through its tasks one at a time, as an assistant
// does: task created (in the current plan, depending on up to two earlier
// tasks) -> doing -> three steps, each added, started, half done and
// completed -> six context merges -> two notes -> three exec records ->
// an approval requested and granted -> done: 28 events a task. A new plan
// every 40 tasks; a checkpoint every 5000 events of a project. Projects
// take turns at random. Every command appends exactly one event.
type history struct {
	rng      *rand.Rand
	projects []*genProject
	stdout   projection.Output
	events   uint64 // events of the commands handed out so far
}

// genProject is one project's place in its work.
type genProject struct {
	name            string
	tasks, plans    int
	sinceCheckpoint int
	todo            []op
}

// op is one command. It runs inside a batch and may run more than once
// (see flow.Engine.Batch), so it changes nothing outside the engine but
// variables that a rerun sets again.
type op func(b *flow.Engine) error

// checkpointEvery is how many events of a project pass between checkpoints.
const checkpointEvery = 5000

// projectName names the i-th generated project.
func projectName(i int) string { return fmt.Sprintf("proj%03d", i) }

func newHistory(projects int, seed uint64) *history {
	h := &history{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		stdout: flow.CaptureString("ok  \tgithub.com/example/app/parser\t0.412s\nok  \tgithub.com/example/app/render\t0.207s\n")}
	for i := range projects {
		h.projects = append(h.projects, &genProject{name: projectName(i)})
	}
	return h
}

// createProjects is the first batch: one project.created each.
func (h *history) createProjects() []op {
	var ops []op
	for _, p := range h.projects {
		ops = append(ops, func(b *flow.Engine) error {
			_, err := b.CreateProject(flow.NewProject{Name: p.name, Description: "benchmark project " + p.name})
			return err
		})
	}
	h.events += uint64(len(ops))
	return ops
}

// next hands out the next n commands, drawn from random projects.
func (h *history) next(n int) []op {
	ops := make([]op, 0, n)
	for range n {
		p := h.projects[h.rng.IntN(len(h.projects))]
		ops = append(ops, h.nextOf(p))
	}
	h.events += uint64(n)
	return ops
}

// nextOf returns p's next command: a checkpoint when one is due, else the
// next step of its current task.
func (h *history) nextOf(p *genProject) op {
	if p.sinceCheckpoint >= checkpointEvery {
		p.sinceCheckpoint = 0
		return func(b *flow.Engine) error {
			_, err := b.CreateCheckpoint(flow.NewCheckpoint{Project: p.name, Label: "bench"})
			return err
		}
	}
	if len(p.todo) == 0 {
		p.todo = h.taskLife(p)
	}
	o := p.todo[0]
	p.todo = p.todo[1:]
	p.sinceCheckpoint++
	return o
}

// taskLife returns the commands of p's next task, first to last.
func (h *history) taskLife(p *genProject) []op {
	var ops []op
	if p.tasks%40 == 0 {
		p.plans++
		ops = append(ops, h.addPlan(p.name, projection.ShortID(projection.PrefixPlan, p.plans)))
	}
	p.tasks++
	n := p.tasks
	task := projection.ShortID(projection.PrefixTask, n)
	ops = append(ops, h.addTask(p, n), move(p.name, task, projection.StatusDoing))
	for s := 1; s <= 3; s++ {
		ops = append(ops, stepLife(p.name, task, s)...)
	}
	for c := range 6 {
		ops = append(ops, mergeContext(p.name, task, contextPatch(n, c)))
	}
	ops = append(ops, addNote(p.name, task), addNote(p.name, task))
	for s := 1; s <= 3; s++ {
		ops = append(ops, h.recordExec(p.name, task, s))
	}
	ops = append(ops, approve(p.name, task)...)
	return append(ops, move(p.name, task, projection.StatusDone))
}

func (h *history) addPlan(project, plan string) op {
	return func(b *flow.Engine) error {
		_, err := b.AddPlan(flow.NewPlan{Project: project, Title: "milestone " + plan,
			Description: "work planned for " + plan})
		return err
	}
}

// addTask creates task n of p in p's current plan, depending on up to two
// of the twenty tasks before it.
func (h *history) addTask(p *genProject, n int) op {
	in := flow.NewTask{Project: p.name, Plan: projection.ShortID(projection.PrefixPlan, p.plans),
		Title:       fmt.Sprintf("implement part %d of the feature", n),
		Description: "a description of the work, as an assistant would write it, a sentence or two long.",
		Owner:       "agent", Tags: []string{"bench", "feature"}, Priority: n % 4}
	for _, d := range []int{n - 1 - h.rng.IntN(20), n - 1 - h.rng.IntN(20)} {
		if d >= 1 {
			in.Deps = append(in.Deps, projection.ShortID(projection.PrefixTask, d))
		}
	}
	return func(b *flow.Engine) error {
		in := in
		in.Deps = append([]string(nil), in.Deps...) // AddTask normalizes its input in place
		_, err := b.AddTask(in)
		return err
	}
}

func move(project, task, to string) op {
	return func(b *flow.Engine) error {
		_, err := b.MoveTask(flow.Move{Project: project, ID: task, To: to})
		return err
	}
}

// stepLife is step s of a task: added, started, half done, completed.
func stepLife(project, task string, s int) []op {
	step := projection.StepID(task, s)
	half := 50
	moveStep := func(m flow.StepMove) op {
		m.Project, m.ID = project, step
		return func(b *flow.Engine) error { _, err := b.MoveStep(m); return err }
	}
	return []op{
		func(b *flow.Engine) error {
			_, err := b.AddStep(flow.NewStep{Project: project, Task: task, Title: fmt.Sprintf("step %d: edit, build and test", s)})
			return err
		},
		moveStep(flow.StepMove{To: projection.StepInProgress}),
		moveStep(flow.StepMove{To: projection.StepInProgress, Progress: &half, Note: "halfway"}),
		moveStep(flow.StepMove{To: projection.StepCompleted, Result: "done, tests pass"}),
	}
}

func mergeContext(project, task, patch string) op {
	return func(b *flow.Engine) error {
		_, err := b.MergeContext(flow.ContextPatch{Project: project, ID: task, Patch: patch})
		return err
	}
}

// contextPatch is the c-th context merge of task n: a few keys that keep
// changing, and one that grows per merge.
func contextPatch(n, c int) string {
	patch := map[string]any{
		"phase":               []string{"explore", "plan", "implement", "test", "review", "wrap-up"}[c],
		"files":               []string{fmt.Sprintf("parser/part%d.go", n), fmt.Sprintf("parser/part%d_test.go", n)},
		fmt.Sprintf("k%d", c): map[string]any{"decision": "use a table-driven parser", "merge": c},
	}
	b, err := json.Marshal(patch)
	if err != nil {
		panic(err) // a map of strings and ints always marshals
	}
	return string(b)
}

func addNote(project, task string) op {
	return func(b *flow.Engine) error {
		_, err := b.AddNote(flow.NewNote{Project: project, Task: task, Kind: flow.NoteKindNote,
			Text: "found that the parser needs a second pass for nested blocks; noted for the reviewer"})
		return err
	}
}

func (h *history) recordExec(project, task string, s int) op {
	in := flow.NewExec{Project: project, Task: task, Step: projection.StepID(task, s),
		Command: "go test ./...", Cwd: "/src/app", ExitCode: 0, Success: true, ElapsedMS: 1234.5,
		Stdout: h.stdout, AddedVars: []string{"result"}}
	return func(b *flow.Engine) error {
		in := in
		in.AddedVars = append([]string(nil), in.AddedVars...)
		_, err := b.RecordExec(in)
		return err
	}
}

// approve is an approval requested and granted. The grant learns the
// approval's id from the request, which a rerun of the batch runs again.
func approve(project, task string) []op {
	var id string
	return []op{
		func(b *flow.Engine) error {
			a, err := b.RequestApproval(flow.NewApproval{Project: project, Task: task, Message: "push the branch?",
				Action: `{"cmd":"git push origin feature"}`})
			if err == nil {
				id = a.ID
			}
			return err
		},
		func(b *flow.Engine) error {
			_, err := b.DecideApproval(flow.Decision{Project: project, ID: id, Grant: true, Comment: "ok"})
			return err
		},
	}
}
