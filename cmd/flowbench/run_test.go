package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun_QuickJSON runs every workload at --quick sizes on a small file,
// with a flowctl built from the tree, and checks the JSON contract.
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
		"--flowctl", bin, "--dir", filepath.Join(dir, "work"))
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
	for _, name := range []string{"append_single", "append_group8", "replay", "point_in_time", "bytes_per_event",
		"bytes_per_event_gen", "cache_hit", "cli_task_show", "cli_status", "cli_ready", "cli_task_add",
		"sqlite_append_single", "sqlite_replay"} {
		if byName[name] == nil {
			t.Errorf("no row %s", name)
		}
	}
	if r := byName["cli_task_add"]; r != nil && (r["target"] != nil || r["pass"] != true) {
		t.Errorf("cli_task_add = %v, want no target and pass", r)
	}
	left, _ := os.ReadDir(filepath.Join(dir, "work"))
	if len(left) != 2 {
		t.Errorf("the run left %d files in --dir, want the generated file and its marker: %v", len(left), left)
	}
}

// checkRowJSON checks one row's fields and that pass follows from them.
func checkRowJSON(t *testing.T, r map[string]any) {
	t.Helper()
	for _, k := range []string{"name", "value", "unit", "baseline", "ratio", "target", "target_on", "target_op", "pass"} {
		if _, ok := r[k]; !ok {
			t.Errorf("row %v has no %q", r["name"], k)
		}
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
	rows := []Row{newRow("replay", 1_234_567, 20e6, "events/s", atLeast("value", 1e6)), newRow("cache_hit", 250, 9000, "ns", atMost("value", 200))}
	if err := writeTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1234567 events/s", "value >= 1000000", "ok", "FAIL", "0.0278"} {
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
