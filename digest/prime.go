package digest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// Limits of prime.
const (
	DefaultPrimeBudget = 2000    // tokens, when PrimeInput.Budget is 0
	MaxPrimeBudget     = 1 << 20 // tokens
	PrimeCharsPerToken = 4
	PrimeRecentEvents  = 10 // short-term memory: the seeds' N (≈10)
	PrimeExecs         = 3  // exec records shown for a held task

	primeLineRunes   = 300
	primeTitleRunes  = 200
	primeOutputLines = 5
	primeOutputBytes = 400
	primeMinBlock    = 600 // bytes a context or step list may always take
	primeHoldingIDs  = 10  // held task ids named in the header
)

// Parts of a prime, as named in PrimeOmission.Part.
const (
	PrimePartHeldTask   = "held_task"
	PrimePartApprovals  = "pending_approvals"
	PrimePartReady      = "ready_tasks"
	PrimePartPlans      = "plans"
	PrimePartCheckpoint = "checkpoint"
	PrimePartMemory     = "memory_notes"
	PrimePartRecent     = "recent_events"
	PrimePartSummaries  = "summaries"
)

// PrimeInput is the input of Prime.
type PrimeInput struct {
	Project string `json:"project"`
	Actor   string `json:"actor,omitempty"`   // whose claims are "your task"
	Session string `json:"session,omitempty"` // its claims come first
	Budget  int    `json:"budget,omitempty"`  // tokens; 0: DefaultPrimeBudget
}

// PrimeDoc is the digest Prime builds: Markdown is the document; the other fields are the
// items it shows (whole, where the document shortens them) and LeftOut
// what it had no room for. Lists are never nil.
type PrimeDoc struct {
	Markdown         string                 `json:"markdown"`
	Project          string                 `json:"project"`
	Actor            string                 `json:"actor"`
	Session          string                 `json:"session,omitempty"`
	HeadSeq          uint64                 `json:"head_seq"`
	Budget           int                    `json:"budget"` // tokens
	Limit            int                    `json:"limit"`  // bytes: Budget × PrimeCharsPerToken
	Bytes            int                    `json:"bytes"`  // of Markdown; never over Limit
	Clipped          bool                   `json:"clipped"`
	Tasks            flow.TaskCounts        `json:"tasks"`
	Held             []*PrimeTask           `json:"held"`
	PendingApprovals []flow.PendingBrief    `json:"pending_approvals"`
	Ready            []flow.TaskBrief       `json:"ready"`
	Plans            []PrimePlan            `json:"plans"`
	Checkpoint       *projection.Checkpoint `json:"checkpoint"`
	Memory           []flow.Note            `json:"memory"`
	Recent           []ReportEvent          `json:"recent"`
	Summaries        []PrimeSummary         `json:"summaries"`
	LeftOut          []PrimeOmission        `json:"left_out"`
}

// PrimeTask is a task the actor holds (a live claim), as the document
// shows it: Steps and Context are null when it left them out; Steps holds
// the steps shown and StepsMore counts the others; Context is null and
// ContextClipped true when the document shows only its start; Execs are
// the last PrimeExecs records (newest first) with their output cut as
// shown (the head's first lines, no tail).
type PrimeTask struct {
	ID               string             `json:"id"`
	Title            string             `json:"title"`
	Status           string             `json:"status"`
	Plan             string             `json:"plan,omitempty"`
	Priority         int                `json:"priority"`
	Description      string             `json:"description,omitempty"`
	Deps             []flow.TaskBrief   `json:"deps"`
	PendingApprovals []string           `json:"pending_approvals"`
	Claim            *projection.Claim  `json:"claim"`
	Version          uint64             `json:"version"`
	Steps            []projection.Step  `json:"steps"`
	StepsMore        int                `json:"steps_more,omitempty"`
	Context          projection.JSON    `json:"context"`
	ContextClipped   bool               `json:"context_clipped,omitempty"`
	ContextVersion   int                `json:"context_version"`
	Execs            []*projection.Exec `json:"execs"`
}

// PrimePlan is an open plan and how far its tasks are.
type PrimePlan struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Tasks int    `json:"tasks"`
	Done  int    `json:"done"`
}

// PrimeSummary folds the older events of one stream into a line.
type PrimeSummary struct {
	Subject  string `json:"subject"` // T-n, P-n or the project's name
	Title    string `json:"title,omitempty"`
	Summary  string `json:"summary"`
	Events   int    `json:"events"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
}

// PrimeOmission is what the document left out of one part: IDs are task,
// approval, plan, checkpoint and exec ids, "#seq" for events and notes,
// and for a held task also "task", "steps" and "context".
type PrimeOmission struct {
	Part   string   `json:"part"`
	Task   string   `json:"task,omitempty"` // the held task, for held_task
	IDs    []string `json:"ids"`
	Events int      `json:"events,omitempty"` // summaries: the older events they fold
}

// Prime builds the digest an assistant reads at the start of a session,
// the seeds' MemoryContext, of in.Project as seen by in.Actor. Short-term memory is the last PrimeRecentEvents
// events of the project, one line each; long-term memory is every older
// event folded into one summary per stream (task, plan, the project),
// plus the notes of kind memory.
//
// The markdown fits a budget of tokens, counted as PrimeCharsPerToken
// bytes each (so characters too: a character is at least one byte). When
// everything does not fit, whole items are dropped, least important first:
//
//  1. summaries of older history, the least recently active first
//  2. recent events, oldest first
//  3. the last checkpoint
//  4. open plans, the last first
//  5. memory notes, oldest first
//  6. ready tasks, the lowest in the list (lowest priority) first
//  7. pending approvals, newest first
//  8. the held tasks, the last first; of each: its exec results (oldest
//     first), then its context, its steps, and last the task itself
//
// The header (project, actor, head, counts) is never dropped. The last
// line names what was left out; PrimeDoc.LeftOut lists it item by item. Only
// when the budget cannot hold even the header and that line is the
// document cut short (PrimeDoc.Clipped).
//
// Long texts inside an item are shortened rather than dropped: an event,
// note or summary line to primeLineRunes characters, a title to
// primeTitleRunes, a context or step list to a fifth of the budget, an
// exec record's output to primeOutputLines lines.
//
// The result depends only on the file, the input and the engine's clock
// (Options.Now: which claims are live, which approvals expired). Errors:
// flow.ErrInvalid (no project, a budget outside 0..MaxPrimeBudget),
// flow.ErrNotFound (project).
func Prime(e *flow.Engine, in PrimeInput) (*PrimeDoc, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	if in.Budget == 0 {
		in.Budget = DefaultPrimeBudget
	}
	st := &primeState{in: in, now: e.Now(), folds: map[string]*primeFold{}}
	err := e.Read(func(src *flow.Reader) error {
		st.head = src.Head()
		return st.read(src)
	})
	if err != nil {
		return nil, err
	}
	if err := e.ProjectEvents(in.Project, st.head, st.add); err != nil {
		return nil, err
	}
	return st.prime(), nil
}

func (in *PrimeInput) check() error {
	if in.Project == "" {
		return fmt.Errorf("%w: prime needs a project", flow.ErrInvalid)
	}
	if in.Budget < 0 || in.Budget > MaxPrimeBudget {
		return fmt.Errorf("%w: budget %d: give 1 to %d tokens, or 0 for %d", flow.ErrInvalid, in.Budget, MaxPrimeBudget, DefaultPrimeBudget)
	}
	return nil
}

// primeState is what Prime gathered: the projections at one head, and the
// project's events folded into short- and long-term memory.
type primeState struct {
	in          PrimeInput
	now         time.Time
	head        uint64
	project     *projection.Project
	tasks       []*projection.Task
	plans       []*projection.Plan
	approvals   []*projection.Approval
	execs       []*projection.Exec
	checkpoints []*projection.Checkpoint
	recent      []flow.Event          // the last PrimeRecentEvents events
	folds       map[string]*primeFold // older events, by stream
	memory      []flow.Note
	events      int
}

func (st *primeState) read(src *flow.Reader) error {
	var err error
	if st.project, err = src.Project(st.in.Project); err != nil {
		return err
	}
	p := st.in.Project
	if st.tasks, err = src.Tasks(p); err != nil {
		return err
	}
	if st.plans, err = src.Plans(p); err != nil {
		return err
	}
	if st.approvals, err = src.Approvals(p); err != nil {
		return err
	}
	if st.execs, err = src.Execs(p); err != nil {
		return err
	}
	slices.SortStableFunc(st.execs, func(a, b *projection.Exec) int { return cmp.Compare(a.Seq, b.Seq) })
	st.checkpoints, err = src.Checkpoints(p)
	return err
}

// add takes the project's events in seq order: the newest stay in recent,
// the older are folded per stream.
func (st *primeState) add(ev flow.Event) error {
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
		st.fold(st.recent[0])
		st.recent = slices.Delete(st.recent, 0, 1)
	}
	return nil
}

func (st *primeState) fold(ev flow.Event) {
	f := st.folds[ev.Stream]
	if f == nil {
		kind, _, _, _ := projection.ParseStream(ev.Stream)
		f = &primeFold{kind: kind, subject: Subject(ev), first: ev.Seq}
		st.folds[ev.Stream] = f
	}
	f.add(ev)
}

// primeFold counts the older events of one stream.
type primeFold struct {
	kind, subject, title, createdBy string
	counts                          [len(primePhrases)]int
	failed                          int // exec records that did not succeed
	first, last                     uint64
	n                               int
}

// primePhrases say what a count of one event type did, in this order.
var primePhrases = [...]struct{ typ, one, many string }{
	{projection.TypeTaskStatusChanged, "status move", "status moves"},
	{projection.TypeTaskUpdated, "edit", "edits"},
	{projection.TypeTaskDepsChanged, "dependency change", "dependency changes"},
	{projection.TypeTaskClaimed, "claim", "claims"},
	{projection.TypeTaskLeaseRenewed, "lease renewal", "lease renewals"},
	{projection.TypeTaskReleased, "release", "releases"},
	{projection.TypeTaskContextMerged, "context change", "context changes"},
	{projection.TypeStepAdded, "step added", "steps added"},
	{projection.TypeStepStatusChanged, "step move", "step moves"},
	{projection.TypeNoteAdded, "note", "notes"},
	{projection.TypeApprovalRequested, "approval requested", "approvals requested"},
	{projection.TypeApprovalDecided, "approval decided", "approvals decided"},
	{projection.TypeExecRecorded, "exec record", "exec records"},
	{projection.TypeCheckpointCreated, "checkpoint", "checkpoints"},
	{projection.TypeRollbackApplied, "rollback", "rollbacks"},
	{projection.TypePlanClosed, "closing", "closings"},
	{projection.TypeProjectArchived, "archiving", "archivings"},
	{"", "other event", "other events"}, // types this binary does not know
}

func (f *primeFold) add(ev flow.Event) {
	f.n++
	f.last = ev.Seq
	switch ev.Type {
	case projection.TypeTaskCreated, projection.TypePlanCreated, projection.TypeProjectCreated:
		f.createdBy = ev.Actor
		f.setTitle(ev.Raw)
		return
	case projection.TypeTaskUpdated:
		f.setTitle(ev.Raw)
	case projection.TypeExecRecorded:
		var p struct {
			Success bool `msgpack:"success"`
		}
		if msgpack.Unmarshal(ev.Raw, &p) == nil && !p.Success {
			f.failed++
		}
	}
	typ := ev.Type
	if typ == projection.TypeRollbackMarked { // a rollback of the project, on this entity's stream
		typ = projection.TypeRollbackApplied
	}
	i := len(primePhrases) - 1
	for j, ph := range primePhrases[:i] {
		if ph.typ == typ {
			i = j
			break
		}
	}
	f.counts[i]++
}

// setTitle keeps the title a created or updated payload carries.
func (f *primeFold) setTitle(raw []byte) {
	var p struct {
		Title *string `msgpack:"title"`
	}
	if msgpack.Unmarshal(raw, &p) == nil && p.Title != nil {
		f.title = *p.Title
	}
}

// line says what the fold counted: "created by ann, 4 status moves, now
// done; 3 context changes; 2 exec records (1 failed); 12 events #3–#40".
func (f *primeFold) line(now string) string {
	var lead, rest []string
	if f.createdBy != "" {
		lead = append(lead, "created by "+f.createdBy)
	}
	for i, ph := range primePhrases {
		c := f.counts[i]
		if c == 0 {
			continue
		}
		s := plural(c, ph.one, ph.many)
		if ph.typ == projection.TypeExecRecorded && f.failed > 0 {
			s += " (" + strconv.Itoa(f.failed) + " failed)"
		}
		if i == 0 {
			lead = append(lead, s)
		} else {
			rest = append(rest, s)
		}
	}
	if now != "" {
		lead = append(lead, "now "+now)
	}
	span := "#" + strconv.FormatUint(f.first, 10)
	if f.last != f.first {
		span += "–#" + strconv.FormatUint(f.last, 10)
	}
	rest = append(rest, plural(f.n, "event", "events")+" "+span)
	if len(lead) == 0 {
		return strings.Join(rest, "; ")
	}
	return strings.Join(append([]string{strings.Join(lead, ", ")}, rest...), "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// prime lays the gathered state out, fits it to the budget and renders it.
func (st *primeState) prime() *PrimeDoc {
	p := &PrimeDoc{
		Project: st.in.Project, Actor: st.in.Actor, Session: st.in.Session, HeadSeq: st.head,
		Budget: st.in.Budget, Limit: st.in.Budget * PrimeCharsPerToken,
		Held: []*PrimeTask{}, PendingApprovals: []flow.PendingBrief{}, Ready: []flow.TaskBrief{}, Plans: []PrimePlan{},
		Memory: []flow.Note{}, Recent: []ReportEvent{}, Summaries: []PrimeSummary{}, LeftOut: []PrimeOmission{},
	}
	p.Tasks = flow.CountTasks(st.tasks)
	l := &primeLayout{}
	st.layout(l, p.Limit)
	l.fit(p.Limit)
	p.Markdown, p.Clipped = l.render(p.Limit)
	p.Bytes = len(p.Markdown)
	for _, i := range l.display() {
		if b := &l.blocks[i]; !b.dropped && b.keep != nil {
			b.keep(p)
		}
	}
	p.LeftOut = l.omissions()
	return p
}

// layout builds the header and every candidate item: sections in display
// order, and the order in which items are dropped.
func (st *primeState) layout(l *primeLayout, limit int) {
	held := st.held()
	ready := st.ready()
	l.header = st.header(held, len(ready))
	share := max(primeMinBlock, limit/5)
	var heldDrops [][]int
	for _, t := range held {
		heldDrops = append(heldDrops, st.heldTask(l, t, share))
	}
	approvals := st.pendingApprovals(l)
	readyDrops := st.readyTasks(l, ready)
	plans := st.openPlans(l)
	checkpoint := st.lastCheckpoint(l)
	memory := st.memoryNotes(l)
	recent := st.recentEvents(l)
	summaries := st.summaries(l)
	l.order = slices.Concat(reversed(summaries), recent, checkpoint, reversed(plans), memory,
		reversed(readyDrops), reversed(approvals))
	for i := len(heldDrops) - 1; i >= 0; i-- {
		l.order = append(l.order, heldDrops[i]...)
	}
}

func reversed(s []int) []int {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// held returns the tasks the actor holds by a live claim: those of its
// session first, then by id.
func (st *primeState) held() []*projection.Task {
	var out []*projection.Task
	for _, t := range st.tasks {
		if st.in.Actor != "" && t.Claim.Live(st.now) && t.Claim.Actor == st.in.Actor {
			out = append(out, t)
		}
	}
	mine := func(t *projection.Task) int {
		if st.in.Session != "" && t.Claim.Session == st.in.Session {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(out, func(a, b *projection.Task) int { return cmp.Compare(mine(a), mine(b)) })
	return out
}

// ready returns the tasks ready for the actor, highest priority first.
func (st *primeState) ready() []*projection.Task {
	out := flow.ReadyTasks(st.tasks, st.in.Actor, st.now)
	slices.SortStableFunc(out, func(a, b *projection.Task) int { return cmp.Compare(b.Priority, a.Priority) })
	return out
}

func (st *primeState) header(held []*projection.Task, ready int) string {
	var d mdDoc
	p := st.project
	d.line("# Prime: %s\n", p.Name)
	line := "- project: " + p.Name
	if p.Description != "" {
		line += " — " + primeText(p.Description, primeTitleRunes)
	}
	if p.Archived {
		line += " (archived)"
	}
	d.line("%s", line)
	who := "(no actor)"
	if st.in.Actor != "" {
		who = primeText(st.in.Actor, 100)
	}
	if st.in.Session != "" {
		who += " (session " + primeText(st.in.Session, 100) + ")"
	}
	d.line("- for: %s, at seq %d", who, st.head)
	d.line("- holding: %s", holdingLine(held))
	d.line("- tasks: %s", countsLine(st.tasks))
	pending := 0
	for _, a := range st.approvals {
		if a.Status == projection.ApprovalPending {
			pending++
		}
	}
	d.line("- ready: %d · pending approvals: %d · open plans: %d · checkpoints: %d · memory notes: %d · events: %d",
		ready, pending, len(st.openPlanList()), len(st.checkpoints), len(st.memory), st.events)
	return d.String()
}

func holdingLine(held []*projection.Task) string {
	if len(held) == 0 {
		return "no task (no live claim)"
	}
	var ids []string
	for _, t := range held[:min(len(held), primeHoldingIDs)] {
		ids = append(ids, t.ID)
	}
	s := strings.Join(ids, ", ")
	if len(held) > primeHoldingIDs {
		s += fmt.Sprintf(" and %d more", len(held)-primeHoldingIDs)
	}
	return s
}

func countsLine(tasks []*projection.Task) string {
	c := flow.CountTasks(tasks)
	var parts []string
	for _, kv := range []struct {
		n    int
		name string
	}{{c.Todo, "todo"}, {c.Doing, "doing"}, {c.Done, "done"}, {c.Blocked, "blocked"}, {c.Cancelled, "cancelled"}} {
		if kv.n > 0 {
			parts = append(parts, strconv.Itoa(kv.n)+" "+kv.name)
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strconv.Itoa(c.Total) + " (" + strings.Join(parts, ", ") + ")"
}

// primeText makes s one line of at most n characters.
func primeText(s string, n int) string { return mdClip(mdLine(s), n) }

// heldTask adds a held task's section and returns its blocks in drop
// order: exec results oldest first, context, steps, the task.
func (st *primeState) heldTask(l *primeLayout, t *projection.Task, share int) []int {
	pt := &PrimeTask{ID: t.ID, Title: t.Title, Status: t.Status, Plan: t.Plan, Priority: t.Priority,
		Description: t.Description, Deps: st.deps(t), PendingApprovals: slices.Clone(t.PendingApprovals),
		Claim: t.Claim, Version: t.Version, ContextVersion: t.ContextVersion, Execs: []*projection.Exec{}}
	if pt.PendingApprovals == nil {
		pt.PendingApprovals = []string{}
	}
	sec := l.section(fmt.Sprintf("Your task: %s %s", t.ID, primeText(t.Title, primeTitleRunes)))
	var drops []int
	item := func(id, text string, keep func(p *PrimeDoc)) {
		drops = append(drops, l.add(primeBlock{part: PrimePartHeldTask, task: t.ID, id: id, sec: sec, text: text, keep: keep}))
	}
	item("task", st.taskFields(pt), func(p *PrimeDoc) { p.Held = append(p.Held, pt) })
	if len(t.Steps) > 0 {
		text, shown := stepsBlock(t, share)
		item("steps", text, func(*PrimeDoc) { pt.Steps, pt.StepsMore = t.Steps[:shown], len(t.Steps)-shown })
	}
	if t.ContextVersion > 0 {
		text, clipped := contextBlock(t, share)
		item("context", text, func(*PrimeDoc) {
			if pt.ContextClipped = clipped; !clipped {
				pt.Context = t.Context
			}
		})
	}
	execs := st.taskExecs(t.ID)
	for i := len(execs) - 1; i >= 0; i-- { // newest first; it carries the heading and goes last
		x := execs[i]
		item(x.ID, execBlock(x, i == len(execs)-1), func(*PrimeDoc) { pt.Execs = append(pt.Execs, shownExec(x)) })
	}
	slices.Reverse(drops) // drop order: oldest exec first, ..., the task last
	return drops
}

func (st *primeState) deps(t *projection.Task) []flow.TaskBrief {
	out := []flow.TaskBrief{}
	for _, d := range t.Deps {
		if i := slices.IndexFunc(st.tasks, func(x *projection.Task) bool { return x.ID == d }); i >= 0 {
			out = append(out, flow.BriefOf(st.tasks[i]))
		}
	}
	return out
}

func (st *primeState) taskFields(pt *PrimeTask) string {
	var d mdDoc
	fields := []string{"status " + pt.Status, "priority " + strconv.Itoa(pt.Priority)}
	if pt.Plan != "" {
		fields = append(fields, "plan "+pt.Plan)
	}
	claim := "claimed until " + mdProjTime(pt.Claim.LeaseUntil)
	if pt.Claim.Session != "" {
		claim += " (session " + primeText(pt.Claim.Session, 100) + ")"
	}
	d.line("- %s · %s · version %d", strings.Join(fields, " · "), claim, pt.Version)
	if len(pt.Deps) > 0 {
		deps := make([]string, len(pt.Deps))
		for i, b := range pt.Deps {
			deps[i] = b.ID + " (" + b.Status + ")"
		}
		d.line("- depends on: %s", strings.Join(deps, ", "))
	}
	if len(pt.PendingApprovals) > 0 {
		d.line("- waiting for approval: %s", strings.Join(pt.PendingApprovals, ", "))
	}
	if pt.Description != "" {
		d.line("- description: %s", primeText(pt.Description, primeLineRunes))
	}
	return d.String()
}

// stepsBlock lists a task's steps, up to share bytes, and says how many it
// shows.
func stepsBlock(t *projection.Task, share int) (string, int) {
	var d mdDoc
	d.line("\nSteps:\n")
	for i, s := range t.Steps {
		line := stepLine(s)
		if d.Len()+len(line) > share {
			d.line("- … %d more (flowctl step ls %s)", len(t.Steps)-i, t.ID)
			return d.String(), i
		}
		d.WriteString(line)
	}
	return d.String(), len(t.Steps)
}

func stepLine(s projection.Step) string {
	mark := " "
	switch s.Status {
	case projection.StepCompleted:
		mark = "x"
	case projection.StepInProgress:
		mark = "~"
	case projection.StepFailed, projection.StepSkipped:
		mark = "-"
	}
	line := fmt.Sprintf("- [%s] %s %s: %s %d%%", mark, s.ID, primeText(s.Title, primeTitleRunes), s.Status, s.Progress)
	for _, kv := range [][2]string{{"note", s.Note}, {"result", s.Result}, {"error", s.Error}} {
		if kv[1] != "" {
			line += "; " + kv[0] + ": " + primeText(kv[1], primeTitleRunes)
		}
	}
	return line + "\n"
}

// contextBlock shows a task's context as indented JSON, up to share bytes,
// and says whether it cut it.
func contextBlock(t *projection.Task, share int) (string, bool) {
	var d mdDoc
	d.line("\nContext (version %d):\n", t.ContextVersion)
	text := mdJSON(string(t.Context))
	clipped := len(text) > share
	if clipped {
		cut := strings.ToValidUTF8(text[:share], "")
		if i := strings.LastIndexByte(cut, '\n'); i > 0 {
			cut = cut[:i]
		}
		text = fmt.Sprintf("%s\n… (%d of %d bytes; flowctl ctx get %s)", cut, len(cut), len(text), t.ID)
	}
	d.code("json", text)
	return d.String(), clipped
}

// taskExecs returns the last PrimeExecs exec records of a task, oldest
// first.
func (st *primeState) taskExecs(task string) []*projection.Exec {
	var out []*projection.Exec
	for _, x := range st.execs {
		if x.Task == task {
			out = append(out, x)
		}
	}
	return out[max(0, len(out)-PrimeExecs):]
}

func execBlock(x *projection.Exec, heading bool) string {
	var d mdDoc
	if heading {
		d.line("\nLast exec records:")
	}
	d.line("\n- %s %s: exit %d, %s, %s, %s", x.ID, primeText(execLabel(&x.ExecRecorded), primeTitleRunes),
		x.ExitCode, mdOK(x.Success), mdMS(x.ElapsedMS), mdProjTime(x.CreatedAt))
	name, out := "stdout", x.Stdout
	if (!x.Success && x.Stderr.Head != "") || out.Head == "" {
		name, out = "stderr", x.Stderr
	}
	if out.Head != "" {
		d.line("\n%s (%d bytes):\n", name, out.Bytes)
		d.code("", primeHead(out.Head))
	}
	return d.String()
}

// shownExec is x with its code and output cut as the document shows them.
func shownExec(x *projection.Exec) *projection.Exec {
	c := *x
	c.Code = primeHead(c.Code)
	c.Stdout.Head, c.Stdout.Tail = primeHead(c.Stdout.Head), ""
	c.Stderr.Head, c.Stderr.Tail = primeHead(c.Stderr.Head), ""
	return &c
}

// primeHead keeps the first lines of an output.
func primeHead(s string) string {
	lines := strings.SplitAfter(s, "\n")
	kept := strings.Join(lines[:min(len(lines), primeOutputLines)], "")
	if len(kept) > primeOutputBytes {
		kept = strings.ToValidUTF8(kept[:primeOutputBytes], "")
	}
	if len(kept) < len(s) {
		kept = strings.TrimRight(kept, "\n") + "\n…"
	}
	return kept
}

// pendingApprovals adds the pending approvals, in id order.
func (st *primeState) pendingApprovals(l *primeLayout) []int {
	sec := l.section("Pending approvals")
	var out []int
	for _, a := range st.approvals {
		if a.Status != projection.ApprovalPending {
			continue
		}
		where := ""
		if a.Step != "" {
			where = " on " + a.Step
		} else if a.Task != "" {
			where = " on " + a.Task
		}
		text := fmt.Sprintf("- %s%s: %s — requested by %s %s", a.ID, where, primeText(a.Message, primeTitleRunes),
			primeText(a.RequestedBy, 100), mdProjTime(a.CreatedAt))
		if flow.ApprovalExpired(a, st.now) {
			text += " (expired)"
		} else if !a.Expires.IsZero() {
			text += ", expires " + mdProjTime(a.Expires)
		}
		brief := flow.PendingBrief{ID: a.ID, Task: a.Task, Step: a.Step, Message: a.Message,
			RequestedBy: a.RequestedBy, RequestedAt: a.CreatedAt, Expires: a.Expires}
		out = append(out, l.add(primeBlock{part: PrimePartApprovals, id: a.ID, sec: sec, text: text + "\n",
			keep: func(p *PrimeDoc) { p.PendingApprovals = append(p.PendingApprovals, brief) }}))
	}
	return out
}

func (st *primeState) readyTasks(l *primeLayout, ready []*projection.Task) []int {
	sec := l.section("Ready to start")
	out := make([]int, len(ready))
	for i, t := range ready {
		text := fmt.Sprintf("- %s %s (priority %d", t.ID, primeText(t.Title, primeTitleRunes), t.Priority)
		if t.Plan != "" {
			text += ", plan " + t.Plan
		}
		if len(t.Tags) > 0 {
			text += ", tags " + primeText(strings.Join(t.Tags, ", "), primeTitleRunes)
		}
		b := flow.BriefOf(t)
		out[i] = l.add(primeBlock{part: PrimePartReady, id: t.ID, sec: sec, text: text + ")\n",
			keep: func(p *PrimeDoc) { p.Ready = append(p.Ready, b) }})
	}
	return out
}

func (st *primeState) openPlanList() []*projection.Plan {
	return keepIf(st.plans, func(p *projection.Plan) bool { return p.Status != "closed" })
}

func (st *primeState) openPlans(l *primeLayout) []int {
	sec := l.section("Open plans")
	var out []int
	for _, pl := range st.openPlanList() {
		pp := PrimePlan{ID: pl.ID, Title: pl.Title}
		for _, t := range st.tasks {
			if t.Plan == pl.ID {
				pp.Tasks++
				if t.Status == projection.StatusDone {
					pp.Done++
				}
			}
		}
		text := fmt.Sprintf("- %s %s: %d of %d tasks done\n", pl.ID, primeText(pl.Title, primeTitleRunes), pp.Done, pp.Tasks)
		out = append(out, l.add(primeBlock{part: PrimePartPlans, id: pl.ID, sec: sec, text: text,
			keep: func(p *PrimeDoc) { p.Plans = append(p.Plans, pp) }}))
	}
	return out
}

func (st *primeState) lastCheckpoint(l *primeLayout) []int {
	if len(st.checkpoints) == 0 {
		return nil
	}
	c := st.checkpoints[len(st.checkpoints)-1]
	sec := l.section("Last checkpoint")
	text := "- " + c.ID
	if c.Label != "" {
		text += " " + strconv.Quote(primeText(c.Label, primeTitleRunes))
	}
	text += fmt.Sprintf(" at seq %d, by %s %s", c.AtSeq, primeText(c.CreatedBy, 100), mdProjTime(c.CreatedAt))
	if c.Task != "" {
		text += ", task " + c.Task
	}
	if c.GitHead != "" {
		text += ", git " + primeText(c.GitHead, 64)
	}
	return []int{l.add(primeBlock{part: PrimePartCheckpoint, id: c.ID, sec: sec, text: text + "\n",
		keep: func(p *PrimeDoc) { p.Checkpoint = c }})}
}

func (st *primeState) memoryNotes(l *primeLayout) []int {
	sec := l.section("Long-term memory")
	out := make([]int, len(st.memory))
	for i, n := range st.memory {
		on := ""
		if n.Task != "" {
			on = " on " + n.Task
		}
		text := fmt.Sprintf("- #%d%s, %s %s: %s\n", n.Seq, on, primeText(n.Actor, 100), mdTime(n.Time), primeText(n.Text, primeLineRunes))
		out[i] = l.add(primeBlock{part: PrimePartMemory, id: "#" + strconv.FormatUint(n.Seq, 10), sec: sec, text: text,
			keep: func(p *PrimeDoc) { p.Memory = append(p.Memory, n) }})
	}
	return out
}

func (st *primeState) recentEvents(l *primeLayout) []int {
	sec := l.section("Recent events (short-term memory)")
	out := make([]int, len(st.recent))
	for i, ev := range st.recent {
		re := ReportEvent{Seq: ev.Seq, Time: ev.Time, Actor: ev.Actor, Type: ev.Type,
			Subject: Subject(ev), Summary: primeText(Summary(ev), primeLineRunes)}
		text := fmt.Sprintf("- #%d %s %s · %s · %s", re.Seq, mdTime(re.Time), primeText(re.Actor, 100),
			primeText(re.Subject, 100), primeText(re.Type, 100))
		if re.Summary != "" {
			text += ": " + re.Summary
		}
		out[i] = l.add(primeBlock{part: PrimePartRecent, id: "#" + strconv.FormatUint(ev.Seq, 10), sec: sec, text: text + "\n",
			keep: func(p *PrimeDoc) { p.Recent = append(p.Recent, re) }})
	}
	return out
}

// summaries adds one line per stream with older events, the most
// recently active first.
func (st *primeState) summaries(l *primeLayout) []int {
	folds := make([]*primeFold, 0, len(st.folds))
	for _, f := range st.folds {
		folds = append(folds, f)
	}
	slices.SortFunc(folds, func(a, b *primeFold) int { return cmp.Compare(b.last, a.last) })
	sec := l.section("Older history (long-term memory)")
	out := make([]int, len(folds))
	for i, f := range folds {
		title, now := st.subjectNow(f)
		s := PrimeSummary{Subject: f.subject, Title: title, Summary: f.line(now), Events: f.n, FirstSeq: f.first, LastSeq: f.last}
		text := "- " + primeText(s.Subject, 100)
		if title != "" {
			text += " " + primeText(title, primeTitleRunes)
		}
		text += ": " + primeText(s.Summary, primeLineRunes) + "\n"
		out[i] = l.add(primeBlock{part: PrimePartSummaries, id: f.subject, sec: sec, text: text, events: f.n,
			keep: func(p *PrimeDoc) { p.Summaries = append(p.Summaries, s) }})
	}
	return out
}

// subjectNow returns a summary's title (the entity's current one, else
// the last its events named) and its status now.
func (st *primeState) subjectNow(f *primeFold) (title, now string) {
	switch {
	case f.kind == projection.KindProject:
		if st.project.Archived {
			return "(project)", "archived"
		}
		return "(project)", ""
	case f.kind == projection.KindTask:
		if i := slices.IndexFunc(st.tasks, func(t *projection.Task) bool { return t.ID == f.subject }); i >= 0 {
			return st.tasks[i].Title, st.tasks[i].Status
		}
	case f.kind == projection.KindPlan:
		if i := slices.IndexFunc(st.plans, func(p *projection.Plan) bool { return p.ID == f.subject }); i >= 0 {
			return st.plans[i].Title, st.plans[i].Status
		}
	}
	return f.title, "removed"
}

// primeLayout holds the candidate items of a prime and fits them.
type primeLayout struct {
	header   string
	sections []primeSection
	groups   []primeGroup
	blocks   []primeBlock
	order    []int // block indices in drop order
	shown    []int // block indices in display order
}

type primeSection struct {
	title string // rendered heading
	kept  int    // blocks of it not dropped
}

// primeGroup is what one part (of one held task) had dropped so far.
type primeGroup struct {
	part, task string
	dropped    []string // ids
	events     int
}

// primeBlock is one item of the document.
type primeBlock struct {
	part, task, id string
	sec, group     int
	text           string
	events         int
	keep           func(p *PrimeDoc) // adds the item to the structured parts
	dropped        bool
}

func (l *primeLayout) section(title string) int {
	l.sections = append(l.sections, primeSection{title: "\n## " + title + "\n\n"})
	return len(l.sections) - 1
}

// add adds a block to its section and group; blocks are shown in the
// order they are added within a section, sections in the order they were
// made.
func (l *primeLayout) add(b primeBlock) int {
	b.group = slices.IndexFunc(l.groups, func(g primeGroup) bool { return g.part == b.part && g.task == b.task })
	if b.group < 0 {
		l.groups = append(l.groups, primeGroup{part: b.part, task: b.task})
		b.group = len(l.groups) - 1
	}
	l.blocks = append(l.blocks, b)
	l.sections[b.sec].kept++
	return len(l.blocks) - 1
}

// display returns block indices in display order: by section, then in
// the order they were added.
func (l *primeLayout) display() []int {
	if l.shown != nil {
		return l.shown
	}
	l.shown = make([]int, len(l.blocks))
	for i := range l.shown {
		l.shown[i] = i
	}
	slices.SortStableFunc(l.shown, func(a, b int) int { return cmp.Compare(l.blocks[a].sec, l.blocks[b].sec) })
	return l.shown
}

// fit drops blocks in drop order until the document fits limit bytes.
func (l *primeLayout) fit(limit int) {
	body := len(l.header)
	for _, s := range l.sections {
		if s.kept > 0 {
			body += len(s.title)
		}
	}
	for _, b := range l.blocks {
		body += len(b.text)
	}
	for _, i := range l.order {
		if body+len(l.leftOutLine()) <= limit {
			return
		}
		b := &l.blocks[i]
		b.dropped = true
		g := &l.groups[b.group]
		g.dropped, g.events = append(g.dropped, b.id), g.events+b.events
		body -= len(b.text)
		s := &l.sections[b.sec]
		if s.kept--; s.kept == 0 {
			body -= len(s.title)
		}
	}
}

// render writes the document; past limit (only when even the header and
// the left-out line do not fit) it is cut short.
func (l *primeLayout) render(limit int) (string, bool) {
	var b strings.Builder
	b.WriteString(l.header)
	idx := l.display()
	for s, sec := range l.sections {
		if sec.kept == 0 {
			continue
		}
		b.WriteString(sec.title)
		for _, i := range idx {
			if blk := &l.blocks[i]; blk.sec == s && !blk.dropped {
				b.WriteString(blk.text)
			}
		}
	}
	b.WriteString(l.leftOutLine())
	md := b.String()
	if len(md) <= limit {
		return md, false
	}
	return clipBytes(md, limit), true
}

// clipBytes cuts s to at most n bytes at a character boundary, ending in
// "…" when there is room for it.
func clipBytes(s string, n int) string {
	const mark = "…"
	if n < len(mark) {
		return strings.ToValidUTF8(s[:n], "")
	}
	return strings.ToValidUTF8(s[:n-len(mark)], "") + mark
}

// omissions lists the dropped blocks by part, in display order.
func (l *primeLayout) omissions() []PrimeOmission {
	out := []PrimeOmission{}
	for _, i := range l.display() {
		b := &l.blocks[i]
		if !b.dropped {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Part == b.part && out[n-1].Task == b.task {
			out[n-1].IDs = append(out[n-1].IDs, b.id)
			out[n-1].Events += b.events
			continue
		}
		out = append(out, PrimeOmission{Part: b.part, Task: b.task, IDs: []string{b.id}, Events: b.events})
	}
	return out
}

// leftOutLine is the document's last line, naming what was left out; ""
// when nothing was.
func (l *primeLayout) leftOutLine() string {
	var phrases []string
	for _, g := range l.groups {
		if len(g.dropped) > 0 {
			phrases = append(phrases, g.phrase())
		}
	}
	if len(phrases) == 0 {
		return ""
	}
	return "\n_left out: " + strings.Join(phrases, ", ") + "_\n"
}

func (g *primeGroup) phrase() string {
	n := len(g.dropped)
	switch g.part {
	case PrimePartHeldTask:
		return g.heldPhrase()
	case PrimePartApprovals:
		return plural(n, "pending approval", "pending approvals")
	case PrimePartReady:
		return plural(n, "ready task", "ready tasks")
	case PrimePartPlans:
		return plural(n, "open plan", "open plans")
	case PrimePartCheckpoint:
		return "the last checkpoint"
	case PrimePartMemory:
		return plural(n, "memory note", "memory notes")
	case PrimePartRecent:
		return plural(n, "recent event", "recent events")
	}
	return plural(n, "summary", "summaries") + " of " + plural(g.events, "older event", "older events")
}

// heldPhrase names what a held task lost: "your task T-3" when all of it,
// else "from T-3: 2 exec results, context, steps".
func (g *primeGroup) heldPhrase() string {
	if slices.Contains(g.dropped, "task") {
		return "your task " + g.task
	}
	var parts []string
	execs := 0
	for _, id := range g.dropped {
		if id == "steps" || id == "context" {
			parts = append(parts, id)
		} else {
			execs++
		}
	}
	if execs > 0 {
		parts = append([]string{plural(execs, "exec result", "exec results")}, parts...)
	}
	return "from " + g.task + ": " + strings.Join(parts, ", ")
}
