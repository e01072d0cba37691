package digest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
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
	Parent           string             `json:"parent,omitempty"`
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
	// More counts the items left out that IDs does not name: summaries of
	// streams and memory notes past what the budget could show, which
	// Prime does not read. They are the least recently active streams
	// (the last summaries in the document's order) and the oldest memory
	// notes (the first).
	More int `json:"more,omitempty"`
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
	var doc *PrimeDoc
	err := e.Read(func(src *flow.Reader) error {
		st := &primeState{in: in, now: e.Now(), head: src.Head()}
		if err := st.read(src); err != nil {
			return err
		}
		var err error
		doc, err = st.prime()
		return err
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
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

// primeState is what Prime gathered at one head: the open work from the
// status index, the project's last events, and the long-term memory read
// as far as the budget can show it.
type primeState struct {
	in          PrimeInput
	now         time.Time
	head        uint64
	project     *projection.Project
	counts      flow.TaskCounts
	held        []*projection.Task            // live claims of the actor: its session's first, then by id
	ready       []*projection.Task            // highest priority first
	deps        map[string]flow.TaskBrief     // the dependencies of the held tasks
	execs       map[string][]*projection.Exec // a held task's last PrimeExecs records, oldest first
	pending     []*projection.Approval        // by id
	plans       []PrimePlan                   // open plans, by id
	checkpoint  *projection.Checkpoint        // the last
	checkpoints int
	recent      []flow.Event // the last PrimeRecentEvents events, oldest first
	events      int          // the project's events
	// memory are the newest notes of kind memory (oldest first), as many
	// as the budget could show of memoryTotal.
	memory      []flow.Note
	memoryTotal int
	// summaries returns the folds of the streams with older events, the
	// most recently active first, until their lines take more than room
	// bytes; olderStreams and olderEvents count all of them.
	summaries                 func(room int) ([]primeSummary, error)
	olderStreams, olderEvents int
}

// primeSummary is a stream's fold and what the document says of it.
type primeSummary struct {
	s    PrimeSummary
	text string
}

// read gathers what the document can show: nothing grows with the
// project's history but what the budget bounds.
func (st *primeState) read(src *flow.Reader) error {
	p := st.in.Project
	var err error
	if st.project, err = src.Project(p); err != nil {
		return err
	}
	if st.counts, err = src.TaskCounts(p); err != nil {
		return err
	}
	if err := st.readHeld(src); err != nil {
		return err
	}
	if st.ready, err = src.ReadyTasks(p, st.in.Actor, st.now); err != nil {
		return err
	}
	slices.SortStableFunc(st.ready, flow.ReadyOrder) // as ready lists them
	ids, err := src.ApprovalIDs(p, projection.ApprovalPending)
	if err != nil {
		return err
	}
	for _, id := range ids {
		a, err := src.Approval(p, id)
		if err != nil {
			return err
		}
		st.pending = append(st.pending, a)
	}
	if err := st.readPlans(src); err != nil {
		return err
	}
	checkpoints, err := src.Checkpoints(p)
	if err != nil {
		return err
	}
	if st.checkpoints = len(checkpoints); st.checkpoints > 0 {
		st.checkpoint = checkpoints[len(checkpoints)-1]
	}
	return st.readLog(src)
}

// readHeld reads the tasks the actor holds by a live claim, their
// dependencies and their last exec records.
func (st *primeState) readHeld(src *flow.Reader) error {
	p := st.in.Project
	st.deps, st.execs = map[string]flow.TaskBrief{}, map[string][]*projection.Exec{}
	if st.in.Actor == "" {
		return nil
	}
	ids, err := src.ClaimedTaskIDs(p, st.now)
	if err != nil {
		return err
	}
	for _, id := range ids {
		t, err := src.Task(p, id)
		if err != nil {
			return err
		}
		if !t.Claim.Live(st.now) || t.Claim.Actor != st.in.Actor {
			continue
		}
		st.held = append(st.held, t)
		for _, d := range t.Deps {
			dt, err := src.Task(p, d)
			switch {
			case errors.Is(err, flow.ErrNotFound):
				continue
			case err != nil:
				return err
			}
			st.deps[d] = flow.BriefOf(dt)
		}
		if st.execs[id], err = lastExecs(src, p, id); err != nil {
			return err
		}
	}
	mine := func(t *projection.Task) int {
		if st.in.Session != "" && t.Claim.Session == st.in.Session {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(st.held, func(a, b *projection.Task) int { return cmp.Compare(mine(a), mine(b)) })
	return nil
}

// lastExecs returns the last PrimeExecs exec records of a task, oldest
// first: those its stream recorded (see taskStream).
func lastExecs(src *flow.Reader, project, task string) ([]*projection.Exec, error) {
	_, named, err := taskStream(src, project, task)
	if err != nil {
		return nil, err
	}
	execs, err := namedEntities(named[projection.TypeExecRecorded], func(x string) (*projection.Exec, error) {
		return src.Exec(project, x)
	}, func(x *projection.Exec) bool { return x.Task == task })
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(execs, func(a, b *projection.Exec) int { return cmp.Compare(a.Seq, b.Seq) })
	return execs[max(0, len(execs)-PrimeExecs):], nil
}

// readPlans reads the open plans and their task counts.
func (st *primeState) readPlans(src *flow.Reader) error {
	p := st.in.Project
	counts, err := src.PlanCounts(p)
	if err != nil {
		return err
	}
	var ids []string
	for status := range counts {
		if status != "closed" {
			more, err := src.PlanIDs(p, status)
			if err != nil {
				return err
			}
			ids = append(ids, more...)
		}
	}
	slices.SortFunc(ids, projection.CompareIDs)
	for _, id := range ids {
		pl, err := src.Plan(p, id)
		if err != nil {
			return err
		}
		pp := PrimePlan{ID: pl.ID, Title: pl.Title}
		if pp.Tasks, pp.Done, err = src.PlanCount(p, id); err != nil {
			return err
		}
		st.plans = append(st.plans, pp)
	}
	return nil
}

// readLog reads the project's last events, its newest memory notes (as
// many as the budget could show) and the counts of what is older, and
// sets up the folds of older streams.
func (st *primeState) readLog(src *flow.Reader) error {
	p := st.in.Project
	room := st.in.Budget * PrimeCharsPerToken
	var memErr error
	log, err := src.ProjectLog(p, func(seq uint64) error {
		ev, err := src.EventAt(seq)
		if err != nil {
			memErr = err
			return flow.ErrStop
		}
		n, ok, err := ev.Note()
		if err != nil || !ok {
			memErr = cmp.Or(err, error(&store.CorruptionError{Seq: seq, Reason: "the digest index lists it as a memory note (run 'flowctl rebuild')"}))
			return flow.ErrStop
		}
		st.memory = append(st.memory, n)
		if room -= len(memoryText(n)); room < 0 {
			return flow.ErrStop
		}
		return nil
	})
	if err = cmp.Or(err, memErr); err != nil {
		return err
	}
	slices.Reverse(st.memory)
	st.events, st.memoryTotal = log.Events, log.Memory
	err = src.ProjectEventsBack(p, st.head, func(ev flow.Event) error {
		st.recent = append(st.recent, ev)
		if len(st.recent) == PrimeRecentEvents {
			return flow.ErrStop
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Reverse(st.recent)
	st.olderStreams, st.olderEvents = log.Streams, log.Events-len(st.recent)
	for _, ev := range st.recent {
		if ev.Version == 1 { // the stream's first event: it has no older one
			st.olderStreams--
		}
	}
	cutoff := st.head
	if len(st.recent) > 0 {
		cutoff = st.recent[0].Seq - 1
	}
	if st.olderEvents == 0 {
		cutoff = 0
	}
	st.summaries = func(room int) ([]primeSummary, error) { return st.foldStreams(src, cutoff, room) }
	return nil
}

// foldStreams folds the streams with events up to cutoff, the most
// recently active first, each from its own stream, until their lines take
// more than room bytes.
func (st *primeState) foldStreams(src *flow.Reader, cutoff uint64, room int) ([]primeSummary, error) {
	var out []primeSummary
	seen := map[string]bool{}
	var ferr error
	err := src.ProjectEventsBack(st.in.Project, cutoff, func(ev flow.Event) error {
		if seen[ev.Stream] {
			return nil
		}
		seen[ev.Stream] = true
		f := &primeFold{}
		ferr = src.StreamEvents(ev.Stream, func(sev flow.Event) error {
			if sev.Seq > cutoff {
				return flow.ErrStop
			}
			if sev.Project == st.in.Project {
				f.add(sev)
			}
			return nil
		})
		f.kind, _, _, _ = projection.ParseStream(ev.Stream)
		if ferr != nil {
			return flow.ErrStop
		}
		title, now, err := subjectNow(st.project, f, func(id string) (string, string, bool, error) {
			return entityNow(src, st.in.Project, f.kind, id)
		})
		if err != nil {
			ferr = err
			return flow.ErrStop
		}
		sum := primeSummaryOf(f, title, now)
		out = append(out, sum)
		if room -= len(sum.text); room < 0 || len(out) == st.olderStreams {
			return flow.ErrStop
		}
		return nil
	})
	return out, cmp.Or(err, ferr)
}

// entityNow returns the title and status of the task or plan id now;
// ok is false when it is gone.
func entityNow(src *flow.Reader, project, kind, id string) (title, status string, ok bool, err error) {
	switch kind {
	case projection.KindTask:
		t, err := src.Task(project, id)
		if errors.Is(err, flow.ErrNotFound) {
			return "", "", false, nil
		}
		if err != nil {
			return "", "", false, err
		}
		return t.Title, t.Status, true, nil
	case projection.KindPlan:
		pl, err := src.Plan(project, id)
		if errors.Is(err, flow.ErrNotFound) {
			return "", "", false, nil
		}
		if err != nil {
			return "", "", false, err
		}
		return pl.Title, pl.Status, true, nil
	}
	return "", "", false, nil
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
	if f.n == 0 {
		f.subject, f.first = Subject(ev), ev.Seq
	}
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
func (st *primeState) prime() (*PrimeDoc, error) {
	p := &PrimeDoc{
		Project: st.in.Project, Actor: st.in.Actor, Session: st.in.Session, HeadSeq: st.head,
		Budget: st.in.Budget, Limit: st.in.Budget * PrimeCharsPerToken,
		Held: []*PrimeTask{}, PendingApprovals: []flow.PendingBrief{}, Ready: []flow.TaskBrief{}, Plans: []PrimePlan{},
		Memory: []flow.Note{}, Recent: []ReportEvent{}, Summaries: []PrimeSummary{}, LeftOut: []PrimeOmission{},
	}
	p.Tasks = st.counts
	l := &primeLayout{}
	if err := st.layout(l, p.Limit); err != nil {
		return nil, err
	}
	l.fit(p.Limit)
	p.Markdown, p.Clipped = l.render(p.Limit)
	p.Bytes = len(p.Markdown)
	for _, i := range l.display() {
		if b := &l.blocks[i]; !b.dropped && b.keep != nil {
			b.keep(p)
		}
	}
	p.LeftOut = l.omissions()
	return p, nil
}

// layout builds the header and every candidate item: sections in display
// order, and the order in which items are dropped.
func (st *primeState) layout(l *primeLayout, limit int) error {
	held := st.held
	ready := st.ready
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
	summaries, err := st.summaryLines(l, limit)
	if err != nil {
		return err
	}
	l.order = slices.Concat(reversed(summaries), recent, checkpoint, reversed(plans), memory,
		reversed(readyDrops), reversed(approvals))
	for i := len(heldDrops) - 1; i >= 0; i-- {
		l.order = append(l.order, heldDrops[i]...)
	}
	return nil
}

func reversed(s []int) []int {
	out := slices.Clone(s)
	slices.Reverse(out)
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
	d.line("- tasks: %s", countsLine(st.counts))
	d.line("- ready: %d · pending approvals: %d · open plans: %d · checkpoints: %d · memory notes: %d · events: %d",
		ready, len(st.pending), len(st.plans), st.checkpoints, st.memoryTotal, st.events)
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

func countsLine(c flow.TaskCounts) string {
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
	pt := &PrimeTask{ID: t.ID, Title: t.Title, Status: t.Status, Plan: t.Plan, Priority: t.Priority, Parent: t.Parent,
		Description: t.Description, Deps: st.taskDeps(t), PendingApprovals: slices.Clone(t.PendingApprovals),
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
	execs := st.execs[t.ID]
	for i := len(execs) - 1; i >= 0; i-- { // newest first; it carries the heading and goes last
		x := execs[i]
		item(x.ID, execBlock(x, i == len(execs)-1), func(*PrimeDoc) { pt.Execs = append(pt.Execs, shownExec(x)) })
	}
	slices.Reverse(drops) // drop order: oldest exec first, ..., the task last
	return drops
}

func (st *primeState) taskDeps(t *projection.Task) []flow.TaskBrief {
	out := []flow.TaskBrief{}
	for _, d := range t.Deps {
		if b, ok := st.deps[d]; ok {
			out = append(out, b)
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
	if pt.Parent != "" {
		fields = append(fields, "subtask of "+pt.Parent)
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
	for _, a := range st.pending {
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

func (st *primeState) openPlans(l *primeLayout) []int {
	sec := l.section("Open plans")
	var out []int
	for _, pp := range st.plans {
		text := fmt.Sprintf("- %s %s: %d of %d tasks done\n", pp.ID, primeText(pp.Title, primeTitleRunes), pp.Done, pp.Tasks)
		out = append(out, l.add(primeBlock{part: PrimePartPlans, id: pp.ID, sec: sec, text: text,
			keep: func(p *PrimeDoc) { p.Plans = append(p.Plans, pp) }}))
	}
	return out
}

func (st *primeState) lastCheckpoint(l *primeLayout) []int {
	c := st.checkpoint
	if c == nil {
		return nil
	}
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
		out[i] = l.add(primeBlock{part: PrimePartMemory, id: "#" + strconv.FormatUint(n.Seq, 10), sec: sec, text: memoryText(n),
			keep: func(p *PrimeDoc) { p.Memory = append(p.Memory, n) }})
	}
	if more := st.memoryTotal - len(st.memory); more > 0 {
		l.more(PrimePartMemory, more, 0)
	}
	return out
}

// memoryText is a memory note's line.
func memoryText(n flow.Note) string {
	on := ""
	if n.Task != "" {
		on = " on " + n.Task
	}
	return fmt.Sprintf("- #%d%s, %s %s: %s\n", n.Seq, on, primeText(n.Actor, 100), mdTime(n.Time), primeText(n.Text, primeLineRunes))
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

// summaryLines adds one line per stream with older events, the most
// recently active first: as many as could fit in what the document has
// left (the rest are dropped first anyway), and counts the others.
func (st *primeState) summaryLines(l *primeLayout, limit int) ([]int, error) {
	sec := l.section("Older history (long-term memory)")
	if st.summaries == nil || st.olderStreams == 0 {
		return nil, nil
	}
	sums, err := st.summaries(limit - l.size() - len(l.sections[sec].title))
	if err != nil {
		return nil, err
	}
	out := make([]int, len(sums))
	events := 0
	for i, sum := range sums {
		s := sum.s
		events += s.Events
		out[i] = l.add(primeBlock{part: PrimePartSummaries, id: s.Subject, sec: sec, text: sum.text, events: s.Events,
			keep: func(p *PrimeDoc) { p.Summaries = append(p.Summaries, s) }})
	}
	if more := st.olderStreams - len(sums); more > 0 {
		l.more(PrimePartSummaries, more, st.olderEvents-events)
	}
	return out, nil
}

// primeSummaryOf is what the document says of a stream's fold.
func primeSummaryOf(f *primeFold, title, now string) primeSummary {
	s := PrimeSummary{Subject: f.subject, Title: title, Summary: f.line(now), Events: f.n, FirstSeq: f.first, LastSeq: f.last}
	text := "- " + primeText(s.Subject, 100)
	if title != "" {
		text += " " + primeText(title, primeTitleRunes)
	}
	text += ": " + primeText(s.Summary, primeLineRunes) + "\n"
	return primeSummary{s: s, text: text}
}

// subjectNow returns a summary's title (the entity's current one, else
// the last its events named) and its status now; lookup returns a task's
// or plan's title and status, ok false when it is gone.
func subjectNow(project *projection.Project, f *primeFold, lookup func(id string) (title, status string, ok bool, err error)) (string, string, error) {
	switch f.kind {
	case projection.KindProject:
		if project.Archived {
			return "(project)", "archived", nil
		}
		return "(project)", "", nil
	case projection.KindTask, projection.KindPlan:
		title, status, ok, err := lookup(f.subject)
		if err != nil || ok {
			return title, status, err
		}
	}
	return f.title, "removed", nil
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
// More counts the items of the part that were never candidates (a
// summary or memory note past what the budget could show), and
// moreEvents the events of those summaries: they are always left out.
type primeGroup struct {
	part, task string
	dropped    []string // ids
	events     int
	more       int
	moreEvents int
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
	b.group = l.group(b.part, b.task)
	l.blocks = append(l.blocks, b)
	l.sections[b.sec].kept++
	return len(l.blocks) - 1
}

// more notes n more items of part that are left out, folding events
// events (summaries), which the layout has no block of.
func (l *primeLayout) more(part string, n, events int) {
	g := l.group(part, "")
	l.groups[g].more, l.groups[g].moreEvents = n, events
}

func (l *primeLayout) group(part, task string) int {
	g := slices.IndexFunc(l.groups, func(g primeGroup) bool { return g.part == part && g.task == task })
	if g < 0 {
		l.groups = append(l.groups, primeGroup{part: part, task: task})
		g = len(l.groups) - 1
	}
	return g
}

// size is the length of the document with every block added so far and
// no left-out line.
func (l *primeLayout) size() int {
	n := len(l.header)
	for _, s := range l.sections {
		if s.kept > 0 {
			n += len(s.title)
		}
	}
	for _, b := range l.blocks {
		n += len(b.text)
	}
	return n
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
	body := l.size()
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
	for _, g := range l.groups {
		if g.more == 0 {
			continue
		}
		i := slices.IndexFunc(out, func(o PrimeOmission) bool { return o.Part == g.part && o.Task == g.task })
		if i < 0 {
			out = append(out, PrimeOmission{Part: g.part, Task: g.task, IDs: []string{}})
			i = len(out) - 1
		}
		out[i].More, out[i].Events = g.more, out[i].Events+g.moreEvents
	}
	return out
}

// leftOutLine is the document's last line, naming what was left out; ""
// when nothing was.
func (l *primeLayout) leftOutLine() string {
	var phrases []string
	for _, g := range l.groups {
		if len(g.dropped)+g.more > 0 {
			phrases = append(phrases, g.phrase())
		}
	}
	if len(phrases) == 0 {
		return ""
	}
	return "\n_left out: " + strings.Join(phrases, ", ") + "_\n"
}

func (g *primeGroup) phrase() string {
	n := len(g.dropped) + g.more
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
	return plural(n, "summary", "summaries") + " of " + plural(g.events+g.moreEvents, "older event", "older events")
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
