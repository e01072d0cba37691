package digest

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/capture"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// primeTB is what the prime tests need of a *testing.T or a *rapid.T.
type primeTB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// primeWorld is a file written by several actors in turn (one engine at
// a time: a writing engine holds the file's lock) on a clock the test
// moves: every call advances it by step, and step 0 freezes it.
type primeWorld struct {
	tb    primeTB
	path  string
	e     *flow.Engine
	actor string
	clock time.Time
	step  time.Duration
}

func newPrimeWorld(tb primeTB, dir string) *primeWorld {
	return &primeWorld{tb: tb, path: filepath.Join(dir, "db"),
		clock: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), step: time.Minute}
}

func (w *primeWorld) now() time.Time {
	w.clock = w.clock.Add(w.step)
	return w.clock
}

// as returns the engine of actor (session "s-" + actor), reopening the
// file when the actor changes.
func (w *primeWorld) as(actor string) *flow.Engine {
	if w.e != nil && w.actor == actor {
		return w.e
	}
	w.close()
	e, err := flow.Open(w.path, flow.Options{Create: true, NoSync: true, Actor: actor, Session: "s-" + actor, Now: w.now})
	if err != nil {
		w.tb.Fatal(err)
	}
	w.e, w.actor = e, actor
	return e
}

func (w *primeWorld) close() {
	if w.e != nil {
		if err := w.e.Close(); err != nil {
			w.tb.Fatal(err)
		}
		w.e = nil
	}
}

// primeMust(f()).in(tb) is f's value, or fails the test on f's error.
func primeMust[T any](v T, err error) primeResult[T] { return primeResult[T]{v, err} }

type primeResult[T any] struct {
	v   T
	err error
}

func (r primeResult[T]) in(tb primeTB) T {
	tb.Helper()
	if r.err != nil {
		tb.Fatal(r.err)
	}
	return r.v
}

// primeFixture builds project web, seen by ann (session s-ann):
// T-1 done (old history), T-2 held by ann (steps, context, four exec
// records), T-3 with a pending approval, T-4 claimed by bob, T-5 ready at
// priority 3 (its approval granted); plans P-1 open, P-2 closed; two
// memory notes and a plain one; checkpoints C-1 and C-2.
func primeFixture(tb testing.TB, w *primeWorld) {
	tb.Helper()
	bob := w.as("bob")
	primeMust(bob.CreateProject(flow.NewProject{Name: "web", Description: "the site"})).in(tb)
	for _, title := range []string{"write the parser", "test the parser", "write docs", "ops work", "low"} {
		primeMust(bob.AddTask(flow.NewTask{Project: "web", Title: title})).in(tb)
	}
	primeMust(bob.ClaimTask(flow.Claim{Project: "web", ID: "T-4", Lease: 24 * time.Hour})).in(tb)
	ann := w.as("ann")
	primeMust(ann.AddPlan(flow.NewPlan{Project: "web", Title: "launch"})).in(tb)
	primeMust(ann.AddPlan(flow.NewPlan{Project: "web", Title: "later"})).in(tb)
	primeMust(ann.ClosePlan(flow.ClosePlan{Project: "web", ID: "P-2"})).in(tb)
	plan, prio := "P-1", 3
	for _, id := range []string{"T-1", "T-2"} {
		primeMust(ann.EditTask(flow.TaskEdit{Project: "web", ID: id, Plan: &plan})).in(tb)
	}
	primeMust(ann.EditTask(flow.TaskEdit{Project: "web", ID: "T-5", Priority: &prio})).in(tb)
	primeMust(ann.AddDep(flow.DepChange{Project: "web", ID: "T-2", Dep: "T-1"})).in(tb)
	primeMust(ann.MoveTask(flow.Move{Project: "web", ID: "T-1", To: "doing"})).in(tb)
	primeMust(ann.MoveTask(flow.Move{Project: "web", ID: "T-1", To: "done"})).in(tb)
	primeMust(ann.CreateCheckpoint(flow.NewCheckpoint{Project: "web", Label: "first"})).in(tb)
	primeMust(ann.ClaimTask(flow.Claim{Project: "web", ID: "T-2", Lease: 24 * time.Hour})).in(tb)
	primeMust(ann.MergeContext(flow.ContextPatch{Project: "web", ID: "T-2", Patch: `{"branch":"tests"}`})).in(tb)
	primeMust(ann.AddStep(flow.NewStep{Project: "web", Task: "T-2", Title: "table tests"})).in(tb)
	primeMust(ann.MoveStep(flow.StepMove{Project: "web", ID: "T-2.1", To: projection.StepInProgress})).in(tb)
	for i := 1; i <= 4; i++ {
		x := flow.NewExec{Project: "web", Task: "T-2", Command: "go test ./run" + strconv.Itoa(i), Success: true,
			Stdout: capture.String("ok run" + strconv.Itoa(i))}
		if i == 4 {
			x.Success, x.ExitCode, x.Stderr = false, 1, capture.String("FAIL: want 3, got 4\n")
		}
		primeMust(ann.RecordExec(x)).in(tb)
	}
	primeMust(ann.RequestApproval(flow.NewApproval{Project: "web", Task: "T-3", Message: "deploy?"})).in(tb)
	primeMust(ann.RequestApproval(flow.NewApproval{Project: "web", Task: "T-5", Message: "cleanup?"})).in(tb)
	primeMust(ann.As("bob", "b1").DecideApproval(flow.Decision{Project: "web", ID: "A-2", Grant: true})).in(tb)
	primeMust(ann.AddNote(flow.NewNote{Project: "web", Kind: flow.NoteKindMemory, Text: "deploys need the VPN"})).in(tb)
	primeMust(ann.AddNote(flow.NewNote{Project: "web", Task: "T-3", Text: "just a note"})).in(tb)
	primeMust(ann.AddNote(flow.NewNote{Project: "web", Task: "T-2", Kind: flow.NoteKindMemory, Text: "use table tests"})).in(tb)
	primeMust(ann.CreateCheckpoint(flow.NewCheckpoint{Project: "web", Label: "second"})).in(tb)
}

func TestEngine_Prime(t *testing.T) {
	t.Parallel()
	w := newPrimeWorld(t, t.TempDir())
	primeFixture(t, w)
	w.step = 0
	e := w.as("ann")
	t.Cleanup(w.close)
	events := flowtest.Events(t, e, flow.Filter{Project: "web"})
	head := events[len(events)-1].Seq

	t.Run("OK", func(t *testing.T) {
		p := primeMust(Prime(e, PrimeInput{Project: "web", Actor: "ann", Session: "s-ann", Budget: 100000})).in(t)
		md := p.Markdown
		wantHeader := fmt.Sprintf("# Prime: web\n\n- project: web — the site\n- for: ann (session s-ann), at seq %d\n"+
			"- holding: T-2\n- tasks: 5 (4 todo, 1 done)\n"+
			"- ready: 2 · pending approvals: 1 · open plans: 1 · checkpoints: 2 · memory notes: 2 · events: %d\n", head, len(events))
		if !strings.HasPrefix(md, wantHeader) {
			t.Errorf("header:\n%s\nwant:\n%s", md[:min(len(md), len(wantHeader)+40)], wantHeader)
		}
		for _, want := range []string{
			"\n## Your task: T-2 test the parser\n\n- status todo · priority 0 · plan P-1 · claimed until ",
			"- depends on: T-1 (done)\n",
			"\nSteps:\n\n- [~] T-2.1 table tests: in_progress 0%\n",
			"\nContext (version 1):\n\n```json\n{\n  \"branch\": \"tests\"\n}\n```\n",
			"\n- X-4 go test ./run4: exit 1, failed, 0 ms, ",
			"\nstderr (20 bytes):\n\n```\nFAIL: want 3, got 4\n```\n",
			"\n## Pending approvals\n\n- A-1 on T-3: deploy? — requested by ann ",
			"\n## Ready to start\n\n- T-5 low (priority 3)\n- T-2 test the parser (priority 0, plan P-1)\n",
			"\n## Open plans\n\n- P-1 launch: 1 of 2 tasks done\n",
			"\n## Last checkpoint\n\n- C-2 \"second\" at seq ",
			": deploys need the VPN\n", " on T-2, ann ",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("markdown lacks %q:\n%s", want, md)
			}
		}
		for _, unwanted := range []string{"X-1 ", "_left out", "## Your task: T-4"} {
			if strings.Contains(md, unwanted) {
				t.Errorf("markdown has %q:\n%s", unwanted, md)
			}
		}
		if strings.Contains(sectionText(md, "Open plans"), "P-2") || strings.Contains(sectionText(md, "Last checkpoint"), "C-1") {
			t.Errorf("a closed plan or an older checkpoint is shown:\n%s", md)
		}
		if i, j := strings.Index(md, "- X-4 "), strings.Index(md, "- X-2 "); i < 0 || j < i {
			t.Errorf("exec records not newest first (X-4 at %d, X-2 at %d)", i, j)
		}
		if memory := sectionText(md, "Long-term memory"); strings.Count(memory, "\n- ") != 2 || strings.Contains(memory, "just a note") {
			t.Errorf("memory section %q: want the two memory notes and no plain note", memory)
		}
		var recent []string
		for _, ev := range events[len(events)-PrimeRecentEvents:] {
			recent = append(recent, "#"+strconv.FormatUint(ev.Seq, 10))
		}
		if got := primeSections(md)["Recent events (short-term memory)"]; !slices.Equal(got, recent) {
			t.Errorf("recent events = %v, want %v", got, recent)
		}
		var t1 []uint64
		for _, ev := range events {
			if ev.Stream == projection.TaskStream("web", "T-1") {
				t1 = append(t1, ev.Seq)
			}
		}
		wantT1 := fmt.Sprintf("- T-1 write the parser: created by bob, 2 status moves, now done; 1 edit; %d events #%d–#%d\n",
			len(t1), t1[0], t1[len(t1)-1])
		if !strings.Contains(md, wantT1) {
			t.Errorf("markdown lacks the summary %q:\n%s", wantT1, sectionText(md, "Older history (long-term memory)"))
		}
		if len(p.Held) != 1 || p.Held[0].ID != "T-2" || len(p.Held[0].Execs) != 3 || p.Held[0].Context == "" || len(p.Held[0].Steps) != 1 {
			t.Errorf("held = %+v, want T-2 with its step, context and 3 exec records", p.Held)
		}
		if got := primeBriefIDs(p.Ready); !slices.Equal(got, []string{"T-5", "T-2"}) {
			t.Errorf("ready = %v, want [T-5 T-2]", got)
		}
		if len(p.PendingApprovals) != 1 || p.Checkpoint == nil || p.Checkpoint.ID != "C-2" || len(p.Plans) != 1 ||
			len(p.Memory) != 2 || len(p.Recent) != PrimeRecentEvents || len(p.LeftOut) != 0 {
			t.Errorf("parts: approvals %v, checkpoint %v, plans %v, memory %d, recent %d, left out %v",
				p.PendingApprovals, p.Checkpoint, p.Plans, len(p.Memory), len(p.Recent), p.LeftOut)
		}
		if p.Bytes != len(md) || p.Limit != 400000 || p.HeadSeq != head {
			t.Errorf("bytes %d (len %d), limit %d, head %d", p.Bytes, len(md), p.Limit, p.HeadSeq)
		}
		checkPrime(t, e, p)
	})

	t.Run("DefaultBudget", func(t *testing.T) {
		p := primeMust(Prime(e, PrimeInput{Project: "web", Actor: "ann"})).in(t)
		if p.Budget != DefaultPrimeBudget || p.Limit != DefaultPrimeBudget*PrimeCharsPerToken || p.Bytes > p.Limit {
			t.Errorf("budget %d, limit %d, bytes %d; want the default", p.Budget, p.Limit, p.Bytes)
		}
	})

	t.Run("LeavesOutLeastImportantFirst", func(t *testing.T) {
		full := primeMust(Prime(e, PrimeInput{Project: "web", Actor: "ann", Budget: MaxPrimeBudget})).in(t)
		seq := primeDropSequence(full)
		prev := -1
		for budget := full.Bytes / PrimeCharsPerToken; budget > 0; budget -= 11 {
			p := primeMust(Prime(e, PrimeInput{Project: "web", Actor: "ann", Budget: budget})).in(t)
			n := checkPrime(t, e, p)
			if n < prev {
				t.Errorf("budget %d left out %d items, a larger one %d", budget, n, prev)
			}
			prev = n
			if n > 0 && !p.Clipped && !strings.HasSuffix(p.Markdown, "_\n") {
				t.Errorf("budget %d: no left-out line at the end:\n%s", budget, p.Markdown)
			}
		}
		if prev != len(seq) {
			t.Errorf("the smallest budget left out %d items, want all %d", prev, len(seq))
		}
	})

	t.Run("LeftOutLine", func(t *testing.T) {
		full := primeMust(Prime(e, PrimeInput{Project: "web", Actor: "ann", Budget: MaxPrimeBudget})).in(t)
		header := strings.Index(full.Markdown, "\n## ")
		rest := fmt.Sprintf("1 pending approval, 2 ready tasks, 1 open plan, the last checkpoint, 2 memory notes, "+
			"10 recent events, %d summaries of %d older events_\n", len(full.Summaries), len(events)-PrimeRecentEvents)
		for _, tc := range []struct {
			budget int
			want   string
		}{
			{(header + 400) / PrimeCharsPerToken, "\n_left out: from T-2: 3 exec results, context, steps, " + rest},
			{(header + 250) / PrimeCharsPerToken, "\n_left out: your task T-2, " + rest},
		} {
			p := primeMust(Prime(e, PrimeInput{Project: "web", Actor: "ann", Budget: tc.budget})).in(t)
			if !strings.HasSuffix(p.Markdown, tc.want) || p.Clipped {
				t.Errorf("budget %d: markdown:\n%s\nwant it to end with %q", tc.budget, p.Markdown, tc.want)
			}
		}
	})

	t.Run("TinyBudgetIsClipped", func(t *testing.T) {
		for _, budget := range []int{1, 2, 10} {
			p := primeMust(Prime(e, PrimeInput{Project: "web", Actor: "ann", Budget: budget})).in(t)
			cut := strings.TrimSuffix(p.Markdown, "…")
			if !p.Clipped || len(p.Markdown) > budget*PrimeCharsPerToken || !strings.HasPrefix("# Prime: web\n\n- project: web — the site\n", cut) {
				t.Errorf("budget %d: clipped %v, markdown %q", budget, p.Clipped, p.Markdown)
			}
		}
	})

	t.Run("Deterministic", func(t *testing.T) {
		a := primeMust(Prime(e, PrimeInput{Project: "web", Actor: "ann", Budget: 300})).in(t)
		b := primeMust(Prime(e, PrimeInput{Project: "web", Actor: "ann", Budget: 300})).in(t)
		ja, jb := primeMust(json.Marshal(a)).in(t), primeMust(json.Marshal(b)).in(t)
		if string(ja) != string(jb) {
			t.Errorf("two primes differ:\n%s\n%s", ja, jb)
		}
	})

	t.Run("NoActorHoldsNothing", func(t *testing.T) {
		p := primeMust(Prime(e, PrimeInput{Project: "web"})).in(t)
		if !strings.Contains(p.Markdown, "- for: (no actor), at seq ") || !strings.Contains(p.Markdown, "- holding: no task (no live claim)\n") ||
			len(p.Held) != 0 || slices.Contains(primeBriefIDs(p.Ready), "T-2") {
			t.Errorf("without an actor: held %v, ready %v:\n%s", p.Held, primeBriefIDs(p.Ready), p.Markdown)
		}
	})

	t.Run("ExpiredClaimIsNotHeld", func(t *testing.T) {
		// The writing engine holds the file's lock: close it, look two days
		// later through a read-only engine, and reopen it.
		w.close()
		defer func() { e = w.as("ann") }()
		later := w.clock.Add(48 * time.Hour)
		e2 := primeMust(flow.Open(w.path, flow.Options{ReadOnly: true, Now: func() time.Time { return later }})).in(t)
		defer e2.Close()
		p := primeMust(Prime(e2, PrimeInput{Project: "web", Actor: "ann"})).in(t)
		if len(p.Held) != 0 || !strings.Contains(p.Markdown, "- holding: no task") {
			t.Errorf("held after the lease ended: %+v", p.Held)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, in := range []PrimeInput{{Project: "web", Budget: -1}, {Project: "web", Budget: MaxPrimeBudget + 1}, {}} {
			if _, err := Prime(e, in); !errors.Is(err, flow.ErrInvalid) {
				t.Errorf("Prime(%+v) = %v, want ErrInvalid", in, err)
			}
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := Prime(e, PrimeInput{Project: "nope"}); flow.ErrorCode(err) != flow.CodeNotFound {
			t.Errorf("Prime(nope) = %v, want not_found", err)
		}
	})
}

// TestEngine_PrimeCutsLongTexts: a context over its share of the budget,
// a long step list and long exec output are cut, in the document and in
// the structured parts alike, and the document says where to read them
// whole.
func TestEngine_PrimeCutsLongTexts(t *testing.T) {
	t.Parallel()
	w := newPrimeWorld(t, t.TempDir())
	defer w.close()
	e := w.as("ann")
	primeMust(e.CreateProject(flow.NewProject{Name: "p"})).in(t)
	primeMust(e.AddTask(flow.NewTask{Project: "p", Title: "big"})).in(t)
	primeMust(e.ClaimTask(flow.Claim{Project: "p", ID: "T-1", Lease: 24 * time.Hour})).in(t)
	primeMust(e.MergeContext(flow.ContextPatch{Project: "p", ID: "T-1", Patch: `{"log":"` + strings.Repeat("x", 5000) + `"}`})).in(t)
	for i := range 40 {
		primeMust(e.AddStep(flow.NewStep{Project: "p", Task: "T-1", Title: fmt.Sprint("step number ", i)})).in(t)
	}
	out := strings.Repeat("line of output\n", 100)
	primeMust(e.RecordExec(flow.NewExec{Project: "p", Task: "T-1", Command: "make", Success: true, Stdout: capture.String(out)})).in(t)
	w.step = 0

	p := primeMust(Prime(e, PrimeInput{Project: "p", Actor: "ann", Budget: 1000})).in(t)
	h := p.Held[0]
	if !h.ContextClipped || h.Context != "" || !strings.Contains(p.Markdown, " bytes; flowctl ctx get T-1)\n") {
		t.Errorf("context: clipped %v, %d bytes in the parts; markdown:\n%s", h.ContextClipped, len(h.Context), p.Markdown)
	}
	if h.StepsMore == 0 || len(h.Steps)+h.StepsMore != 40 || !strings.Contains(p.Markdown, fmt.Sprintf("- … %d more (flowctl step ls T-1)\n", h.StepsMore)) {
		t.Errorf("steps: %d shown, %d more; markdown:\n%s", len(h.Steps), h.StepsMore, p.Markdown)
	}
	if x := h.Execs[0]; strings.Count(x.Stdout.Head, "\n") != primeOutputLines || x.Stdout.Tail != "" || x.Stdout.Bytes != int64(len(out)) {
		t.Errorf("exec output in the parts: head %q, tail %q, bytes %d", x.Stdout.Head, x.Stdout.Tail, x.Stdout.Bytes)
	}
	checkPrime(t, e, p)
}

func primeBriefIDs(bs []flow.TaskBrief) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.ID)
	}
	return out
}

// primeItem names one item of a prime: its part, held task and id, as
// PrimeOmission does.
type primeItem struct{ part, task, id string }

// primeDropSequence lists every item of a prime that left nothing out, in
// the order Prime drops them.
func primeDropSequence(p *PrimeDoc) []primeItem {
	var seq []primeItem
	add := func(part string, ids ...string) {
		for _, id := range ids {
			seq = append(seq, primeItem{part, "", id})
		}
	}
	for i := len(p.Summaries) - 1; i >= 0; i-- {
		add(PrimePartSummaries, p.Summaries[i].Subject)
	}
	for _, r := range p.Recent {
		add(PrimePartRecent, "#"+strconv.FormatUint(r.Seq, 10))
	}
	if p.Checkpoint != nil {
		add(PrimePartCheckpoint, p.Checkpoint.ID)
	}
	for i := len(p.Plans) - 1; i >= 0; i-- {
		add(PrimePartPlans, p.Plans[i].ID)
	}
	for _, n := range p.Memory {
		add(PrimePartMemory, "#"+strconv.FormatUint(n.Seq, 10))
	}
	for i := len(p.Ready) - 1; i >= 0; i-- {
		add(PrimePartReady, p.Ready[i].ID)
	}
	for i := len(p.PendingApprovals) - 1; i >= 0; i-- {
		add(PrimePartApprovals, p.PendingApprovals[i].ID)
	}
	for i := len(p.Held) - 1; i >= 0; i-- {
		h := p.Held[i]
		held := func(id string) { seq = append(seq, primeItem{PrimePartHeldTask, h.ID, id}) }
		for j := len(h.Execs) - 1; j >= 0; j-- {
			held(h.Execs[j].ID)
		}
		if h.Context != "" || h.ContextClipped {
			held("context")
		}
		if len(h.Steps) > 0 {
			held("steps")
		}
		held("task")
	}
	return seq
}

// checkPrime checks a prime against the same engine's prime with nothing
// left out: the document fits its limit; what it shows, section by
// section, is exactly its structured parts; what it says it left out is
// absent, and is exactly the first items of the drop order. It returns
// how many items were left out.
func checkPrime(tb primeTB, e *flow.Engine, p *PrimeDoc) int {
	tb.Helper()
	if len(p.Markdown) > p.Limit || p.Bytes != len(p.Markdown) || p.Limit != p.Budget*PrimeCharsPerToken {
		tb.Fatalf("markdown is %d bytes (Bytes %d), limit %d for budget %d", len(p.Markdown), p.Bytes, p.Limit, p.Budget)
	}
	full, err := Prime(e, PrimeInput{Project: p.Project, Actor: p.Actor, Session: p.Session, Budget: MaxPrimeBudget})
	if err != nil {
		tb.Fatal(err)
	}
	if len(full.LeftOut) != 0 {
		tb.Fatalf("the largest budget left out %v", full.LeftOut)
	}
	seq := primeDropSequence(full)
	var left []primeItem
	n := 0 // items left out, named (IDs) or counted (More)
	for _, o := range p.LeftOut {
		for _, id := range o.IDs {
			left = append(left, primeItem{o.Part, o.Task, id})
		}
		n += len(o.IDs) + o.More
	}
	if n > len(seq) {
		tb.Fatalf("left out %d items of %d", n, len(seq))
	}
	dropped := map[primeItem]bool{}
	for _, it := range seq[:n] {
		dropped[it] = true
	}
	for _, it := range left {
		if !dropped[it] {
			tb.Errorf("left out %+v before items that matter less; drop order %v, left out %v", it, seq, left)
		}
	}
	if !slices.Equal(primeShown(p), primeShown(full)[n:]) && !p.Clipped {
		tb.Errorf("shown items %v, want %v less what was left out", primeShown(p), primeShown(full))
	}
	got := primeSections(p.Markdown)
	want := primeSectionsOf(p)
	for title, keys := range want {
		if !slices.Equal(got[title], keys) {
			tb.Errorf("section %q shows %v, want %v\n%s", title, got[title], keys, p.Markdown)
		}
	}
	for title := range got {
		if _, ok := want[title]; !ok {
			tb.Errorf("section %q is shown but has no items in the parts\n%s", title, p.Markdown)
		}
	}
	return n
}

// primeShown lists the items of a prime's structured parts, sorted in
// drop order of the prime with nothing left out (so the kept items of a
// budgeted prime are a suffix of it).
func primeShown(p *PrimeDoc) []primeItem {
	return primeDropSequence(p)
}

// primeSectionsOf returns, per section title, the keys its lines should
// show: the ids of the structured parts.
func primeSectionsOf(p *PrimeDoc) map[string][]string {
	out := map[string][]string{}
	put := func(title string, keys []string) {
		if len(keys) > 0 {
			out[title] = keys
		}
	}
	for _, h := range p.Held {
		keys := []string{"status"}
		if len(h.Deps) > 0 {
			keys = append(keys, "depends")
		}
		if len(h.PendingApprovals) > 0 {
			keys = append(keys, "waiting")
		}
		if h.Description != "" {
			keys = append(keys, "description")
		}
		if h.Steps != nil {
			keys = append(keys, "Steps:")
			for range len(h.Steps) + h.StepsMore {
				keys = append(keys, "[step]")
			}
		}
		if h.Context != "" || h.ContextClipped {
			keys = append(keys, "Context")
		}
		for _, x := range h.Execs {
			keys = append(keys, x.ID)
		}
		out["Your task: "+h.ID] = keys
	}
	var ids []string
	for _, a := range p.PendingApprovals {
		ids = append(ids, a.ID)
	}
	put("Pending approvals", ids)
	put("Ready to start", primeBriefIDs(p.Ready))
	ids = nil
	for _, pl := range p.Plans {
		ids = append(ids, pl.ID)
	}
	put("Open plans", ids)
	if p.Checkpoint != nil {
		put("Last checkpoint", []string{p.Checkpoint.ID})
	}
	ids = nil
	for _, n := range p.Memory {
		ids = append(ids, "#"+strconv.FormatUint(n.Seq, 10))
	}
	put("Long-term memory", ids)
	ids = nil
	for _, r := range p.Recent {
		ids = append(ids, "#"+strconv.FormatUint(r.Seq, 10))
	}
	put("Recent events (short-term memory)", ids)
	ids = nil
	for _, s := range p.Summaries {
		ids = append(ids, s.Subject)
	}
	put("Older history (long-term memory)", ids)
	return out
}

// primeSections parses a prime's markdown: per "## " section, the key of
// each item line ("- KEY ...": the first word, without a trailing ':' or
// ','), outside fenced code. A held task's section is keyed "Your task:
// T-n"; its step lines count as "[step]", and its "Steps:" and "Context
// (version n):" lines as "Steps:" and "Context".
func primeSections(md string) map[string][]string {
	out := map[string][]string{}
	title, fence := "", ""
	for _, line := range strings.Split(md, "\n") {
		switch {
		case fence != "":
			if strings.TrimSpace(line) == fence {
				fence = ""
			}
		case strings.HasPrefix(line, "```"):
			fence = line[:len(line)-len(strings.TrimLeft(line, "`"))]
		case strings.HasPrefix(line, "## "):
			title = strings.TrimPrefix(line, "## ")
			if rest, ok := strings.CutPrefix(title, "Your task: "); ok {
				id, _, _ := strings.Cut(rest, " ")
				title = "Your task: " + id
			}
			out[title] = []string{}
		case title == "":
		case strings.HasPrefix(line, "- [") && strings.HasPrefix(title, "Your task: "):
			out[title] = append(out[title], "[step]")
		case strings.HasPrefix(line, "- … ") && strings.HasPrefix(title, "Your task: "): // "- … 4 more (flowctl step ls T-n)"
			n, _ := strconv.Atoi(strings.Fields(line)[2])
			for range n {
				out[title] = append(out[title], "[step]")
			}
		case strings.HasPrefix(line, "- "):
			key, _, _ := strings.Cut(strings.TrimPrefix(line, "- "), " ")
			out[title] = append(out[title], strings.TrimRight(key, ":,"))
		case line == "Steps:":
			out[title] = append(out[title], "Steps:")
		case strings.HasPrefix(line, "Context (version "):
			out[title] = append(out[title], "Context")
		}
	}
	return out
}

// sectionText returns the text of one "## " section.
func sectionText(md, title string) string {
	_, rest, ok := strings.Cut(md, "\n## "+title+"\n")
	if !ok {
		return ""
	}
	text, _, _ := strings.Cut(rest, "\n## ")
	return text
}

// TestEngine_PrimeProperty: over random projects (random tasks, deps,
// moves, claims by the actor and another, contexts small and large,
// steps, notes, approvals, exec records, plans, checkpoints) and random
// budgets from 1 token to thousands, a prime never exceeds its budget (4
// bytes a token, so never more characters either), is the same when asked
// twice, shows exactly its structured parts, and what it says it left out
// is absent and is what matters least.
func TestEngine_PrimeProperty(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		w := newPrimeWorld(rt, filepath.Join(dir, strconv.Itoa(n)))
		defer w.close()
		primeRandomProject(rt, w)
		w.step = 0
		e := w.as("ann")
		budget := rapid.OneOf(rapid.IntRange(1, 40), rapid.IntRange(40, 400), rapid.IntRange(400, 4000), rapid.Just(0)).Draw(rt, "budget")
		in := PrimeInput{Project: "p", Actor: "ann", Session: rapid.SampledFrom([]string{"", "s-ann", "other"}).Draw(rt, "session"), Budget: budget}
		p, err := Prime(e, in)
		if err != nil {
			rt.Fatal(err)
		}
		if budget == 0 && p.Budget != DefaultPrimeBudget {
			rt.Fatalf("budget 0 gave %d, want the default", p.Budget)
		}
		again, err := Prime(e, in)
		if err != nil {
			rt.Fatal(err)
		}
		if a, b := primeMust(json.Marshal(p)).in(rt), primeMust(json.Marshal(again)).in(rt); string(a) != string(b) {
			rt.Fatalf("two primes differ:\n%s\n%s", a, b)
		}
		checkPrime(rt, e, p)
	})
}

// primeRandomProject writes project p through a random series of
// commands by ann and bob. Refused commands (a bad move, a cycle) are
// part of the game; an internal or corruption error fails the test.
func primeRandomProject(t *rapid.T, w *primeWorld) {
	primeMust(w.as("ann").CreateProject(flow.NewProject{Name: "p", Description: primeWords(t, "description")})).in(t)
	tasks, plans, approvals := 0, 0, 0
	task := func(label string) string {
		return projection.ShortID("T", rapid.IntRange(1, max(tasks, 1)).Draw(t, label))
	}
	ops := rapid.IntRange(0, 40).Draw(t, "ops")
	for range ops {
		op := rapid.IntRange(0, 12).Draw(t, "op")
		actor := "ann"
		if op == 3 || op == 7 { // claims and notes by someone else too
			actor = rapid.SampledFrom([]string{"ann", "bob"}).Draw(t, "actor")
		}
		e := w.as(actor)
		var err error
		switch op {
		case 0, 1:
			in := flow.NewTask{Project: "p", Title: primeWords(t, "title"), Priority: rapid.IntRange(0, 5).Draw(t, "priority")}
			if tasks > 0 && rapid.Bool().Draw(t, "dep") {
				in.Deps = []string{task("dep")}
			}
			if plans > 0 && rapid.Bool().Draw(t, "in plan") {
				in.Plan = projection.ShortID("P", rapid.IntRange(1, plans).Draw(t, "plan"))
			}
			if _, err = e.AddTask(in); err == nil {
				tasks++
			}
		case 2:
			_, err = e.MoveTask(flow.Move{Project: "p", ID: task("move"), Force: rapid.Bool().Draw(t, "force"),
				To: rapid.SampledFrom([]string{"todo", "doing", "done", "blocked", "cancelled"}).Draw(t, "to")})
		case 3:
			_, err = e.ClaimTask(flow.Claim{Project: "p", ID: task("claim"), Lease: time.Duration(rapid.IntRange(1, 90).Draw(t, "lease")) * time.Minute})
		case 4:
			size := rapid.SampledFrom([]int{1, 10, 3000}).Draw(t, "context size")
			patch := fmt.Sprintf(`{%q:%q}`, primeWords(t, "key"), strings.Repeat("v", size))
			_, err = e.MergeContext(flow.ContextPatch{Project: "p", ID: task("ctx"), Patch: patch})
		case 5:
			_, err = e.AddStep(flow.NewStep{Project: "p", Task: task("step"), Title: primeWords(t, "step title")})
		case 6:
			id := task("step task") + "." + strconv.Itoa(rapid.IntRange(1, 3).Draw(t, "step"))
			_, err = e.MoveStep(flow.StepMove{Project: "p", ID: id, To: rapid.SampledFrom([]string{"in_progress", "completed", "failed", "skipped"}).Draw(t, "step to"),
				Result: primeWords(t, "result"), Error: "boom"})
		case 7:
			in := flow.NewNote{Project: "p", Kind: rapid.SampledFrom([]string{flow.NoteKindNote, flow.NoteKindMemory}).Draw(t, "kind"), Text: primeWords(t, "note")}
			if tasks > 0 && rapid.Bool().Draw(t, "on task") {
				in.Task = task("note task")
			}
			_, err = e.AddNote(in)
		case 8:
			in := flow.NewApproval{Project: "p", Message: primeWords(t, "message")}
			if tasks > 0 {
				in.Task = task("approval task")
			}
			if _, err = e.RequestApproval(in); err == nil {
				approvals++
			}
		case 9:
			if approvals > 0 {
				_, err = e.As("reviewer", "").DecideApproval(flow.Decision{Project: "p", ID: projection.ShortID("A", rapid.IntRange(1, approvals).Draw(t, "approval")), Grant: rapid.Bool().Draw(t, "grant")})
			}
		case 10:
			ok := rapid.Bool().Draw(t, "success")
			in := flow.NewExec{Project: "p", Command: primeWords(t, "command"), Success: ok, Stdout: capture.String(primeWords(t, "stdout") + "\n- not an item\n## nor a section\n")}
			if !ok {
				in.ExitCode, in.Stderr = 2, capture.String(strings.Repeat("err line\n", rapid.IntRange(1, 20).Draw(t, "stderr lines")))
			}
			if tasks > 0 {
				in.Task = task("exec task")
			}
			_, err = e.RecordExec(in)
		case 11:
			if _, err = e.AddPlan(flow.NewPlan{Project: "p", Title: primeWords(t, "plan title")}); err == nil {
				plans++
			}
			if plans > 0 && rapid.Bool().Draw(t, "close plan") {
				_, err = e.ClosePlan(flow.ClosePlan{Project: "p", ID: projection.ShortID("P", rapid.IntRange(1, plans).Draw(t, "closed plan"))})
			}
		case 12:
			_, err = e.CreateCheckpoint(flow.NewCheckpoint{Project: "p", Label: primeWords(t, "label")})
		}
		if c := flow.ErrorCode(err); c == flow.CodeInternal || c == flow.CodeCorrupt {
			t.Fatalf("command failed with %s: %v", c, err)
		}
	}
}

// primeWords draws a short text of Latin and Hangul words (so characters
// and bytes differ).
func primeWords(t *rapid.T, label string) string {
	return rapid.StringMatching(`[a-z가-힣]{1,8}( [a-z가-힣]{1,8}){0,4}`).Draw(t, label)
}
