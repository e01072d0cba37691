package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// primeSetup makes project web with T-1 held by the test actor (context,
// a step, a failed exec record), T-2 after T-1 (with some history) and T-3
// ready, a memory note and a checkpoint: 13 events.
func primeSetup(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "web")
	f.mustRun("", "task", "add", "write the parser")
	f.mustRun("", "task", "add", "test the parser", "--dep", "T-1")
	f.mustRun("", "task", "add", "write the docs", "--priority", "2")
	f.mustRun("", "task", "edit", "T-2", "--tag", "tests")
	f.mustRun("", "task", "block", "T-2")
	f.mustRun("", "task", "reopen", "T-2")
	f.mustRun("", "task", "claim", "T-1")
	f.mustRun("", "ctx", "merge", "T-1", `{"branch":"parser"}`)
	f.mustRun("", "step", "add", "T-1", "sketch the grammar")
	f.mustRun("", "exec", "record", `{"task":"T-1","command":"go test ./parser","exit_code":1,"stderr":"FAIL parser"}`)
	f.mustRun("", "note", "add", "--kind", "memory", "deploys need the VPN")
	f.mustRun("", "checkpoint", "--label", "before the parser")
	return f
}

func TestPrime(t *testing.T) {
	t.Parallel()
	f := primeSetup(t)

	t.Run("OK", func(t *testing.T) {
		stdout := f.mustRun("", "prime")
		for _, want := range []string{
			"# Prime: web\n\n- project: web\n- for: tester, at seq ",
			"- holding: T-1\n",
			"\n## Your task: T-1 write the parser\n\n- status todo · priority 0 · claimed until ",
			"\nContext (version 1):\n\n```json\n{\n  \"branch\": \"parser\"\n}\n```\n",
			"- [ ] T-1.1 sketch the grammar: pending 0%\n",
			"\n- X-1 go test ./parser: exit 1, failed, ",
			"\n## Ready to start\n\n- T-3 write the docs (priority 2)\n- T-1 write the parser (priority 0)\n",
			"\n## Last checkpoint\n\n- C-1 \"before the parser\" at seq ",
			": deploys need the VPN\n",
			"\n## Recent events (short-term memory)\n\n",
			"\n## Older history (long-term memory)\n\n",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("prime lacks %q:\n%s", want, stdout)
			}
		}
		if strings.Contains(stdout, "_left out") {
			t.Errorf("the default budget left something out:\n%s", stdout)
		}
	})

	t.Run("JSON", func(t *testing.T) {
		var got struct {
			Markdown string            `json:"markdown"`
			Budget   int               `json:"budget"`
			Limit    int               `json:"limit"`
			Bytes    int               `json:"bytes"`
			Held     []json.RawMessage `json:"held"`
			Ready    []struct {
				ID string `json:"id"`
			} `json:"ready"`
			LeftOut []struct {
				Part string   `json:"part"`
				IDs  []string `json:"ids"`
			} `json:"left_out"`
		}
		stdout := f.mustRun("", "prime", "-o", "json", "--budget", "150")
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("prime -o json: %v\n%s", err, stdout)
		}
		if got.Budget != 150 || got.Limit != 600 || got.Bytes != len(got.Markdown) || got.Bytes > 600 {
			t.Errorf("budget %d, limit %d, bytes %d (markdown %d)", got.Budget, got.Limit, got.Bytes, len(got.Markdown))
		}
		if len(got.LeftOut) == 0 || !strings.Contains(got.Markdown, "\n_left out: ") {
			t.Errorf("a 150-token prime left nothing out: %+v\n%s", got.LeftOut, got.Markdown)
		}
		if len(got.Held) != 1 {
			t.Errorf("held = %d tasks, want T-1", len(got.Held))
		}
	})

	t.Run("Budget", func(t *testing.T) {
		for _, budget := range []int{1, 40, 120, 400} {
			stdout := f.mustRun("", "prime", "--budget", strconv.Itoa(budget))
			if len(stdout) > 4*budget {
				t.Errorf("--budget %d printed %d bytes, over %d", budget, len(stdout), 4*budget)
			}
		}
	})

	t.Run("ActorAndSession", func(t *testing.T) {
		stdout, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_ACTOR": "someone", "FLOW_SESSION": "s9"}, "", "prime")
		if code != 0 || !strings.Contains(stdout, "- for: someone (session s9), at seq ") || !strings.Contains(stdout, "- holding: no task") {
			t.Errorf("exit %d, stderr %q:\n%s", code, stderr, stdout)
		}
	})
}

func TestPrime_BadInput(t *testing.T) {
	t.Parallel()
	f := primeSetup(t)
	before := f.bytes()
	for _, tc := range []struct {
		name string
		args []string
		code int
		fact string
	}{
		{"NegativeBudget", []string{"prime", "--budget", "-1"}, 2, "budget -1"},
		{"HugeBudget", []string{"prime", "--budget", "99999999"}, 2, "budget 99999999"},
		{"NotANumber", []string{"prime", "--budget", "lots"}, 2, "lots"},
		{"Argument", []string{"prime", "T-1"}, 2, "T-1"},
		{"UnknownProject", []string{"prime", "--project", "nope"}, 3, "nope"},
		{"NoFile", []string{"prime", "--db", filepath.Join(t.TempDir(), "none.db")}, 3, "none.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := f.run("", tc.args...)
			wantError(t, stderr, code, tc.code, tc.fact)
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}
	t.Run("JSONError", func(t *testing.T) {
		_, stderr, code := f.run("", "prime", "--budget", "-5", "-o", "json")
		wantJSONError(t, stderr, code, 2, "invalid")
	})
	if !bytes.Equal(f.bytes(), before) {
		t.Errorf("the file changed")
	}
}
