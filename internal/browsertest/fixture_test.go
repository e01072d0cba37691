package browsertest

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// The fixture's project, as the tests rely on it.
const (
	fixtureTasks    = 15
	fixtureApproval = "A-1" // pending, on T-6
	// At checkpoint C-1 the redesign's five tasks existed, all todo; T-1
	// is done now.
	fixtureCheckpoint = "C-1"
)

// newProject writes a small but realistic project "web" into a new flow
// file and returns its path: three plans, 15 tasks in every status, with
// dependencies, steps in progress, a claim, context, exec records (one
// failed), notes, a pending approval with its action, and two
// checkpoints. Its events are spread over the last 90 minutes, so that the
// pages show plausible times.
func newProject(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), flow.DefaultDir, flow.DefaultFile)
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "ann", Session: "s-1", Now: spreadClock(90*time.Minute, 90*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	f := &builder{t: t, e: e}
	f.check(e.CreateProject(flow.NewProject{Name: "web", Description: "The company web site: the new design, checkout and docs"}))
	redesign := f.plan("Redesign")
	checkout := f.plan("Checkout")
	docs := f.plan("Docs")

	t1 := f.task(redesign, "Audit the current pages", "ann", []string{"design"}, 1)
	t2 := f.task(redesign, "Design tokens and colour palette", "ann", []string{"design"}, 1, t1)
	t3 := f.task(redesign, "Build the new header and navigation", "bo", []string{"frontend"}, 2, t2)
	t4 := f.task(redesign, "Restyle the product pages", "bo", []string{"frontend"}, 2, t3)
	f.task(redesign, "Accessibility pass (WCAG 2.2 AA)", "cy", []string{"a11y"}, 1, t3, t4)
	f.check(e.CreateCheckpoint(flow.NewCheckpoint{Project: "web", Label: "before the redesign"}))

	t6 := f.task(checkout, "Payment provider integration", "dee", []string{"backend"}, 1)
	t7 := f.task(checkout, "Address validation", "dee", []string{"backend"}, 2)
	t8 := f.task(checkout, "Order confirmation emails", "eli", []string{"backend"}, 2, t6)
	t9 := f.task(checkout, "Fraud checks with the risk API", "eli", []string{"backend", "legal"}, 1)
	f.task(checkout, "Load test the checkout", "", []string{"ops"}, 3, t6, t8)
	t11 := f.task(docs, "API reference", "fay", []string{"docs"}, 2)
	f.task(docs, "Migration guide", "fay", []string{"docs"}, 2, t11)
	f.task(docs, "Screenshots for the README", "", []string{"docs"}, 3)
	t14 := f.task(docs, "Rewrite the old FAQ page", "", []string{"docs"}, 3)
	t15 := f.task(docs, "Changelog for 2.0", "fay", []string{"docs"}, 2)

	f.move(t1, "doing", "done")
	f.move(t2, "doing", "done")
	f.move(t7, "doing", "done")
	f.move(t15, "doing", "done")
	f.move(t14, "cancelled")
	f.move(t9, "blocked")
	f.check(e.AddNote(flow.NewNote{Project: "web", Task: t9, Text: "Waiting for legal to sign off the data processing agreement."}))

	f.move(t3, "doing")
	f.check(e.ClaimTask(flow.Claim{Project: "web", ID: t3, Lease: 4 * time.Hour}))
	f.check(e.MergeContext(flow.ContextPatch{Project: "web", ID: t3, Patch: `{"branch":"feat/header","preview":"https://preview.example/header","breakpoints":[640,1024,1280]}`}))
	f.steps(t3, []string{"Markup and landmarks", "Responsive menu", "Keyboard navigation"}, 60)
	f.check(e.RecordExec(flow.NewExec{Project: "web", Task: t3, Command: "npm run lint", ExitCode: 0, Success: true, ElapsedMS: 2300,
		Stdout: projection.Output{Head: "✔ 214 files linted\n", Bytes: 20}}))

	f.move(t6, "doing")
	f.steps(t6, []string{"Sandbox account and keys", "Card payments", "Refunds"}, 30)
	f.check(e.RecordExec(flow.NewExec{Project: "web", Task: t6, Command: "go test ./payments/...", ExitCode: 0, Success: true, ElapsedMS: 4120,
		Stdout: projection.Output{Head: "ok  \tshop/payments\t3.9s\n", Bytes: 24}}))
	f.check(e.RecordExec(flow.NewExec{Project: "web", Task: t6, Command: "npm run e2e -- checkout", ExitCode: 1, Success: false, ElapsedMS: 61800,
		Stderr: projection.Output{Head: "checkout.spec.ts: 1 failed\n", Tail: "Timeout 30000ms exceeded waiting for #pay\n", Bytes: 5120}}))
	f.check(e.RequestApproval(flow.NewApproval{Project: "web", Task: t6, Message: "Deploy the payment integration to staging?",
		Action: `{"cmd":"make deploy","env":"staging"}`}))

	f.move(t11, "doing")
	f.steps(t11, []string{"Endpoints"}, 80)
	f.check(e.AddNote(flow.NewNote{Project: "web", Task: t11, Kind: flow.NoteKindMemory, Text: "Generate the reference from openapi.json, never by hand."}))
	f.check(e.CreateCheckpoint(flow.NewCheckpoint{Project: "web", Label: "checkout started"}))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// spreadClock is a clock that starts span ago and moves step per call,
// never past the real time.
func spreadClock(span, step time.Duration) func() time.Time {
	var mu sync.Mutex
	next := time.Now().Add(-span)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if next.After(now) {
			next = now
		}
		t := next
		next = next.Add(step)
		return t
	}
}

// builder writes the fixture; any error fails the test.
type builder struct {
	t testing.TB
	e *flow.Engine
}

func (f *builder) check(_ any, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *builder) plan(title string) string {
	f.t.Helper()
	p, err := f.e.AddPlan(flow.NewPlan{Project: "web", Title: title})
	if err != nil {
		f.t.Fatal(err)
	}
	return p.ID
}

func (f *builder) task(plan, title, owner string, tags []string, priority int, deps ...string) string {
	f.t.Helper()
	t, err := f.e.AddTask(flow.NewTask{Project: "web", Plan: plan, Title: title, Owner: owner, Tags: tags, Priority: priority, Deps: deps})
	if err != nil {
		f.t.Fatal(err)
	}
	return t.ID
}

func (f *builder) move(id string, to ...string) {
	f.t.Helper()
	for _, s := range to {
		f.check(f.e.MoveTask(flow.Move{Project: "web", ID: id, To: s}))
	}
}

// steps adds steps to task: the first completed, the second in progress
// at progress %, the rest pending.
func (f *builder) steps(task string, titles []string, progress int) {
	f.t.Helper()
	for i, title := range titles {
		s, err := f.e.AddStep(flow.NewStep{Project: "web", Task: task, Title: title})
		if err != nil {
			f.t.Fatal(err)
		}
		switch {
		case i == 0 && len(titles) > 1:
			f.check(f.e.MoveStep(flow.StepMove{Project: "web", ID: s.ID, To: projection.StepInProgress}))
			f.check(f.e.MoveStep(flow.StepMove{Project: "web", ID: s.ID, To: projection.StepCompleted, Result: "done"}))
		case i == 1 || len(titles) == 1:
			f.check(f.e.MoveStep(flow.StepMove{Project: "web", ID: s.ID, To: projection.StepInProgress, Progress: &progress}))
		}
	}
}
