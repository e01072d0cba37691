package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
)

func travelDiff(t *testing.T, stdout string) digest.DiffResult {
	t.Helper()
	var d digest.DiffResult
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("diff -o json printed %q: %v", stdout, err)
	}
	return d
}

// changeKeys lists changes as "op kind id".
func changeKeys(cs []flow.Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Op + " " + c.Kind + " " + c.ID
	}
	return out
}

// fieldOf returns a change's field, as "from -> to" in compact JSON.
func fieldOf(c flow.Change, field string) string {
	for _, f := range c.Fields {
		if f.Field == field {
			return string(f.From) + " -> " + string(f.To)
		}
	}
	return ""
}

func TestDiff_CheckpointToHead(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	t.Run("Text", func(t *testing.T) {
		got := f.mustRun("", "diff", "C-1", "HEAD")
		want := fmt.Sprintf("p from seq %d to seq %d: 5 changes\n", f.cp, f.head) +
			`~ task T-1 write the parser: context.branch main -> "fix parser", context.files ["a.go"] -> (none), context.n (none) -> 3, status doing -> done
~ task T-2 write the tests: status todo -> doing
+ task T-3 three
+ approval A-1 ship it?
+ exec X-1 go test ./...
`
		if got != want {
			t.Fatalf("diff C-1 HEAD printed\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		d := travelDiff(t, f.mustRun("", "diff", "C-1", "HEAD", "-o", "json"))
		if d.Project != "p" || d.From != f.cp || d.To != f.head {
			t.Fatalf("diff from %d to %d in %q, want %d to %d in p", d.From, d.To, d.Project, f.cp, f.head)
		}
		want := []string{"changed task T-1", "changed task T-2", "added task T-3", "added approval A-1", "added exec X-1"}
		if got := changeKeys(d.Changes); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("changes %q, want %q", got, want)
		}
		t1 := d.Changes[0]
		for field, want := range map[string]string{
			"status":         `"doing" -> "done"`,
			"context.branch": `"main" -> "fix parser"`,
			"context.files":  `["a.go"] -> null`,
			"context.n":      `null -> 3`,
		} {
			if got := fieldOf(t1, field); got != want {
				t.Errorf("T-1 %s: %s, want %s", field, got, want)
			}
		}
		for _, c := range d.Changes {
			if c.World != "" {
				t.Errorf("diff flagged %s %s as done in the world: only a rollback does", c.Kind, c.ID)
			}
		}
	})
	t.Run("BDefaultsToHead", func(t *testing.T) {
		if a, b := f.mustRun("", "diff", "C-1"), f.mustRun("", "diff", "C-1", "HEAD"); a != b {
			t.Fatalf("diff C-1 = %q, diff C-1 HEAD = %q", a, b)
		}
	})
	t.Run("ReversedRemoves", func(t *testing.T) {
		d := travelDiff(t, f.mustRun("", "diff", "HEAD", fmt.Sprint(f.cp), "-o", "json"))
		if got := changeKeys(d.Changes); len(got) != 5 || got[2] != "removed task T-3" {
			t.Fatalf("diff HEAD C-1: %q, want T-3 removed", got)
		}
		if fieldOf(d.Changes[0], "status") != `"done" -> "doing"` {
			t.Errorf("T-1 status: %s", fieldOf(d.Changes[0], "status"))
		}
	})
	t.Run("SamePointIsEmpty", func(t *testing.T) {
		d := travelDiff(t, f.mustRun("", "diff", "C-1", fmt.Sprint(f.cp), "-o", "json"))
		if d.Changes == nil || len(d.Changes) != 0 {
			t.Fatalf("diff of a point with itself: %+v, want changes []", d.Changes)
		}
		if out := f.mustRun("", "diff", "HEAD", "HEAD"); !strings.HasSuffix(out, ": no changes\n") || strings.Count(out, "\n") != 1 {
			t.Errorf("diff HEAD HEAD printed %q", out)
		}
	})
}

func TestDiff_BadInput(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	past := fmt.Sprint(f.head + 1)
	for _, tc := range []struct {
		name string
		code int
		args []string
	}{
		{"NoPoints", 2, []string{"diff"}},
		{"ThreePoints", 2, []string{"diff", "1", "2", "3"}},
		{"BadPoint", 2, []string{"diff", "yesterday", "HEAD"}},
		{"BadSecondPoint", 2, []string{"diff", "C-1", "C-"}},
		{"UnknownCheckpoint", 3, []string{"diff", "C-9", "HEAD"}},
		{"SeqPastHead", 2, []string{"diff", "1", past}},
		{"UnknownFlag", 2, []string{"diff", "--task", "T-1", "C-1"}},
		{"UnknownProject", 3, []string{"diff", "--project", "nope", "C-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) { travelUnchanged(t, f.flowFile, tc.code, tc.args...) })
	}
	t.Run("JSONError", func(t *testing.T) {
		_, stderr, code := f.run("", "diff", "C-9", "HEAD", "-o", "json")
		wantJSONError(t, stderr, code, 3, string(flow.CodeNotFound))
	})
}

func TestChangeLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		c    flow.Change
		want string
	}{
		{"Changed", flow.Change{Kind: "task", ID: "T-2", Op: flow.OpChanged, Title: "write the tests",
			Fields: []flow.FieldChange{{Field: "status", From: json.RawMessage(`"done"`), To: json.RawMessage(`"doing"`)}}},
			"~ task T-2 write the tests: status done -> doing"},
		{"Removed", flow.Change{Kind: "task", ID: "T-3", Op: flow.OpRemoved, Title: "three"}, "- task T-3 three"},
		{"Added", flow.Change{Kind: "plan", ID: "P-1", Op: flow.OpAdded}, "+ plan P-1"},
		{"World", flow.Change{Kind: "exec", ID: "X-1", Op: flow.OpRemoved, Title: "go test", World: "the command ran"},
			"! exec X-1 go test: removed; the command ran"},
		{"ValuesQuotedWhenNeeded", flow.Change{Kind: "task", ID: "T-1", Op: flow.OpChanged, Fields: []flow.FieldChange{
			{Field: "title", From: json.RawMessage(`"a, b"`), To: json.RawMessage(`"->"`)},
			{Field: "context.x", From: json.RawMessage(`{"a":"<b>"}`), To: json.RawMessage(`null`)}}},
			`~ task T-1: title "a, b" -> "->", context.x {"a":"<b>"} -> (none)`},
		{"ControlCharactersEscaped", flow.Change{Kind: "task", ID: "T-1", Op: flow.OpAdded, Title: "a\x1b[31mb"},
			`+ task T-1 a\x1b[31mb`},
		{"LongValuesCut", flow.Change{Kind: "task", ID: "T-1", Op: flow.OpChanged, Fields: []flow.FieldChange{
			{Field: "description", From: json.RawMessage(`null`), To: json.RawMessage(`"x` + strings.Repeat("é", 40) + `"`)}}},
			"~ task T-1: description (none) -> x" + strings.Repeat("é", 29) + "..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := changeLine(tc.c); got != tc.want {
				t.Errorf("changeLine = %q\nwant         %q", got, tc.want)
			}
		})
	}
}

// TestDiff_Limit: --limit N lists the first N changes of the whole diff
// and counts them all (total, truncated); a rollback's --limit likewise,
// dry run or not; a negative limit is a usage error.
func TestDiff_Limit(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	all := travelDiff(t, f.mustRun("", "diff", "C-1", "HEAD", "-o", "json"))
	if all.Total != 5 || all.Truncated || len(all.Changes) != 5 {
		t.Fatalf("diff C-1 HEAD: %d changes, total %d, truncated %v", len(all.Changes), all.Total, all.Truncated)
	}
	d := travelDiff(t, f.mustRun("", "diff", "C-1", "HEAD", "--limit", "2", "-o", "json"))
	if strings.Join(changeKeys(d.Changes), ",") != strings.Join(changeKeys(all.Changes[:2]), ",") || d.Total != 5 || !d.Truncated {
		t.Errorf("--limit 2: %v total %d truncated %v", changeKeys(d.Changes), d.Total, d.Truncated)
	}
	text := f.mustRun("", "diff", "C-1", "HEAD", "--limit", "2")
	if head := fmt.Sprintf("p from seq %d to seq %d: the first 2 of 5 changes\n", f.cp, f.head); !strings.HasPrefix(text, head) || strings.Count(text, "\n") != 3 {
		t.Errorf("--limit 2 printed\n%s\nwant it to start %q and list 2 changes", text, head)
	}
	if got := f.mustRun("", "diff", "C-1", "HEAD", "--limit", "9"); !strings.Contains(got, ": 5 changes\n") {
		t.Errorf("--limit 9 printed\n%s", got)
	}
	before := f.bytes()
	rb := f.mustRun("", "rollback", "--to", "C-1", "--dry-run", "--limit", "1")
	if !strings.HasPrefix(rb, "~ task T-1 ") || !strings.Contains(rb, "\n(the first 1 of 5 changes)\n") || strings.Count(rb, "\n") != 3 {
		t.Errorf("rollback --dry-run --limit 1 printed\n%s", rb)
	}
	var res flow.RollbackResult
	if err := json.Unmarshal([]byte(f.mustRun("", "rollback", "--to", "C-1", "--dry-run", "--limit", "1", "-o", "json")), &res); err != nil || len(res.Changes) != 1 || res.Total != 5 || !res.Truncated {
		t.Errorf("rollback --dry-run --limit 1 -o json: %+v, %v", res, err)
	}
	for _, args := range [][]string{{"diff", "C-1", "--limit", "-1"}, {"rollback", "--to", "C-1", "--dry-run", "--limit", "-1"}} {
		if _, stderr, code := f.run("", args...); code != 2 || !strings.Contains(stderr, "--limit -1") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	if !bytes.Equal(before, f.bytes()) {
		t.Fatal("a dry run changed the file")
	}
}
