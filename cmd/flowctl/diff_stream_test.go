package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// writeDiffHeld prints a whole DiffResult as diff printed it before it
// streamed: the header, then one line per change (writeChanges); the
// reference the streamed output (diffWriter) is checked against.
func writeDiffHeld(w io.Writer, d *digest.DiffResult) {
	fmt.Fprintf(w, "%s from seq %d to seq %d: %s\n", printable(d.Project), d.From, d.To, changeCount(len(d.Changes), d.Total))
	writeChanges(w, d.Changes)
}

// heldDiff is what diff printed of the whole result d, in format (text
// in colour or not, json): printer.one's output.
func heldDiff(t *rapid.T, d *digest.DiffResult, format string, color bool) string {
	var out bytes.Buffer
	p := &printer{w: &textWriter{bufio.NewWriter(&out), display{color: color}}, format: format}
	if err := p.one(d, func(w io.Writer) { writeDiffHeld(w, d) }); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// streamedDiff is what diffWriter prints of the diff of project from a
// to b, limit changes listed, as the diff command prints it.
func streamedDiff(t *rapid.T, e *flow.Engine, project string, a, b flow.Point, limit int, format string, color bool) string {
	var out bytes.Buffer
	w := &diffWriter{w: &textWriter{bufio.NewWriter(&out), display{color: color}}, json: format != "text", limit: limit}
	if err := digest.DiffEach(e, project, a, b, limit, w.head, w.change); err != nil {
		t.Fatalf("DiffEach: %v", err)
	}
	if err := w.end(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestDiff_StreamedEqualsHeld: on generated histories (snapshots every
// few events, so near diffs fold between the points and far ones read
// the deltas; titles with quotes, HTML and unicode), the
// diff written as its changes come (digest.DiffEach, diffWriter) is
// byte for byte what printing the whole result (digest.DiffLimit) gives,
// as text (in colour or not) and as the -o json document, for any two
// points either way and any --limit.
func TestDiff_StreamedEqualsHeld(t *testing.T) {
	t.Parallel()
	titles := rapid.SampledFrom([]string{"plain", `say "hi"`, "<b>&amp;</b>", "x := `a`; y", "é ünïcode", "-> arrow",
		"a very long title that runs on and on past the sixty bytes a line shows"})
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		n++
		e, err := flow.Open(filepath.Join(dir, fmt.Sprint(n, ".db")), flow.Options{Create: true, NoSync: true, Actor: "tester",
			SnapshotEvery: rapid.IntRange(3, 12).Draw(t, "every")})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		head := streamHistory(t, e, titles)
		for i := range 4 {
			a := flow.Point{Seq: rapid.Uint64Range(1, head).Draw(t, fmt.Sprint("a", i))}
			b := flow.Point{Seq: rapid.Uint64Range(1, head).Draw(t, fmt.Sprint("b", i))}
			limit := rapid.SampledFrom([]int{0, 0, 1, 2, 5}).Draw(t, fmt.Sprint("limit", i))
			d, err := digest.DiffLimit(e, "p", a, b, limit)
			if err != nil {
				t.Fatalf("DiffLimit: %v", err)
			}
			for _, f := range []struct {
				format string
				color  bool
			}{{"text", false}, {"text", true}, {"json", false}} {
				held, streamed := heldDiff(t, d, f.format, f.color), streamedDiff(t, e, "p", a, b, limit, f.format, f.color)
				if held != streamed {
					t.Fatalf("diff %d %d --limit %d (%s, colour %v) streamed:\n%s\nheld:\n%s", a.Seq, b.Seq, limit, f.format, f.color, streamed, held)
				}
			}
		}
	})
}

// streamHistory builds a random history of project p on e and returns
// its last seq.
func streamHistory(t *rapid.T, e *flow.Engine, titles *rapid.Generator[string]) uint64 {
	p, err := e.CreateProject(flow.NewProject{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	head := p.Seq
	var tasks []string
	for i := range rapid.IntRange(1, 60).Draw(t, "ops") {
		var seq uint64
		var err error
		switch op := rapid.IntRange(0, 5).Draw(t, fmt.Sprint("op", i)); {
		case op == 0 || len(tasks) == 0:
			var v *projection.Task
			if v, err = e.AddTask(flow.NewTask{Project: "p", Title: titles.Draw(t, "title")}); err == nil {
				tasks, seq = append(tasks, v.ID), v.Seq
			}
		case op == 1:
			var v *projection.Task
			if v, err = e.MoveTask(flow.Move{Project: "p", ID: rapid.SampledFrom(tasks).Draw(t, "task"), To: "doing"}); err == nil {
				seq = v.Seq
			}
		case op == 2:
			title := titles.Draw(t, "title")
			var v *projection.Task
			if v, err = e.EditTask(flow.TaskEdit{Project: "p", ID: rapid.SampledFrom(tasks).Draw(t, "task"), Title: &title}); err == nil {
				seq = v.Seq
			}
		case op == 3:
			var v *projection.Approval
			if v, err = e.RequestApproval(flow.NewApproval{Project: "p", Task: rapid.SampledFrom(tasks).Draw(t, "task"), Message: titles.Draw(t, "message")}); err == nil {
				seq = v.Seq
			}
		case op == 4:
			var v *projection.Plan
			if v, err = e.AddPlan(flow.NewPlan{Project: "p", Title: titles.Draw(t, "title")}); err == nil {
				seq = v.Seq
			}
		default:
			var v *projection.Exec
			task := rapid.SampledFrom(append([]string{""}, tasks...)).Draw(t, "task")
			if v, err = e.RecordExec(flow.NewExec{Project: "p", Task: task, Command: titles.Draw(t, "command"), Success: true}); err == nil {
				seq = v.Seq
			}
		}
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		head = max(head, seq)
	}
	return head
}

// TestAppendChangeJSON_IsTheEncoders: a change with no fields is written
// (appendChangeJSON) as the JSON encoder without HTML escapes writes it,
// byte for byte, whatever its strings hold: quotes, backslashes, control
// bytes, HTML, U+2028, bytes that are not UTF-8.
func TestAppendChangeJSON_IsTheEncoders(t *testing.T) {
	t.Parallel()
	str := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-zA-Z0-9 "\\<>&\x00-\x1f\x7f\x{2028}\x{2029}é-]{0,12}`),
		rapid.Custom(func(t *rapid.T) string { return string(rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, "bytes")) }),
		rapid.Just(""))
	rapid.Check(t, func(t *rapid.T) {
		c := flow.Change{Kind: str.Draw(t, "kind"), ID: str.Draw(t, "id"), Op: str.Draw(t, "op"), Title: str.Draw(t, "title"), World: str.Draw(t, "world")}
		var want bytes.Buffer
		w := &diffWriter{}
		w.enc = json.NewEncoder(&w.buf)
		w.enc.SetEscapeHTML(false)
		w.w = &textWriter{Writer: bufio.NewWriter(&want)}
		if err := w.value(c); err != nil {
			t.Fatal(err)
		}
		w.w.Flush()
		if got := appendChangeJSON(nil, c); string(got) != want.String() {
			t.Fatalf("appendChangeJSON(%q) = %s, want %s", c, got, want.String())
		}
	})
}
