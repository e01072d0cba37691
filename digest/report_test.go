package digest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
)

// reportFixture builds project alpha with T-1 (steps, context, a granted
// and a pending approval, two exec records, notes on the task's and on the
// project's stream) and T-2 (a note of its own).
func reportFixture(tb testing.TB, e *flow.Engine) {
	tb.Helper()
	statusProject(tb, e, "alpha")
	t1 := statusTask(tb, e, "alpha", "parse | the input")
	t2 := statusTask(tb, e, "alpha", "two", t1)
	stream := projection.TaskStream("alpha", t1)
	emit := func(typ string, payload any) { statusEmit(tb, e, stream, "alpha", typ, payload) }
	statusMove(tb, e, "alpha", t1, "doing")
	emit(projection.TypeStepAdded, projection.StepAdded{ID: "T-1.1", Title: "lexer"})
	emit(projection.TypeStepAdded, projection.StepAdded{ID: "T-1.2", Title: "parser"})
	fifty := 50
	emit(projection.TypeStepStatusChanged, projection.StepStatusChanged{ID: "T-1.1", To: projection.StepCompleted, Result: "tokens"})
	emit(projection.TypeStepStatusChanged, projection.StepStatusChanged{ID: "T-1.2", To: projection.StepInProgress, Progress: &fifty})
	emit(projection.TypeTaskContextMerged, projection.TaskContextMerged{Patch: `{"lang":"go","files":["a.go"]}`})
	statusApproval(tb, e, "alpha", t1, "A-1")
	emit(projection.TypeApprovalDecided, projection.ApprovalDecided{ID: "A-1", Decision: projection.ApprovalGranted, By: "boss", Comment: "go ahead"})
	statusApproval(tb, e, "alpha", t1, "A-2")
	statusExec(tb, e, "alpha", projection.ExecRecorded{ID: "X-1", Task: t1, Step: "T-1.1", Command: "go test ./...", Success: true, ElapsedMS: 1234.5,
		Stdout: projection.Output{Head: "ok  \tparser\n```\n", Bytes: 16}})
	statusExec(tb, e, "alpha", projection.ExecRecorded{ID: "X-2", Task: t1, Command: "go vet", ExitCode: 1, ElapsedMS: 7,
		Stderr: projection.Output{Head: "vet: \x1b[31mbad\x1b[0m\n", Bytes: 20}})
	emit(projection.TypeNoteAdded, projection.NoteAdded{Task: t1, Text: "first line\nsecond line", Kind: "note"})
	misplacedEmit(tb, e, projection.ProjectStream("alpha"), "alpha", projection.TypeNoteAdded, projection.NoteAdded{Task: t1, Text: "from the project stream", Kind: "memory"})
	statusEmit(tb, e, projection.TaskStream("alpha", t2), "alpha", projection.TypeNoteAdded, projection.NoteAdded{Task: t2, Text: "not about T-1", Kind: "note"})
}

func TestEngine_TaskReport(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := flowtest.Open(t)
		reportFixture(t, e)
		r, err := ReportTask(e, "alpha", "T-1")
		if err != nil {
			t.Fatal(err)
		}
		md := r.Markdown
		for _, want := range []string{
			"# T-1: parse | the input\n",
			"| status | doing |",
			"| T-1.1 | completed | 100% | lexer | result: tokens |",
			"| T-1.2 | in_progress | 50% | parser |  |",
			"## Context (version 1)\n\n```json\n{\n  \"files\": [\n    \"a.go\"\n  ],\n  \"lang\": \"go\"\n}\n```",
			"| A-1 | granted | - | may I? |", "boss", "go ahead", "| A-2 | pending |",
			"| X-1 | T-1.1 | go test ./... | 0 | ok | 1234.5 ms |",
			"| X-2 | - | go vet | 1 | failed | 7 ms |",
			"stdout (16 bytes):\n\n````\nok  \tparser\n```\n````",
			`vet: \x1b[31mbad\x1b[0m`,
			"(note): first line\n  second line",
			"(memory): from the project stream",
			"| pending approvals | A-2 |",
		} {
			if !strings.Contains(md, want) {
				t.Errorf("markdown lacks %q:\n%s", want, md)
			}
		}
		if strings.Contains(md, "\x1b") || strings.Contains(md, "not about T-1") {
			t.Errorf("markdown has a raw escape or another task's note:\n%s", md)
		}
		if !strings.Contains(md, `parse \| the input`) {
			t.Errorf("a | in a table cell is not escaped:\n%s", md)
		}
	})
	t.Run("Timeline", func(t *testing.T) {
		e := flowtest.Open(t)
		reportFixture(t, e)
		r, err := ReportTask(e, "alpha", "T-1")
		if err != nil {
			t.Fatal(err)
		}
		var want []uint64
		for _, ev := range flowtest.Events(t, e, flow.Filter{Project: "alpha"}) {
			if ev.Stream == projection.TaskStream("alpha", "T-1") || strings.Contains(string(ev.Data), "from the project stream") {
				want = append(want, ev.Seq)
			}
		}
		var got []uint64
		for _, ev := range r.Timeline {
			got = append(got, ev.Seq)
		}
		if !slices.Equal(got, want) {
			t.Errorf("timeline seqs = %v, want %v", got, want)
		}
		if len(r.Notes) != 2 || r.Notes[1].Kind != "memory" {
			t.Errorf("notes = %+v, want the task's two notes", r.Notes)
		}
		first := r.Timeline[0]
		if first.Type != projection.TypeTaskCreated || first.Subject != "T-1" || first.Summary != "T-1 created: parse | the input" {
			t.Errorf("first timeline entry = %+v", first)
		}
	})
	t.Run("Deterministic", func(t *testing.T) {
		e := flowtest.Open(t)
		reportFixture(t, e)
		a, err := ReportTask(e, "alpha", "T-1")
		if err != nil {
			t.Fatal(err)
		}
		b, err := ReportTask(e, "alpha", "T-1")
		if err != nil {
			t.Fatal(err)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("two reports of the same state differ")
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := flowtest.Open(t)
		reportFixture(t, e)
		if _, err := ReportTask(e, "alpha", "T-9"); !errors.Is(err, flow.ErrNotFound) {
			t.Errorf("unknown task: err = %v, want ErrNotFound", err)
		}
		if _, err := ReportTask(e, "nope", "T-1"); !errors.Is(err, flow.ErrNotFound) {
			t.Errorf("unknown project: err = %v, want ErrNotFound", err)
		}
	})
}

func TestEngine_ProjectReport(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := flowtest.Open(t)
		reportFixture(t, e)
		r, err := ReportProject(e, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"# Project alpha\n",
			"- tasks: 2 (todo 1, doing 1, done 0, blocked 0, cancelled 0)",
			"- blocked: T-2 (todo waiting for T-1)",
			"- pending approvals: A-2 (T-1)",
			"- exec records: 2, 1 failed",
			"| T-1 | doing | 0 | - | - | 1/2 | - | parse \\| the input |",
			"## Recent exec records (2 of 2)",
			"| seq | time | actor | subject | type | summary |",
			"| tester | alpha | project.created | project alpha created |",
			"## Dependency graph (open tasks and what they depend on)\n\n```mermaid\nflowchart TD\n",
			"  T1 --> T2\n",
		} {
			if !strings.Contains(r.Markdown, want) {
				t.Errorf("markdown lacks %q:\n%s", want, r.Markdown)
			}
		}
	})
	t.Run("Limits", func(t *testing.T) {
		e := flowtest.Open(t)
		statusProject(t, e, "alpha")
		statusTask(t, e, "alpha", "one")
		for i := range ReportRecentExecs + 5 {
			statusExec(t, e, "alpha", projection.ExecRecorded{ID: projection.ShortID(projection.PrefixExec, i+1), Task: "T-1", Command: "true", Success: true})
		}
		statusProject(t, e, "beta") // another project's event is not in alpha's timeline
		for range ReportTimeline {
			statusTask(t, e, "alpha", "more")
		}
		r, err := ReportProject(e, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Execs) != ReportRecentExecs || r.Execs[0].ID != "X-6" || r.Execs[len(r.Execs)-1].ID != "X-15" {
			t.Errorf("execs = %d from %s, want the last %d (X-6..X-15)", len(r.Execs), r.Execs[0].ID, ReportRecentExecs)
		}
		all := flowtest.Events(t, e, flow.Filter{Project: "alpha"})
		if len(r.Timeline) != ReportTimeline || r.Timeline[len(r.Timeline)-1].Seq != all[len(all)-1].Seq ||
			r.Timeline[0].Seq != all[len(all)-ReportTimeline].Seq {
			t.Errorf("timeline = %d events ending at %d, want the last %d of alpha", len(r.Timeline), r.Timeline[len(r.Timeline)-1].Seq, ReportTimeline)
		}
	})
	t.Run("GraphLimit", func(t *testing.T) {
		e := flowtest.Open(t)
		statusProject(t, e, "alpha")
		statusTask(t, e, "alpha", "first")
		statusMove(t, e, "alpha", "T-1", "doing", "done")
		for range ReportGraphTasks + 4 {
			statusTask(t, e, "alpha", "next", "T-1")
		}
		statusTask(t, e, "alpha", "unrelated, done")
		statusMove(t, e, "alpha", "T-46", "doing", "done")
		r, err := ReportProject(e, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		g := r.Graph
		if g.Tasks != ReportGraphTasks+5 || len(g.Nodes) != ReportGraphTasks || g.Nodes[0].ID != "T-1" || g.Nodes[0].Status != "done" {
			t.Errorf("graph of %d tasks draws %d from %+v; want the open ones and T-1 (not T-46), the first %d", g.Tasks, len(g.Nodes), g.Nodes[0], ReportGraphTasks)
		}
		if want := "_The first 40 of 45 tasks by layer; flowctl graph draws the whole project._"; !strings.Contains(r.Markdown, want) {
			t.Errorf("markdown does not say the graph is cut:\n%s", r.Markdown)
		}
	})
	t.Run("TimelineBehindOtherProjects", func(t *testing.T) {
		e := flowtest.Open(t)
		statusProject(t, e, "alpha")
		for range ReportTimeline + 10 {
			statusTask(t, e, "alpha", "a")
		}
		statusProject(t, e, "beta")
		for range 5 * ReportTimeline {
			statusTask(t, e, "beta", "b") // more than the first window holds
		}
		r, err := ReportProject(e, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		all := flowtest.Events(t, e, flow.Filter{Project: "alpha"})
		want := flowtest.Seqs(all[len(all)-ReportTimeline:])
		var got []uint64
		for _, ev := range r.Timeline {
			got = append(got, ev.Seq)
		}
		if !slices.Equal(got, want) {
			t.Errorf("timeline seqs = %v, want %v", got, want)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		e := flowtest.Open(t)
		statusProject(t, e, "alpha")
		r, err := ReportProject(e, "alpha")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Count(r.Markdown, "_No open tasks._") != 2 || strings.Contains(r.Markdown, "```mermaid") {
			t.Errorf("an empty project's report draws a graph:\n%s", r.Markdown)
		}
		for _, want := range []string{"_No open tasks._", "_No open plans._", "_No approvals._", "_No exec records._", "- ready: none"} {
			if !strings.Contains(r.Markdown, want) {
				t.Errorf("markdown lacks %q:\n%s", want, r.Markdown)
			}
		}
		b, _ := json.Marshal(r)
		for _, key := range []string{`"tasks":[]`, `"plans":[]`, `"execs":[]`} {
			if !strings.Contains(string(b), key) {
				t.Errorf("JSON lacks %s", key)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := flowtest.Open(t)
		if _, err := ReportProject(e, "nope"); !errors.Is(err, flow.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
}

func TestMarkdownHelpers(t *testing.T) {
	t.Run("Cell", func(t *testing.T) {
		if got := mdCell("a|b\nc\x07"); got != `a\|b c\a` {
			t.Errorf("mdCell = %q", got)
		}
	})
	t.Run("Fence", func(t *testing.T) {
		var d mdDoc
		d.code("", "x ````` y")
		if !strings.HasPrefix(d.String(), "``````\n") {
			t.Errorf("fence does not outrun the text's backticks: %q", d.String())
		}
	})
	t.Run("Head", func(t *testing.T) {
		long := strings.Repeat("line\n", 30)
		got := mdHead(long)
		if strings.Count(got, "line") != reportOutputLines || !strings.HasSuffix(got, "…") {
			t.Errorf("mdHead kept %q", got)
		}
		if got := mdHead("short\n"); got != "short\n" {
			t.Errorf("mdHead(short) = %q", got)
		}
		if got := mdHead(strings.Repeat("é", reportOutputBytes)); len(got) > reportOutputBytes+len("\n…") || !strings.HasSuffix(got, "…") {
			t.Errorf("mdHead of a long line is %d bytes", len(got))
		}
	})
	t.Run("Summary", func(t *testing.T) {
		if got := mdClip(strings.Repeat("x", 200), reportSummary); len([]rune(got)) != reportSummary {
			t.Errorf("clip to %d runes gave %d", reportSummary, len([]rune(got)))
		}
	})
}
