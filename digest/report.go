package digest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// Limits of a report.
const (
	ReportTimeline    = 50 // events in a project report's timeline
	ReportRecentExecs = 10 // exec records in a project report
	// ReportRecentApprovals is how many of the last approvals a project
	// report shows besides the pending ones.
	ReportRecentApprovals = 10
	reportOutputLines     = 10 // lines of an exec record's stdout/stderr head
	reportOutputBytes     = 1000
	reportSummary         = 120 // runes of a timeline summary
	// ReportGraphTasks is how many tasks a project report's dependency
	// graph draws at most: the first by layer.
	ReportGraphTasks = 40
)

// TaskReport is the report of one task: Markdown is the document, the
// other fields are the parts it was made from.
type TaskReport struct {
	Markdown  string                 `json:"markdown"`
	Project   string                 `json:"project"`
	HeadSeq   uint64                 `json:"head_seq"`
	Task      *projection.Task       `json:"task"`
	Deps      []flow.TaskBrief       `json:"deps"`
	Approvals []*projection.Approval `json:"approvals"`
	Execs     []*projection.Exec     `json:"execs"`
	Notes     []ReportNote           `json:"notes"`
	Timeline  []ReportEvent          `json:"timeline"`
}

// ProjectReport is the report of a project: Markdown is the document, the
// other fields are the parts it was made from. Tasks holds the open tasks
// (todo, doing, blocked) and Plans the open plans, by id; Approvals the
// pending ones and the last ReportRecentApprovals, by id; Execs the last
// ReportRecentExecs records recorded, by id; Timeline the last
// ReportTimeline events, oldest first. PlanTasks counts the tasks of each plan shown, and how
// many of them are done. Graph is the dependency graph of the open tasks
// and the tasks they depend on, its first ReportGraphTasks by layer.
type ProjectReport struct {
	Markdown  string                 `json:"markdown"`
	Project   *projection.Project    `json:"project"`
	Status    *flow.Status           `json:"status"`
	Tasks     []*projection.Task     `json:"tasks"`
	Plans     []*projection.Plan     `json:"plans"`
	Approvals []*projection.Approval `json:"approvals"`
	Execs     []*projection.Exec     `json:"execs"`
	Timeline  []ReportEvent          `json:"timeline"`
	PlanTasks map[string]PlanTasks   `json:"plan_tasks"`
	Graph     *Graph                 `json:"graph"`
}

// PlanTasks counts a plan's tasks.
type PlanTasks struct {
	Tasks int `json:"tasks"`
	Done  int `json:"done"`
}

// ReportNote is a note of a task (note.added carries its text).
type ReportNote struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Actor string    `json:"actor"`
	Kind  string    `json:"kind"`
	Text  string    `json:"text"`
}

// ReportEvent is one line of a timeline: an event and what it did, in
// one line. Subject is the entity of its stream (T-3, P-1, the project).
type ReportEvent struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Actor   string    `json:"actor"`
	Type    string    `json:"type"`
	Subject string    `json:"subject"`
	Summary string    `json:"summary"`
}

// ReportTask reports one task of project: its fields, steps, context,
// approvals, exec records, notes and the timeline of its events, as of
// one head. It returns flow.ErrNotFound for an unknown project or task.
//
// It reads the task, its dependencies, the task's stream, the project's
// own stream (checkpoints and what belongs to no task) and the approvals
// and exec records those streams name, never the rest of the project:
// the cost is the task's, not the project's history.
func ReportTask(e *flow.Engine, project, id string) (*TaskReport, error) {
	r := &TaskReport{Project: project}
	err := e.Read(func(src *flow.Reader) error {
		r.HeadSeq = src.Head()
		return r.read(src, project, id)
	})
	if err != nil {
		return nil, err
	}
	r.Markdown = r.markdown()
	return r, nil
}

func (r *TaskReport) read(src *flow.Reader, project, id string) error {
	if _, err := src.Project(project); err != nil {
		return err
	}
	t, err := src.Task(project, id)
	if err != nil {
		return err
	}
	r.Task, r.Deps = t, []flow.TaskBrief{}
	for _, d := range t.Deps {
		dt, err := src.Task(project, d)
		if err != nil {
			return err
		}
		r.Deps = append(r.Deps, flow.BriefOf(dt))
	}
	evs, named, err := taskStream(src, project, id)
	if err != nil {
		return err
	}
	if r.Approvals, err = namedEntities(named[projection.TypeApprovalRequested], func(x string) (*projection.Approval, error) {
		return src.Approval(project, x)
	}, func(a *projection.Approval) bool { return a.Task == id }); err != nil {
		return err
	}
	if r.Execs, err = namedEntities(named[projection.TypeExecRecorded], func(x string) (*projection.Exec, error) {
		return src.Exec(project, x)
	}, func(x *projection.Exec) bool { return x.Task == id }); err != nil {
		return err
	}
	slices.SortFunc(evs, func(a, b flow.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	r.Timeline, r.Notes = timelineOf(evs), []ReportNote{}
	for _, ev := range evs {
		if n, ok := reportNoteOf(ev); ok {
			r.Notes = append(r.Notes, n)
		}
	}
	return nil
}

// taskStream returns the events of a task's stream and those of the
// project's stream that name the task or decide one of its approvals (see
// namesTask), up to the reader's head, and the ids of the approvals and
// exec records those events requested and recorded, by event type. Every
// approval and exec record of a task is requested or recorded on the
// task's stream (flow puts them there and refuses an import that does
// not: history.CheckPlacement); the project's stream, which holds its
// checkpoints and what belongs to no task, is read for events an older
// file put there.
func taskStream(src *flow.Reader, project, id string) ([]flow.Event, map[string][]string, error) {
	var evs []flow.Event
	named := map[string][]string{}
	approvals := map[string]bool{}
	take := func(ev flow.Event) {
		evs = append(evs, ev)
		if ev.Type == projection.TypeApprovalRequested || ev.Type == projection.TypeExecRecorded {
			var p struct {
				ID string `msgpack:"id"`
			}
			if msgpack.Unmarshal(ev.Raw, &p) == nil && p.ID != "" {
				named[ev.Type] = append(named[ev.Type], p.ID)
				approvals[p.ID] = ev.Type == projection.TypeApprovalRequested
			}
		}
	}
	err := src.StreamEvents(projection.TaskStream(project, id), func(ev flow.Event) error {
		take(ev)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	err = src.StreamEvents(projection.ProjectStream(project), func(ev flow.Event) error {
		if namesTask(ev, id, approvals) {
			take(ev)
		}
		return nil
	})
	return evs, named, err
}

// namedEntities reads the entities ids name that still exist and keep
// accepts, sorted by id, each once; never nil.
func namedEntities[T any](ids []string, get func(id string) (*T, error), keep func(*T) bool) ([]*T, error) {
	ids = slices.Compact(slices.SortedFunc(slices.Values(ids), projection.CompareIDs))
	out := []*T{}
	for _, id := range ids {
		v, err := get(id)
		switch {
		case errors.Is(err, flow.ErrNotFound):
			continue // a rollback removed it
		case err != nil:
			return nil, err
		}
		if keep(v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// namesTask reports whether ev's payload names task (its "task" field) or
// decides one of its approvals.
func namesTask(ev flow.Event, task string, approvals map[string]bool) bool {
	var p struct {
		Task string `msgpack:"task"`
		ID   string `msgpack:"id"`
	}
	if msgpack.Unmarshal(ev.Raw, &p) != nil {
		return false
	}
	return p.Task == task || (ev.Type == projection.TypeApprovalDecided && approvals[p.ID])
}

func reportNoteOf(ev flow.Event) (ReportNote, bool) {
	var p projection.NoteAdded
	if ev.Type != projection.TypeNoteAdded || msgpack.Unmarshal(ev.Raw, &p) != nil {
		return ReportNote{}, false
	}
	return ReportNote{Seq: ev.Seq, Time: ev.Time, Actor: ev.Actor, Kind: p.Kind, Text: p.Text}, true
}

// ReportProject reports a project as seen by the engine's actor (see
// ReportProjectFor).
func ReportProject(e *flow.Engine, project string) (*ProjectReport, error) {
	return ReportProjectFor(e, project, e.Actor())
}

// ReportProjectFor reports a project: its status as seen by actor (see
// flow's StatusFor), tasks, plans, approvals, recent exec records and the
// timeline of its last events, as of one head. It returns
// flow.ErrNotFound for an unknown project.
func ReportProjectFor(e *flow.Engine, project, actor string) (*ProjectReport, error) {
	r := &ProjectReport{}
	now := e.Now()
	var head uint64
	err := e.Read(func(src *flow.Reader) error {
		head = src.Head()
		return r.read(src, project, actor, now)
	})
	if err != nil {
		return nil, err
	}
	evs, err := lastEvents(e, flow.Filter{Project: project, UntilSeq: head, Raw: true}, ReportTimeline)
	if err != nil {
		return nil, err
	}
	r.Timeline = timelineOf(evs)
	r.Markdown = r.markdown()
	return r, nil
}

// lastEvents returns the last n events matching f (whose UntilSeq is
// set), oldest first. It reads windows of seqs backwards from UntilSeq,
// each four times the last, so that a long log is not read from its start
// for a few recent events.
func lastEvents(e *flow.Engine, f flow.Filter, n int) ([]flow.Event, error) {
	f.Limit = n
	for window := uint64(4 * n); ; window *= 4 {
		f.SinceSeq = 1
		if f.UntilSeq > window {
			f.SinceSeq = f.UntilSeq - window + 1
		}
		var evs []flow.Event
		if err := e.Events(f, func(ev flow.Event) error { evs = append(evs, ev); return nil }); err != nil {
			return nil, err
		}
		if len(evs) >= n || f.SinceSeq == 1 {
			return evs, nil
		}
	}
}

// read reads what the report shows, from the status index and entity by
// entity: the open work, the last approvals and exec records. Nothing it
// reads grows with the project's history but the open work.
func (r *ProjectReport) read(src *flow.Reader, project, actor string, now time.Time) error {
	var err error
	if r.Status, err = src.Status(project, actor, now); err != nil {
		return err
	}
	if r.Project, err = src.Project(project); err != nil {
		return err
	}
	if r.Tasks, err = OpenTasks(src, project); err != nil {
		return err
	}
	if err := r.readGraph(src, project); err != nil {
		return err
	}
	if err := r.readPlans(src, project); err != nil {
		return err
	}
	pending, err := src.ApprovalIDs(project, projection.ApprovalPending)
	if err != nil {
		return err
	}
	approvals := lastIDs(projection.PrefixApproval, r.Project.Counters.Approvals, ReportRecentApprovals)
	if r.Approvals, err = readAll(slices.Compact(slices.SortedFunc(slices.Values(append(approvals, pending...)), projection.CompareIDs)),
		func(id string) (*projection.Approval, error) { return src.Approval(project, id) }); err != nil {
		return err
	}
	if r.Execs, err = lastExecRecords(src, project, r.Project.Counters.Execs); err != nil {
		return err
	}
	r.Tasks, r.Plans, r.Approvals, r.Execs = reportList(r.Tasks), reportList(r.Plans), reportList(r.Approvals), reportList(r.Execs)
	return nil
}

// readGraph builds the graph of the open tasks (read before) and the
// tasks they depend on, read by id: as the rest of the report, it reads
// the open work and not the whole project.
func (r *ProjectReport) readGraph(src *flow.Reader, project string) error {
	tasks, err := WithDeps(src, project, r.Tasks)
	if err != nil {
		return err
	}
	r.Graph = NewGraph(project, tasks).Limit(ReportGraphTasks)
	r.Graph.HeadSeq = src.Head()
	return nil
}

// readPlans reads the open plans and their task counts.
func (r *ProjectReport) readPlans(src *flow.Reader, project string) error {
	counts, err := src.PlanCounts(project)
	if err != nil {
		return err
	}
	var ids []string
	for status := range counts {
		if status != "closed" {
			more, err := src.PlanIDs(project, status)
			if err != nil {
				return err
			}
			ids = append(ids, more...)
		}
	}
	r.PlanTasks = map[string]PlanTasks{}
	for _, id := range slices.SortedFunc(slices.Values(ids), projection.CompareIDs) {
		p, err := src.Plan(project, id)
		if err != nil {
			return err
		}
		var c PlanTasks
		if c.Tasks, c.Done, err = src.PlanCount(project, id); err != nil {
			return err
		}
		r.Plans, r.PlanTasks[id] = append(r.Plans, p), c
	}
	return nil
}

// lastIDs returns the ids prefix-(used-n+1) to prefix-used.
func lastIDs(prefix string, used, n int) []string {
	var out []string
	for i := max(1, used-n+1); i <= used; i++ {
		out = append(out, projection.ShortID(prefix, i))
	}
	return out
}

// lastExecRecords returns the project's last ReportRecentExecs exec
// records, by id: ids are handed out in the order records are recorded,
// so they are the highest ids that still exist.
func lastExecRecords(src *flow.Reader, project string, used int) ([]*projection.Exec, error) {
	var out []*projection.Exec
	for i := used; i >= 1 && len(out) < ReportRecentExecs; i-- {
		x, err := src.Exec(project, projection.ShortID(projection.PrefixExec, i))
		switch {
		case errors.Is(err, flow.ErrNotFound):
			continue // a rollback removed it
		case err != nil:
			return nil, err
		}
		out = append(out, x)
	}
	slices.Reverse(out)
	return out, nil
}

// readAll reads the entities with ids that exist, in the order given.
func readAll[T any](ids []string, get func(id string) (*T, error)) ([]*T, error) {
	return namedEntities(ids, get, func(*T) bool { return true })
}

func reportList[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// timelineOf turns events into timeline lines; never nil.
func timelineOf(evs []flow.Event) []ReportEvent {
	out := make([]ReportEvent, len(evs))
	for i, ev := range evs {
		out[i] = ReportEvent{Seq: ev.Seq, Time: ev.Time, Actor: ev.Actor, Type: ev.Type,
			Subject: Subject(ev), Summary: mdClip(mdLine(Summary(ev)), reportSummary)}
	}
	return out
}

// join joins the non-empty words with spaces.
func mdJoin(words ...string) string {
	return strings.Join(slices.DeleteFunc(words, func(w string) bool { return w == "" }), " ")
}

func mdParens(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

func mdForced(f bool) string {
	if f {
		return "[forced]"
	}
	return ""
}

func mdOK(ok bool) string {
	if ok {
		return "ok"
	}
	return "failed"
}

func mdMS(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " ms" }

// execLabel is what a record ran: its command, or the first line of its code.
func execLabel(x *projection.ExecRecorded) string {
	if x.Command != "" || x.Code == "" {
		return x.Command
	}
	first, _, _ := strings.Cut(x.Code, "\n")
	return "code: " + first
}

func mdTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func mdProjTime(t projection.Time) string {
	if t.IsZero() {
		return "-"
	}
	return mdTime(t.Std())
}

// oneLine makes s one line of safe text: line breaks become spaces,
// other control characters are escaped, invalid UTF-8 is replaced.
func mdLine(s string) string {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	return mdSafe(s)
}

// safeText escapes control characters other than newline and tab, so
// that text from an event cannot move a terminal's cursor.
func mdSafe(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, mdUnsafe) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if mdUnsafe(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func mdUnsafe(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }

// clip cuts s to at most n runes, marking the cut with "…".
func mdClip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// mdDoc builds a markdown document.
type mdDoc struct{ strings.Builder }

func (d *mdDoc) line(format string, args ...any) { fmt.Fprintf(d, format+"\n", args...) }

// section starts a level-2 section.
func (d *mdDoc) section(title string) { d.line("\n## %s\n", title) }

// table writes a table, or the empty text when there are no rows.
func (d *mdDoc) table(empty string, header []string, rows [][]string) {
	if len(rows) == 0 {
		d.line("_%s_", empty)
		return
	}
	d.line("| %s |", strings.Join(header, " | "))
	d.line("|%s", strings.Repeat("---|", len(header)))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = mdCell(c)
		}
		d.line("| %s |", strings.Join(cells, " | "))
	}
}

// code writes a fenced code block whose fence no line of text can close.
func (d *mdDoc) code(lang, text string) {
	fence := strings.Repeat("`", max(3, mdFenceRun(text, '`')+1))
	d.line("%s%s\n%s\n%s", fence, lang, strings.TrimRight(mdSafe(text), "\n"), fence)
}

func mdFenceRun(s string, c rune) int {
	best, n := 0, 0
	for _, r := range s {
		if r == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// mdCell makes s fit in a table cell.
func mdCell(s string) string {
	return strings.ReplaceAll(mdLine(s), "|", `\|`)
}

// markdown renders the task report.
func (r *TaskReport) markdown() string {
	var d mdDoc
	t := r.Task
	d.line("# %s: %s\n", t.ID, mdLine(t.Title))
	d.table("", []string{"field", "value"}, r.fields())
	if t.Description != "" {
		d.line("\n%s", strings.TrimRight(mdSafe(t.Description), "\n"))
	}
	d.section("Steps")
	d.table("No steps.", []string{"step", "status", "progress", "title", "details"}, stepRows(t.Steps))
	d.section(fmt.Sprintf("Context (version %d)", t.ContextVersion))
	d.code("json", mdJSON(string(t.Context)))
	d.section("Approvals")
	d.table("No approvals.", []string{"id", "status", "step", "message", "requested", "decided", "comment"}, approvalRows(r.Approvals, false))
	d.section("Exec records")
	d.table("No exec records.", []string{"id", "step", "command", "exit", "result", "elapsed", "actor", "time"}, execRows(r.Execs, false))
	for _, x := range r.Execs {
		writeOutput(&d, x)
	}
	d.section("Notes")
	writeNotes(&d, r.Notes)
	d.section("Timeline")
	d.table("No events.", []string{"seq", "time", "actor", "type", "summary"}, timelineRows(r.Timeline, false))
	return d.String()
}

func (r *TaskReport) fields() [][]string {
	t := r.Task
	deps := make([]string, len(r.Deps))
	for i, d := range r.Deps {
		deps[i] = d.ID + " (" + d.Status + ")"
	}
	claim := "-"
	if t.Claim != nil {
		claim = mdJoin(t.Claim.Actor, mdParens(t.Claim.Session), "until", mdProjTime(t.Claim.LeaseUntil))
	}
	rows := [][]string{
		{"project", r.Project}, {"status", t.Status + mdForced(t.Forced)}, {"plan", mdDash(t.Plan)},
		{"owner", mdDash(t.Owner)}, {"priority", strconv.Itoa(t.Priority)},
		{"tags", mdDash(strings.Join(t.Tags, ", "))}, {"depends on", mdDash(strings.Join(deps, ", "))},
		{"claim", claim}, {"pending approvals", mdDash(strings.Join(t.PendingApprovals, ", "))},
		{"ref", mdDash(t.Ref)}, {"created", mdProjTime(t.CreatedAt) + " by " + t.CreatedBy},
		{"updated", mdProjTime(t.UpdatedAt)}, {"version", strconv.FormatUint(t.Version, 10)},
	}
	if t.Parent != "" {
		rows = append(rows, []string{"subtask of", t.Parent})
	}
	if t.Due != 0 {
		rows = append(rows, []string{"due", mdProjTime(t.Due)})
	}
	return rows
}

func mdDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func stepRows(steps []projection.Step) [][]string {
	rows := make([][]string, len(steps))
	for i, s := range steps {
		var details []string
		for _, kv := range [][2]string{{"note", s.Note}, {"result", s.Result}, {"error", s.Error}} {
			if kv[1] != "" {
				details = append(details, kv[0]+": "+kv[1])
			}
		}
		rows[i] = []string{s.ID, s.Status, strconv.Itoa(s.Progress) + "%", s.Title, strings.Join(details, "; ")}
	}
	return rows
}

// indentJSON pretty-prints a JSON text; text that is not JSON is kept.
func mdJSON(s string) string {
	if s == "" {
		s = "{}"
	}
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") != nil {
		return s
	}
	return b.String()
}

func approvalRows(as []*projection.Approval, withTask bool) [][]string {
	rows := make([][]string, len(as))
	for i, a := range as {
		decided := "-"
		if a.DecidedBy != "" {
			decided = a.DecidedBy + " " + mdProjTime(a.DecidedAt)
		}
		where := a.Step
		if withTask {
			where = a.Task
		}
		rows[i] = []string{a.ID, a.Status, mdDash(where), a.Message,
			a.RequestedBy + " " + mdProjTime(a.CreatedAt), decided, a.Comment}
	}
	return rows
}

func execRows(xs []*projection.Exec, withTask bool) [][]string {
	rows := make([][]string, len(xs))
	for i, x := range xs {
		where := x.Step
		if withTask {
			where = x.Task
		}
		rows[i] = []string{x.ID, mdDash(where), mdClip(mdLine(execLabel(&x.ExecRecorded)), 80),
			strconv.Itoa(x.ExitCode), mdOK(x.Success), mdMS(x.ElapsedMS), x.Actor, mdProjTime(x.CreatedAt)}
	}
	return rows
}

// writeOutput writes the head of a record's code, stdout and stderr.
func writeOutput(d *mdDoc, x *projection.Exec) {
	parts := []struct {
		name string
		out  projection.Output
	}{{"stdout", x.Stdout}, {"stderr", x.Stderr}}
	if x.Code == "" && x.Stdout.Head == "" && x.Stderr.Head == "" {
		return
	}
	d.line("\n### %s output", x.ID)
	if x.Code != "" {
		d.line("\ncode:\n")
		d.code("", mdHead(x.Code))
	}
	for _, p := range parts {
		if p.out.Head != "" {
			d.line("\n%s (%d bytes):\n", p.name, p.out.Bytes)
			d.code("", mdHead(p.out.Head))
		}
	}
}

// head keeps the first lines of s, marking what it left out.
func mdHead(s string) string {
	lines := strings.SplitAfter(s, "\n")
	kept := strings.Join(lines[:min(len(lines), reportOutputLines)], "")
	if len(kept) > reportOutputBytes {
		kept = strings.ToValidUTF8(kept[:reportOutputBytes], "")
	}
	if len(kept) < len(s) {
		kept = strings.TrimRight(kept, "\n") + "\n…"
	}
	return kept
}

func writeNotes(d *mdDoc, notes []ReportNote) {
	if len(notes) == 0 {
		d.line("_No notes._")
		return
	}
	for _, n := range notes {
		text := strings.ReplaceAll(strings.TrimRight(mdSafe(n.Text), "\n"), "\n", "\n  ")
		d.line("- %s %s (%s): %s", mdTime(n.Time), mdLine(n.Actor), mdLine(n.Kind), text)
	}
}

func timelineRows(evs []ReportEvent, withSubject bool) [][]string {
	rows := make([][]string, len(evs))
	for i, ev := range evs {
		rows[i] = []string{strconv.FormatUint(ev.Seq, 10), mdTime(ev.Time), ev.Actor, ev.Type, ev.Summary}
		if withSubject {
			rows[i] = slices.Insert(rows[i], 3, ev.Subject)
		}
	}
	return rows
}

// markdown renders the project report.
func (r *ProjectReport) markdown() string {
	var d mdDoc
	p := r.Project
	d.line("# Project %s\n", p.Name)
	if p.Archived {
		d.line("_Archived._\n")
	}
	if p.Description != "" {
		d.line("%s\n", strings.TrimRight(mdSafe(p.Description), "\n"))
	}
	d.line("## Status\n")
	writeStatus(&d, r.Status)
	c := r.Status.Tasks
	d.section(fmt.Sprintf("Open tasks (%d of %d; flowctl task ls lists them all)", len(r.Tasks), c.Total))
	d.table("No open tasks.", []string{"id", "status", "pri", "plan", "owner", "steps", "deps", "title"}, taskRows(r.Tasks))
	writeGraph(&d, r.Graph)
	d.section(fmt.Sprintf("Open plans (%d of %d)", len(r.Plans), r.Status.Plans.Open+r.Status.Plans.Closed))
	d.table("No open plans.", []string{"id", "status", "tasks done", "title"}, planRows(r.Plans, r.PlanTasks))
	d.section("Approvals (pending, and the last " + strconv.Itoa(ReportRecentApprovals) + ")")
	d.table("No approvals.", []string{"id", "status", "task", "message", "requested", "decided", "comment"}, approvalRows(r.Approvals, true))
	d.section(fmt.Sprintf("Recent exec records (%d of %d)", len(r.Execs), r.Status.Execs.Total))
	d.table("No exec records.", []string{"id", "task", "command", "exit", "result", "elapsed", "actor", "time"}, execRows(r.Execs, true))
	d.section(fmt.Sprintf("Timeline (last %d events up to seq %d)", len(r.Timeline), r.Status.HeadSeq))
	d.table("No events.", []string{"seq", "time", "actor", "subject", "type", "summary"}, timelineRows(r.Timeline, true))
	return d.String()
}

// writeGraph writes the dependency graph of the open tasks as a Mermaid
// flowchart, saying when it shows only the first of them.
func writeGraph(d *mdDoc, g *Graph) {
	d.section("Dependency graph (open tasks and what they depend on)")
	if len(g.Nodes) == 0 {
		d.line("_No open tasks._")
		return
	}
	if len(g.Nodes) < g.Tasks {
		d.line("_The first %d of %d tasks by layer; flowctl graph draws the whole project._\n", len(g.Nodes), g.Tasks)
	}
	d.code("mermaid", g.Mermaid())
}

func writeStatus(d *mdDoc, s *flow.Status) {
	c := s.Tasks
	d.line("- tasks: %d (todo %d, doing %d, done %d, blocked %d, cancelled %d)", c.Total, c.Todo, c.Doing, c.Done, c.Blocked, c.Cancelled)
	d.line("- plans: %d open, %d closed", s.Plans.Open, s.Plans.Closed)
	d.line("- exec records: %d, %d failed", s.Execs.Total, s.Execs.Failed)
	ready := make([]string, len(s.Ready))
	for i, t := range s.Ready {
		ready[i] = t.ID
	}
	d.line("- ready: %s", mdNone(ready))
	blocked := make([]string, len(s.Blocked))
	for i, t := range s.Blocked {
		blocked[i] = mdJoin(t.ID, mdParens(mdJoin(t.Status, mdWaiting(t.WaitingFor))))
	}
	d.line("- blocked: %s", mdNone(blocked))
	pending := make([]string, len(s.PendingApprovals))
	for i, a := range s.PendingApprovals {
		pending[i] = mdJoin(a.ID, mdParens(a.Task))
	}
	d.line("- pending approvals: %s", mdNone(pending))
	claims := make([]string, len(s.Claims))
	for i, c := range s.Claims {
		claims[i] = mdLine(mdJoin(c.Task, "by", c.Actor, "until", mdProjTime(c.LeaseUntil)))
	}
	d.line("- live claims: %s", mdNone(claims))
}

func mdWaiting(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return "waiting for " + strings.Join(ids, ", ")
}

func mdNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

func taskRows(tasks []*projection.Task) [][]string {
	rows := make([][]string, len(tasks))
	for i, t := range tasks {
		rows[i] = []string{t.ID, t.Status, strconv.Itoa(t.Priority), mdDash(t.Plan), mdDash(t.Owner),
			stepsDone(t.Steps), mdDash(strings.Join(t.Deps, ", ")), t.Title}
	}
	return rows
}

// stepsDone counts finished steps (completed or skipped) of all steps.
func stepsDone(steps []projection.Step) string {
	n := 0
	for _, s := range steps {
		if s.Status == projection.StepCompleted || s.Status == projection.StepSkipped {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, len(steps))
}

func planRows(plans []*projection.Plan, counts map[string]PlanTasks) [][]string {
	rows := make([][]string, len(plans))
	for i, p := range plans {
		c := counts[p.ID]
		rows[i] = []string{p.ID, p.Status, fmt.Sprintf("%d/%d", c.Done, c.Tasks), p.Title}
	}
	return rows
}

func keepIf[T any](items []T, keep func(T) bool) []T {
	out := []T{}
	for _, v := range items {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}
