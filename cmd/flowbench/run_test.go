package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRun_QuickJSON runs every workload at --quick sizes on a small file,
// with a flowctl built from the tree behind a wrapper that refuses
// `diff`, and checks the JSON contract, the rows of issue 15 and that a
// refused command fails its row, not the run.
func TestRun_QuickJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds flowctl and measures for several seconds")
	}
	dir := t.TempDir()
	bin, err := buildFlowctl(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runArgs(t, "run", "--quick", "--events", "2000", "--projects", "2", "-o", "json",
		"--flowctl", refusing(t, bin, "diff"), "--dir", filepath.Join(dir, "work"))
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil {
		t.Fatalf("stdout is not a JSON array: %v\n%s", err, stdout)
	}
	byName := map[string]map[string]any{}
	for _, r := range rows {
		checkRowJSON(t, r)
		byName[r["name"].(string)] = r
	}
	for _, name := range []string{"append_single", "append_group8", "replay", "replay_parallel", "point_in_time", "bytes_per_event",
		"bytes_per_event_gen", "cache_hit", "cli_task_show", "cli_status", "cli_ready", "cli_task_add",
		"sqlite_append_single", "sqlite_replay", "gen", "cli_search_project", "cli_search_all", "cli_search_all_two"} {
		if byName[name] == nil {
			t.Errorf("no row %s", name)
		}
	}
	if r := byName["cli_task_add"]; r != nil && (r["target"] != nil || r["pass"] != true) {
		t.Errorf("cli_task_add = %v, want no target and pass", r)
	}
	checkIssue15Rows(t, byName)
	left, _ := os.ReadDir(filepath.Join(dir, "work"))
	if len(left) != 2 {
		t.Errorf("the run left %d files in --dir, want the generated file and its marker: %v", len(left), left)
	}
}

// issue15Rows are the rows of issue 15 that run flowctl, with the RSS
// limit of each (0: none).
var issue15Rows = map[string]float64{
	"cli_log_tail": 64, "cli_log_project": 64, "cli_log_type": 64, "cli_ctx_history": 64, "cli_prime": 64,
	"cli_report_task": 64, "cli_status_at": 64, "cli_diff": 128, "cli_task_ls": 64,
	"cli_task_show": 64, "cli_status": 64, "cli_ready": 64, "cli_task_add": 0,
	"cli_export": 0, "cli_import": 0, "cli_verify": 0, "cli_rebuild_project": 0,
}

// refusedToday are the rows whose command today's flowctl refuses
// (rebuild takes no --project yet): they may fail with an error.
var refusedToday = map[string]bool{"cli_rebuild_project": true}

// checkIssue15Rows checks that every row of issue 15 is there with its
// target and RSS filled in, and that cli_diff, refused by the wrapper,
// failed with the wrapper's message.
func checkIssue15Rows(t *testing.T, byName map[string]map[string]any) {
	t.Helper()
	for name, limit := range issue15Rows {
		r := byName[name]
		switch {
		case r == nil:
			t.Errorf("no row %s", name)
			continue
		case name == "cli_diff":
			if msg, _ := r["error"].(string); !strings.Contains(msg, "flowbench test refuses diff") || r["pass"] != false {
				t.Errorf("cli_diff = %v, want the refusal as its error and a failure", r)
			}
			continue
		case r["error"] != nil && refusedToday[name]:
			t.Logf("%s: %v", name, r["error"])
			continue
		case r["error"] != nil:
			t.Errorf("%s failed: %v", name, r["error"])
			continue
		}
		if name != "cli_task_add" && r["target"] == nil {
			t.Errorf("%s has no target", name)
		}
		rss, _ := r["rss_mib"].(float64)
		if runtime.GOOS == "linux" && (rss < 1 || rss > 4096) {
			t.Errorf("%s: rss_mib %v, want the peak RSS of flowctl", name, r["rss_mib"])
		}
		if got, _ := r["rss_target_mib"].(float64); rss > 0 && got != limit {
			t.Errorf("%s: rss_target_mib %v, want %v", name, r["rss_target_mib"], limit)
		}
	}
}

// refusing writes a wrapper of flowctl that refuses the command cmd (exit
// 3, a message on stderr) and runs bin for every other one.
func refusing(t *testing.T, bin, cmd string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the wrapper is a shell script")
	}
	path := filepath.Join(t.TempDir(), "flowctl")
	script := "#!/bin/sh\nfor a in \"$@\"; do\n\tif [ \"$a\" = " + cmd + " ]; then echo 'flowbench test refuses " + cmd +
		"' >&2; exit 3; fi\ndone\nexec " + bin + " \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkRowJSON checks one row's fields and that pass follows from them.
func checkRowJSON(t *testing.T, r map[string]any) {
	t.Helper()
	for _, k := range []string{"name", "value", "unit", "baseline", "ratio", "target", "target_on", "target_op", "pass"} {
		if _, ok := r[k]; !ok {
			t.Errorf("row %v has no %q", r["name"], k)
		}
	}
	if msg, _ := r["error"].(string); msg != "" {
		if r["pass"] != false {
			t.Errorf("row %v failed with %q but passes", r["name"], msg)
		}
		return
	}
	value, _ := r["value"].(float64)
	if value <= 0 || r["unit"] == "" {
		t.Errorf("row %v: value %v %v", r["name"], r["value"], r["unit"])
	}
	if r["target"] == nil {
		if r["pass"] != true || r["target_on"] != nil {
			t.Errorf("row %v without a target: pass %v, target_on %v", r["name"], r["pass"], r["target_on"])
		}
		return
	}
	g := &goal{on: r["target_on"].(string), op: r["target_op"].(string), limit: r["target"].(float64)}
	x := value
	if g.on == "ratio" {
		x = r["ratio"].(float64)
	}
	if r["pass"] != g.met(x) {
		t.Errorf("row %v: pass %v, but %v %s %v is %v", r["name"], r["pass"], x, g.op, g.limit, g.met(x))
	}
}

func TestNewRow(t *testing.T) {
	for _, c := range []struct {
		name            string
		value, baseline float64
		g               *goal
		pass            bool
	}{
		{"RatioAtMostOK", 13, 10, atMost("ratio", 1.3), true},
		{"RatioAtMostFail", 14, 10, atMost("ratio", 1.3), false},
		{"RatioAtLeastOK", 50, 10, atLeast("ratio", 5), true},
		{"RatioAtLeastFail", 49, 10, atLeast("ratio", 5), false},
		{"ValueAtLeast", 999_999, 5e6, atLeast("value", 1e6), false},
		{"ValueAtMost", 1.5, 0.01, atMost("value", 2), true},
		{"NoTarget", 1e9, 1, nil, true},
		{"NoBaseline", 1, 0, atMost("ratio", 2), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRow("x", c.value, c.baseline, "ms", c.g)
			if r.Pass != c.pass {
				t.Fatalf("newRow(%v, %v, %+v).Pass = %v, want %v", c.value, c.baseline, c.g, r.Pass, c.pass)
			}
		})
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	rows := []Row{newRow("replay", 1_234_567, 20e6, "events/s", atLeast("value", 1e6)), newRow("cache_hit", 250, 9000, "ns", atMost("value", 200)),
		newRow("cli_prime", 30, 6, "ms", atMost("ratio", 5)).withRSS(70<<10, 64),
		newRow("cli_rebuild_project", 0, 0, "s", atMost("value", 1)).withError(errors.New("flowctl: refused"))}
	if err := writeTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1234567 events/s", "value >= 1000000", "ok", "FAIL", "0.0278", "70.0 MiB <= 64.0", "cli_rebuild_project: flowctl: refused"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

func TestRow_WithRSS(t *testing.T) {
	for _, c := range []struct {
		name      string
		pass      bool // the row's figure
		kib       int64
		limit     float64
		want      bool
		wantRSS   bool
		wantLimit bool
	}{
		{"Under", true, 40 << 10, 64, true, true, true},
		{"Over", true, 65 << 10, 64, false, true, true},
		{"OverNoLimit", true, 900 << 10, 0, true, true, false},
		{"FigureFails", false, 1 << 10, 64, false, true, true},
		{"Unknown", true, 0, 64, true, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Row{Name: "x", Pass: c.pass}.withRSS(c.kib, c.limit)
			if r.Pass != c.want || (r.RSSMiB != nil) != c.wantRSS || (r.RSSTarget != nil) != c.wantLimit {
				t.Fatalf("withRSS(%d, %v) = pass %v, rss %v, limit %v", c.kib, c.limit, r.Pass, r.RSSMiB, r.RSSTarget)
			}
		})
	}
	if r := (Row{Pass: true}).withError(errors.New("refused")); r.Pass || r.Error != "refused" {
		t.Errorf("withError = %+v, want a failure with the error", r)
	}
	if r := (Row{Pass: true}).withError(nil); !r.Pass || r.Error != "" {
		t.Errorf("withError(nil) = %+v, want the row as it was", r)
	}
}

func TestInterleaveEach(t *testing.T) {
	calls := [3]int{}
	ok := func(i int, x float64) measurement {
		return func() (float64, error) { calls[i]++; return x, nil }
	}
	failing := func() (float64, error) { calls[1]++; return 0, errors.New("refused") }
	m, errs, err := interleaveEach(t.Context(), 3, ok(0, 5), failing, ok(2, 7))
	if err != nil {
		t.Fatal(err)
	}
	if m[0] != 5 || m[1] != 0 || m[2] != 7 || errs[0] != nil || errs[1] == nil || errs[2] != nil {
		t.Fatalf("interleaveEach = %v, %v", m, errs)
	}
	if calls != [3]int{3, 1, 3} {
		t.Errorf("calls %v: want a failed measurement dropped after its failure", calls)
	}
}

func TestCopyLines(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	if err := os.WriteFile(src, []byte("a\nb\nc\nd"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n, want int
		content string
	}{{2, 2, "a\nb\n"}, {4, 4, "a\nb\nc\nd"}, {9, 4, "a\nb\nc\nd"}, {0, 0, ""}} {
		got, err := copyLines(dst, src, c.n)
		b, _ := os.ReadFile(dst)
		if err != nil || got != c.want || string(b) != c.content {
			t.Errorf("copyLines(%d) = %d, %v, %q; want %d, %q", c.n, got, err, b, c.want, c.content)
		}
	}
	if n, err := countLines(src); err != nil || n != 3 {
		t.Errorf("countLines = %d, %v; want 3 newlines", n, err)
	}
}
