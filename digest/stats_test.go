package digest

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestEWMA(t *testing.T) {
	tests := []struct {
		name  string
		wins  []bool
		alpha float64
		want  float64
	}{
		{"NoRecords", nil, 0.3, 0.5},
		// 0.5 -> 0.7*0.5+0.3 = 0.65 -> 0.7*0.65 = 0.455 -> 0.7*0.455+0.3 = 0.6185
		{"MixedAlpha0.3", []bool{true, false, true}, 0.3, 0.6185},
		// the seed's update: rate*0.9+0.1 on success, rate*0.9 on failure
		{"SeedSuccess", []bool{true}, 0.1, 0.55},
		{"SeedFailure", []bool{false}, 0.1, 0.45},
		// 0.5 -> 0.35 -> 0.245
		{"TwoFailures", []bool{false, false}, 0.3, 0.245},
		{"AlphaOneIsLast", []bool{true, true, false}, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ewmaOf(tt.wins, tt.alpha, EWMAPrior); !near(got, tt.want) {
				t.Errorf("ewma(%v, %v) = %v, want %v", tt.wins, tt.alpha, got, tt.want)
			}
		})
	}
}

func TestNearestRank(t *testing.T) {
	tests := []struct {
		sorted []float64
		p      float64
		want   float64
	}{
		{[]float64{7}, 50, 7},
		{[]float64{1, 2, 3}, 50, 2},
		{[]float64{1, 2, 3, 4}, 50, 2},
		{[]float64{1, 2, 3, 4, 100}, 50, 3},
		{[]float64{1, 2, 3, 4}, 100, 4},
		{[]float64{1, 2, 3, 4}, 0, 1},
	}
	for _, tt := range tests {
		if got := nearestRank(tt.sorted, tt.p); got != tt.want {
			t.Errorf("nearestRank(%v, %v) = %v, want %v", tt.sorted, tt.p, got, tt.want)
		}
	}
}

func TestElapsedOf(t *testing.T) {
	got := elapsedOf([]float64{30, 10, math.NaN(), 20, 100})
	want := ElapsedStats{Count: 4, Mean: 40, P50: 20, Max: 100}
	if got != want {
		t.Errorf("elapsedOf = %+v, want %+v", got, want)
	}
	if got := elapsedOf(nil); got != (ElapsedStats{}) {
		t.Errorf("elapsedOf(nil) = %+v, want zeros", got)
	}
}

func TestCommandKey(t *testing.T) {
	tests := []struct {
		command, code string
		key, tool     string
	}{
		{"go test ./...", "", "go test", "go"},
		{"go test -race ./flow", "", "go test", "go"},
		{"/usr/local/go/bin/go vet ./...", "", "go vet", "go"},
		{"npm run build", "", "npm run", "npm"},
		{"ls -la", "", "ls", "ls"},
		{"make", "", "make", "make"},
		{"CGO_ENABLED=0 FOO=bar go build", "", "go build", "go"},
		{`'my tool' "sub cmd" x`, "", "my tool sub cmd", "my tool"},
		{"./build.sh --fast", "", "build.sh", "build.sh"},
		{`go\ tool x`, "", "go tool x", "go tool"},
		{"", "print(1)", "code", "code"},
		{"   ", "", "unknown", "unknown"},
	}
	for _, tt := range tests {
		key, tool := CommandKey(&projection.Exec{ExecRecorded: projection.ExecRecorded{Command: tt.command, Code: tt.code}})
		if key != tt.key || tool != tt.tool {
			t.Errorf("CommandKey(%q, code %q) = %q, %q; want %q, %q", tt.command, tt.code, key, tool, tt.key, tt.tool)
		}
	}
}

// statsFixture records, in this order: T-1 go test ok 10ms, T-1 go test
// failed 30ms, T-2 npm test ok 20ms, code ok 5ms (no task), T-2 go vet ok
// 40ms, T-1 go test ok 20ms.
func statsFixture(tb testing.TB, e *flow.Engine) {
	tb.Helper()
	statusProject(tb, e, "alpha")
	statusTask(tb, e, "alpha", "one")
	statusTask(tb, e, "alpha", "two")
	records := []projection.ExecRecorded{
		{Task: "T-1", Command: "go test ./...", Success: true, ElapsedMS: 10},
		{Task: "T-1", Command: "go test -run X", ExitCode: 1, ElapsedMS: 30},
		{Task: "T-2", Command: "npm test", Success: true, ElapsedMS: 20},
		{Code: "x = 1", Success: true, ElapsedMS: 5},
		{Task: "T-2", Command: "go vet ./...", Success: true, ElapsedMS: 40},
		{Task: "T-1", Command: "go test ./flow", Success: true, ElapsedMS: 20},
	}
	for i, x := range records {
		x.ID = projection.ShortID(projection.PrefixExec, i+1)
		statusExec(tb, e, "alpha", x)
	}
}

func TestStats(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := flowtest.Open(t)
		statsFixture(t, e)
		st, err := Stats(e, "alpha", StatsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Alpha != DefaultAlpha || st.Prior != EWMAPrior {
			t.Errorf("alpha, prior = %v, %v; want %v, %v", st.Alpha, st.Prior, DefaultAlpha, EWMAPrior)
		}
		wantTotal := Outcomes{Runs: 6, Successes: 5, Failures: 1, SuccessRate: 0.833333,
			Elapsed: ElapsedStats{Count: 6, Mean: 20.833333, P50: 20, Max: 40}}
		if st.Total != wantTotal {
			t.Errorf("total = %+v, want %+v", st.Total, wantTotal)
		}
		var cmds []string
		for _, c := range st.Commands {
			cmds = append(cmds, c.Command)
		}
		if got := strings.Join(cmds, ","); got != "code,go test,go vet,npm test" {
			t.Errorf("commands = %s, want code,go test,go vet,npm test", got)
		}
		goTest := st.Commands[1]
		if goTest.Runs != 3 || goTest.Failures != 1 || !near(goTest.SuccessRate, 0.666667) || goTest.Elapsed.P50 != 20 || goTest.Elapsed.Max != 30 {
			t.Errorf("go test = %+v", goTest)
		}
		var tasks []string
		for _, ts := range st.Tasks {
			tasks = append(tasks, ts.Task+"="+ts.Title)
		}
		if got := strings.Join(tasks, ","); got != "T-1=one,T-2=two,=" {
			t.Errorf("tasks = %s, want T-1=one,T-2=two,= (no task last)", got)
		}
		// go: ok, failed, ok, ok -> 0.65, 0.455, 0.6185, 0.73295
		wantTools := map[string]float64{"code": 0.65, "go": 0.73295, "npm": 0.65}
		if len(st.Tools) != len(wantTools) {
			t.Fatalf("tools = %+v, want %v", st.Tools, wantTools)
		}
		for _, tool := range st.Tools {
			if !near(tool.EWMA, wantTools[tool.Tool]) {
				t.Errorf("ewma of %s = %v, want %v", tool.Tool, tool.EWMA, wantTools[tool.Tool])
			}
		}
		if st.Tools[1].Tool != "go" || st.Tools[1].Runs != 4 || st.Tools[1].LastSeq == 0 {
			t.Errorf("tools[1] = %+v, want go with 4 runs", st.Tools[1])
		}
	})
	t.Run("Alpha", func(t *testing.T) {
		e := flowtest.Open(t)
		statsFixture(t, e)
		st, err := Stats(e, "alpha", StatsOptions{Alpha: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		// go: 0.5 -> 0.75 -> 0.375 -> 0.6875 -> 0.84375
		if st.Tools[1].Tool != "go" || !near(st.Tools[1].EWMA, 0.84375) {
			t.Errorf("go with alpha 0.5 = %+v, want ewma 0.84375", st.Tools[1])
		}
	})
	t.Run("Empty", func(t *testing.T) {
		e := flowtest.Open(t)
		statusProject(t, e, "alpha")
		st, err := Stats(e, "alpha", StatsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(st)
		for _, key := range []string{`"commands":[]`, `"tasks":[]`, `"tools":[]`, `"runs":0`} {
			if !strings.Contains(string(b), key) {
				t.Errorf("JSON %s lacks %s", b, key)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := flowtest.Open(t)
		statusProject(t, e, "alpha")
		for _, alpha := range []float64{-0.1, 1.5, math.NaN(), math.Inf(1)} {
			if _, err := Stats(e, "alpha", StatsOptions{Alpha: alpha}); !errors.Is(err, flow.ErrInvalid) {
				t.Errorf("alpha %v: err = %v, want ErrInvalid", alpha, err)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := flowtest.Open(t)
		if _, err := Stats(e, "nope", StatsOptions{}); !errors.Is(err, flow.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
}
