package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// statsJSON is `stats -o json` as the README documents it.
type statsJSON struct {
	Project  string  `json:"project"`
	Alpha    float64 `json:"alpha"`
	Prior    float64 `json:"prior"`
	Total    statsOutcomes
	Commands []struct {
		Command string `json:"command"`
		Tool    string `json:"tool"`
		statsOutcomes
	} `json:"commands"`
	Tasks []struct {
		Task string `json:"task"`
		statsOutcomes
	} `json:"tasks"`
	Tools []struct {
		Tool    string  `json:"tool"`
		EWMA    float64 `json:"ewma"`
		LastSeq uint64  `json:"last_seq"`
		statsOutcomes
	} `json:"tools"`
}

type statsOutcomes struct {
	Runs        int     `json:"runs"`
	Successes   int     `json:"successes"`
	Failures    int     `json:"failures"`
	SuccessRate float64 `json:"success_rate"`
	Elapsed     struct {
		Count int     `json:"count"`
		Mean  float64 `json:"mean"`
		P50   float64 `json:"p50"`
		Max   float64 `json:"max"`
	} `json:"elapsed_ms"`
}

func decodeStats(t *testing.T, stdout string) statsJSON {
	t.Helper()
	var st statsJSON
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("stats -o json is not the stats object: %v\n%s", err, stdout)
	}
	return st
}

func TestStats(t *testing.T) {
	t.Parallel()
	f := statusFile(t)

	t.Run("Text", func(t *testing.T) {
		stdout, stderr, code := f.run("", "stats")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		golden(t, "stats_text.golden", stdout)
	})

	t.Run("JSON", func(t *testing.T) {
		st := decodeStats(t, f.mustRun("", "stats", "-o", "json"))
		if st.Alpha != 0.3 || st.Prior != 0.5 || st.Total.Runs != 5 || st.Total.Failures != 1 {
			t.Errorf("alpha %v, prior %v, total %+v", st.Alpha, st.Prior, st.Total)
		}
		var cmds []string
		for _, c := range st.Commands {
			cmds = append(cmds, c.Command)
		}
		if got := strings.Join(cmds, ","); got != "code,go test,npm run" {
			t.Errorf("commands = %s, want code,go test,npm run", got)
		}
		// go test: X-1 1200 ok, X-2 3400 failed, X-5 1000 ok
		g := st.Commands[1]
		if g.Runs != 3 || g.Elapsed.P50 != 1200 || g.Elapsed.Max != 3400 || math.Abs(g.Elapsed.Mean-1866.666667) > 1e-6 || math.Abs(g.SuccessRate-0.666667) > 1e-6 {
			t.Errorf("go test = %+v", g)
		}
		var tasks []string
		for _, x := range st.Tasks {
			tasks = append(tasks, x.Task)
		}
		if got := strings.Join(tasks, ","); got != "T-1,T-3," {
			t.Errorf("tasks = %q, want T-1,T-3, (no task last)", got)
		}
		// go: 0.5 -> 0.65 -> 0.455 -> 0.6185
		if st.Tools[1].Tool != "go" || math.Abs(st.Tools[1].EWMA-0.6185) > 1e-9 || st.Tools[1].LastSeq != 30 {
			t.Errorf("tools[1] = %+v, want go, ewma 0.6185, last seq 30", st.Tools[1])
		}
	})

	t.Run("Alpha", func(t *testing.T) {
		st := decodeStats(t, f.mustRun("", "stats", "--alpha", "0.5", "--json"))
		// go: 0.5 -> 0.75 -> 0.375 -> 0.6875
		if st.Alpha != 0.5 || math.Abs(st.Tools[1].EWMA-0.6875) > 1e-9 {
			t.Errorf("alpha %v, go ewma %v; want 0.5, 0.6875", st.Alpha, st.Tools[1].EWMA)
		}
	})

	t.Run("BadFlags", func(t *testing.T) {
		for _, alpha := range []string{"0", "1.5", "-0.3", "NaN", "abc", ""} {
			statusUnchanged(t, f, 2, "stats", "--alpha", alpha)
		}
		statusUnchanged(t, f, 2, "stats", "extra")
		statusUnchanged(t, f, 2, "stats", "--bogus")
		before := f.bytes()
		_, stderr, code := f.run("", "stats", "--alpha", "2", "-o", "json")
		wantJSONError(t, stderr, code, 2, "invalid")
		if string(before) != string(f.bytes()) {
			t.Errorf("stats --alpha 2 changed the file")
		}
	})
}

func TestStats_Empty(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "empty")
	stdout, stderr, code := f.run("", "stats")
	if code != 0 || stderr != "" || !strings.Contains(stdout, "No exec records") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and 'No exec records'", code, stdout, stderr)
	}
	out := f.mustRun("", "stats", "-o", "json")
	for _, want := range []string{`"commands":[]`, `"tasks":[]`, `"tools":[]`, `"runs":0`} {
		if !strings.Contains(out, want) {
			t.Errorf("stats JSON lacks %s: %s", want, out)
		}
	}
}
