package legacy

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
)

// TestImportLegacy_EveryBadEntry: a file with several bad entries is
// refused with all of them, each with its line, in one run, and nothing
// is written.
func TestImportLegacy_EveryBadEntry(t *testing.T) {
	cases := []struct {
		name, format, file, project, doc string
		lines                            []int
	}{
		{"History", FromHistoryJSON, "workflow_history.json", "p",
			"[\n{\"ts\": \"2025-01-01T00:00:00Z\", \"event\": \"add_task\"},\n{\"ts\": \"x\", \"event\": \"a\"},\n{\"event\": \"\"},\n{\"event\": \"ok\"},\n{\"ts\": 1}\n]", []int{3, 4, 6}},
		{"Exec", FromExecJSONL, "exec_log.jsonl", "p",
			"{\"timestamp\": \"2025-01-01T00:00:00Z\", \"code\": \"x=1\", \"success\": true}\n{\"code\": \"y\"}\n\n{\"timestamp\": \"2025-01-01T00:00:00Z\"}\n", []int{2, 4}},
		{"Workflow", FromWorkflowJSON, "workflow.json", "",
			"{\"project\": \"q\", \"tasks\": [\n{\"id\": \"T1\", \"name\": \"a\"},\n{\"id\": \"T2\"},\n{\"id\": \"T1\", \"name\": \"b\"},\n{\"name\": \"c\"}]}", []int{3, 4, 5}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := flowtest.Open(t)
			if _, err := e.CreateProject(flow.NewProject{Name: "p"}); err != nil {
				t.Fatal(err)
			}
			before := legacyFileBytes(t, e)
			_, err := importText(e, c.format, c.file, c.project, c.doc)
			var bad BadEntries
			if !errors.As(err, &bad) || !errors.Is(err, flow.ErrInvalid) {
				t.Fatalf("err = %v, want BadEntries of ErrInvalid", err)
			}
			var lines []int
			for _, ie := range bad {
				lines = append(lines, ie.Line)
				if ie.File != c.file {
					t.Errorf("entry at %s:%d", ie.File, ie.Line)
				}
			}
			if len(lines) != len(c.lines) || !slices.Equal(lines, c.lines) {
				t.Errorf("lines %v, want %v (%v)", lines, c.lines, err)
			}
			msg := err.Error()
			for _, l := range c.lines {
				if !strings.Contains(msg, c.file+":"+strconv.Itoa(l)+":") {
					t.Errorf("message lacks line %d: %s", l, msg)
				}
			}
			var first *ImportError
			if !errors.As(err, &first) || first.Line != c.lines[0] {
				t.Errorf("errors.As finds %v, want line %d", first, c.lines[0])
			}
			if string(legacyFileBytes(t, e)) != string(before) {
				t.Errorf("a refused import changed the file")
			}
		})
	}
}
