package digest

import (
	"cmp"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// primeFull is Prime as it was before it read the status index and the
// digest log index: every task, plan, approval, exec record and
// checkpoint of the project, and a fold of all its events. It is the
// oracle of TestProperty_PrimeEqualsFullFold.
func primeFull(e *flow.Engine, in PrimeInput) (*PrimeDoc, error) {
	if in.Budget == 0 {
		in.Budget = DefaultPrimeBudget
	}
	st := &primeState{in: in, now: e.Now()}
	var (
		tasks       []*projection.Task
		plans       []*projection.Plan
		approvals   []*projection.Approval
		execs       []*projection.Exec
		checkpoints []*projection.Checkpoint
	)
	err := e.Read(func(src *flow.Reader) error {
		st.head = src.Head()
		var err error
		p := in.Project
		if st.project, err = src.Project(p); err != nil {
			return err
		}
		if tasks, err = src.Tasks(p); err != nil {
			return err
		}
		if plans, err = src.Plans(p); err != nil {
			return err
		}
		if approvals, err = src.Approvals(p); err != nil {
			return err
		}
		if execs, err = src.Execs(p); err != nil {
			return err
		}
		checkpoints, err = src.Checkpoints(p)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(execs, func(a, b *projection.Exec) int { return cmp.Compare(a.Seq, b.Seq) })
	st.counts = flow.CountTasks(tasks)
	st.deps, st.execs = map[string]flow.TaskBrief{}, map[string][]*projection.Exec{}
	for _, t := range tasks {
		if in.Actor != "" && t.Claim.Live(st.now) && t.Claim.Actor == in.Actor {
			st.held = append(st.held, t)
		}
	}
	mine := func(t *projection.Task) int {
		if in.Session != "" && t.Claim.Session == in.Session {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(st.held, func(a, b *projection.Task) int { return cmp.Compare(mine(a), mine(b)) })
	for _, h := range st.held {
		for _, d := range h.Deps {
			if i := slices.IndexFunc(tasks, func(x *projection.Task) bool { return x.ID == d }); i >= 0 {
				st.deps[d] = flow.BriefOf(tasks[i])
			}
		}
		var mine []*projection.Exec
		for _, x := range execs {
			if x.Task == h.ID {
				mine = append(mine, x)
			}
		}
		st.execs[h.ID] = mine[max(0, len(mine)-PrimeExecs):]
	}
	st.ready = flow.ReadyTasks(tasks, in.Actor, st.now)
	slices.SortStableFunc(st.ready, func(a, b *projection.Task) int { return cmp.Compare(b.Priority, a.Priority) })
	for _, a := range approvals {
		if a.Status == projection.ApprovalPending {
			st.pending = append(st.pending, a)
		}
	}
	for _, pl := range plans {
		if pl.Status == "closed" {
			continue
		}
		pp := PrimePlan{ID: pl.ID, Title: pl.Title}
		for _, t := range tasks {
			if t.Plan == pl.ID {
				pp.Tasks++
				if t.Status == projection.StatusDone {
					pp.Done++
				}
			}
		}
		st.plans = append(st.plans, pp)
	}
	if st.checkpoints = len(checkpoints); st.checkpoints > 0 {
		st.checkpoint = checkpoints[len(checkpoints)-1]
	}
	folds := map[string]*primeFold{}
	err = e.ProjectEvents(in.Project, st.head, func(ev flow.Event) error {
		st.events++
		n, ok, err := ev.Note()
		if err != nil {
			return err
		}
		if ok && n.Kind == flow.NoteKindMemory {
			st.memory = append(st.memory, n)
		}
		st.recent = append(st.recent, ev)
		if len(st.recent) > PrimeRecentEvents {
			old := st.recent[0]
			f := folds[old.Stream]
			if f == nil {
				f = &primeFold{}
				f.kind, _, _, _ = projection.ParseStream(old.Stream)
				folds[old.Stream] = f
			}
			f.add(old)
			st.recent = slices.Delete(st.recent, 0, 1)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	st.memoryTotal = len(st.memory)
	var all []primeSummary
	for _, f := range folds {
		title, now, _ := subjectNow(st.project, f, func(id string) (string, string, bool, error) {
			switch f.kind {
			case projection.KindTask:
				if i := slices.IndexFunc(tasks, func(t *projection.Task) bool { return t.ID == id }); i >= 0 {
					return tasks[i].Title, tasks[i].Status, true, nil
				}
			case projection.KindPlan:
				if i := slices.IndexFunc(plans, func(p *projection.Plan) bool { return p.ID == id }); i >= 0 {
					return plans[i].Title, plans[i].Status, true, nil
				}
			}
			return "", "", false, nil
		})
		all = append(all, primeSummaryOf(f, title, now))
	}
	slices.SortFunc(all, func(a, b primeSummary) int { return cmp.Compare(b.s.LastSeq, a.s.LastSeq) })
	st.olderStreams, st.olderEvents = len(all), st.events-len(st.recent)
	st.summaries = func(int) ([]primeSummary, error) { return all, nil }
	return st.prime()
}

// TestProperty_PrimeEqualsFullFold: over random projects and budgets,
// Prime, which reads the status and digest indexes and only as much of
// the history as the budget can show, gives the document of the full fold
// of the project (primeFull) byte for byte, and the same parts; of what
// it left out it names the first items of each part and counts the rest
// (PrimeOmission.More), where the full fold names them all. Without the
// digest log index (after a rebuild) it gives the same.
func TestProperty_PrimeEqualsFullFold(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		w := newPrimeWorld(rt, filepath.Join(dir, strconv.Itoa(n)))
		defer w.close()
		primeRandomProject(rt, w)
		randomRollbacks(rt, w.as("ann"))
		w.step = 0
		e := w.as("ann")
		budget := rapid.OneOf(rapid.IntRange(1, 40), rapid.IntRange(40, 400), rapid.IntRange(400, 4000), rapid.Just(0)).Draw(rt, "budget")
		in := PrimeInput{Project: "p", Actor: rapid.SampledFrom([]string{"ann", "bob", ""}).Draw(rt, "actor"),
			Session: rapid.SampledFrom([]string{"", "s-ann", "other"}).Draw(rt, "session"), Budget: budget}
		got, err := Prime(e, in)
		if err != nil {
			rt.Fatal(err)
		}
		want, err := primeFull(e, in)
		if err != nil {
			rt.Fatal(err)
		}
		if rapid.Bool().Draw(rt, "rebuild") { // no digest log index: Prime reads the project's events
			primeMust(e.Rebuild()).in(rt)
			again := primeMust(Prime(e, in)).in(rt)
			if a, b := primeMust(json.Marshal(got)).in(rt), primeMust(json.Marshal(again)).in(rt); string(a) != string(b) {
				rt.Fatalf("after a rebuild:\n%s\nbefore:\n%s", b, a)
			}
		}
		if got.Markdown != want.Markdown {
			rt.Fatalf("markdown differs from the full fold's:\n%s\n--- want ---\n%s", got.Markdown, want.Markdown)
		}
		gotLeft, wantLeft := got.LeftOut, want.LeftOut
		if len(gotLeft) != len(wantLeft) {
			rt.Fatalf("left out %+v, the full fold %+v", gotLeft, wantLeft)
		}
		for i, o := range gotLeft {
			w := wantLeft[i]
			named := w.IDs[:len(o.IDs)] // summaries: the most recently active
			if o.Part == PrimePartMemory {
				named = w.IDs[len(w.IDs)-len(o.IDs):] // the newest
			}
			if o.Part != w.Part || o.Task != w.Task || o.Events != w.Events || w.More != 0 ||
				len(o.IDs)+o.More != len(w.IDs) || !slices.Equal(o.IDs, named) {
				rt.Fatalf("left out %+v, the full fold %+v", o, w)
			}
		}
		got.LeftOut, want.LeftOut = nil, nil
		a, b := primeMust(json.Marshal(got)).in(rt), primeMust(json.Marshal(want)).in(rt)
		if string(a) != string(b) {
			rt.Fatalf("parts differ from the full fold's:\n%s\n%s", a, b)
		}
	})
}
