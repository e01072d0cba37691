package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// execJSON is an exec record as -o json prints it.
type execJSON struct {
	ID           string     `json:"id"`
	Task         string     `json:"task"`
	Step         string     `json:"step"`
	Plan         string     `json:"plan"`
	Command      string     `json:"command"`
	Code         string     `json:"code"`
	Cwd          string     `json:"cwd"`
	ExitCode     int        `json:"exit_code"`
	Success      bool       `json:"success"`
	ElapsedMS    float64    `json:"elapsed_ms"`
	Stdout       execOutput `json:"stdout"`
	Stderr       execOutput `json:"stderr"`
	AddedVars    []string   `json:"added_vars"`
	AddedImports []string   `json:"added_imports"`
	GitHead      string     `json:"git_head"`
	Actor        string     `json:"actor"`
	Version      uint64     `json:"version"`
	CreatedAt    string     `json:"created_at"`
	OccurredAt   string     `json:"occurred_at"`
}

type execOutput struct {
	Head   string `json:"head"`
	Tail   string `json:"tail"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// execShow returns record id as `exec show -o json` prints it.
func execShow(t *testing.T, f *flowFile, id string) execJSON {
	t.Helper()
	return apprDecode[execJSON](t, f.mustRun("", "exec", "show", id, "-o", "json"))
}

// execNeedsShell skips a test on a system without sh.
func execNeedsShell(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on this system")
	}
}

func TestExec_Run(t *testing.T) {
	t.Parallel()
	execNeedsShell(t)
	t.Run("PassesThroughAndRecords", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		stdout, stderr, code := f.run("", "exec", "run", "--task", "T-1", "--", "sh", "-c", "echo out; echo err >&2; exit 3")
		if code != 3 {
			t.Errorf("exit code = %d, want the command's 3", code)
		}
		if stdout != "out\n" {
			t.Errorf("stdout = %q, want the command's own %q", stdout, "out\n")
		}
		if rest, ok := strings.CutPrefix(stderr, "err\n"); !ok || !oneError(rest) || !strings.Contains(rest, "X-1") {
			t.Errorf("stderr = %q, want the command's err line, then one error naming X-1", stderr)
		}
		x := execShow(t, f, "X-1")
		if x.ExitCode != 3 || x.Success || x.Task != "T-1" || x.Cwd != f.dir || x.Command != "sh -c 'echo out; echo err >&2; exit 3'" ||
			x.ElapsedMS <= 0 || x.Actor != "tester" {
			t.Errorf("record = %+v", x)
		}
		if x.Stdout != (execOutput{Head: "out\n", Bytes: 4, SHA256: apprSHA("out\n")}) ||
			x.Stderr != (execOutput{Head: "err\n", Bytes: 4, SHA256: apprSHA("err\n")}) {
			t.Errorf("stdout %+v, stderr %+v; want the captured streams", x.Stdout, x.Stderr)
		}
		logged := f.logEvents("--type", "exec.recorded")
		if len(logged) != 1 || logged[0].Stream != "task/website/T-1" {
			t.Errorf("events = %+v, want one on the task's stream", logged)
		}
	})
	t.Run("SuccessAddsNothingToStdout", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		stdout, stderr, code := f.run("", "exec", "run", "--", "sh", "-c", "printf hi")
		if code != 0 || stdout != "hi" || !strings.HasPrefix(stderr, "flowctl: recorded X-1") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("exit %d, stdout %q, stderr %q; want 0, exactly hi, one recorded line", code, stdout, stderr)
		}
		stdout, stderr, code = f.run("", "-q", "exec", "run", "-o", "json", "--", "sh", "-c", "printf hi")
		if code != 0 || stdout != "hi" || stderr != "" {
			t.Errorf("-q -o json: exit %d, stdout %q, stderr %q; want 0, hi, nothing", code, stdout, stderr)
		}
		if x := execShow(t, f, "X-1"); !x.Success || x.Task != "" || x.Stdout.Head != "hi" {
			t.Errorf("record = %+v, want a successful project-level exec", x)
		}
		if logged := f.logEvents("--type", "exec.recorded"); len(logged) != 2 || logged[0].Stream != "project/website" {
			t.Errorf("events = %+v, want two on the project's stream", logged)
		}
	})
	t.Run("Stdin", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		stdout, _, code := f.run("piped\n", "exec", "run", "-q", "--", "cat")
		if code != 0 || stdout != "piped\n" {
			t.Errorf("exit %d, stdout %q; want the command to read flowctl's stdin", code, stdout)
		}
	})
	t.Run("BigOutput", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		script := `i=0; while [ $i -lt 2000 ]; do echo "line $i of the output, padded to be long enough"; i=$((i+1)); done`
		stdout, _, code := f.run("", "-q", "exec", "run", "--", "sh", "-c", script)
		if code != 0 || len(stdout) < 64<<10 {
			t.Fatalf("exit %d, %d bytes of stdout", code, len(stdout))
		}
		x := execShow(t, f, "X-1")
		if x.Stdout.Bytes != int64(len(stdout)) || x.Stdout.SHA256 != apprSHA(stdout) {
			t.Errorf("bytes %d sha %s; want %d %s", x.Stdout.Bytes, x.Stdout.SHA256, len(stdout), apprSHA(stdout))
		}
		if x.Stdout.Head != stdout[:16<<10] || x.Stdout.Tail != stdout[len(stdout)-16<<10:] {
			t.Errorf("head %d bytes, tail %d bytes; want the first and last 16 KiB", len(x.Stdout.Head), len(x.Stdout.Tail))
		}
	})
	t.Run("TaskFromEnv", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		f.mustRun("", "plan", "new", "release")
		env := map[string]string{"FLOW_TASK_ID": "T-2", "FLOW_PLAN_ID": "P-1"}
		stdout, stderr, code := runCLIEnv(t, f.dir, env, "", "exec", "run", "sh", "-c", "echo $FLOW_PROJECT $FLOW_TASK_ID $FLOW_PLAN_ID")
		if code != 0 || stdout != "website T-2 P-1\n" {
			t.Errorf("exit %d, stdout %q, stderr %q; want the command to see its project, task and plan", code, stdout, stderr)
		}
		if x := execShow(t, f, "X-1"); x.Task != "T-2" || x.Plan != "P-1" {
			t.Errorf("record task %q plan %q, want T-2 and P-1", x.Task, x.Plan)
		}
	})
	t.Run("NestedFlowctlGetsTheLock", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		// The command is flowctl itself (this test binary, see TestMain),
		// recording an exec while the outer run waits for it: it finds the
		// project and task in its environment and the file unlocked.
		script := `FLOWCTL_TEST_MAIN=1 FLOW_ACTOR=tester "$0" -- --lock-timeout 500ms exec record '{"command":"inner","success":true}'`
		stdout, stderr, code := f.run("", "exec", "run", "--task", "T-1", "--", "sh", "-c", script, os.Args[0])
		if code != 0 || stdout != "Recorded X-1 (exit 0)\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		inner, outer := execShow(t, f, "X-1"), execShow(t, f, "X-2")
		if inner.Command != "inner" || inner.Task != "T-1" || outer.Task != "T-1" || outer.Stdout.Head != stdout {
			t.Errorf("inner %+v\nouter %+v", inner, outer)
		}
	})
	t.Run("FlagsAfterCommandAreItsOwn", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		stdout, _, code := f.run("", "-q", "exec", "run", "echo", "--task", "T-9")
		if code != 0 || stdout != "--task T-9\n" {
			t.Errorf("exit %d, stdout %q; want echo to get the flags", code, stdout)
		}
		if x := execShow(t, f, "X-1"); x.Task != "" || x.Command != "echo --task T-9" {
			t.Errorf("record = %+v", x)
		}
	})
	t.Run("GitHead", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("no git")
		}
		for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "x"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = f.dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Skipf("git %v: %v %s", args, err, out)
			}
		}
		head := gitHead(f.dir)
		f.mustRun("", "-q", "exec", "run", "true")
		if x := execShow(t, f, "X-1"); len(head) < 40 || x.GitHead != head {
			t.Errorf("git_head = %q, want %q", x.GitHead, head)
		}
	})
	t.Run("NotStarted", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		missing := filepath.Join(f.dir, "no-such-command")
		stdout, stderr, code := f.run("", "exec", "run", "--", missing, "arg")
		if stdout != "" || !oneError(stderr) || !strings.Contains(stderr, "cannot run") || !strings.Contains(stderr, "127") {
			t.Errorf("stdout %q, stderr %q; want one line saying it cannot run", stdout, stderr)
		}
		if x := execShow(t, f, "X-1"); x.ExitCode != 127 || x.Success {
			t.Errorf("record exit code %d, want 127", x.ExitCode)
		}
		if code != 127 {
			t.Errorf("exit code = %d, want 127", code)
		}
	})
	t.Run("ExitCodeAboveTable", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		_, _, code := f.run("", "exec", "run", "--", "sh", "-c", "exit 42")
		if x := execShow(t, f, "X-1"); x.ExitCode != 42 {
			t.Errorf("record exit code %d, want 42", x.ExitCode)
		}
		if code != 42 {
			t.Errorf("exit code = %d, want 42", code)
		}
	})
}

func TestExec_Record(t *testing.T) {
	t.Parallel()
	t.Run("SeedLine", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		line := `{"code":"import os\nx = 1","stdout":"hello\n","stderr":"","success":true,"elapsed_ms":3.25,` +
			`"added_vars":["x"],"added_imports":["os"]}`
		x := apprDecode[execJSON](t, f.mustRun("", "exec", "record", line, "-o", "json"))
		if x.ID != "X-1" || x.Code != "import os\nx = 1" || !x.Success || x.ExitCode != 0 || x.ElapsedMS != 3.25 ||
			x.Stdout.Head != "hello\n" || x.Stdout.Bytes != 6 || x.Stdout.SHA256 != apprSHA("hello\n") ||
			strings.Join(x.AddedVars, ",") != "x" || strings.Join(x.AddedImports, ",") != "os" || x.Version == 0 {
			t.Errorf("record = %+v", x)
		}
	})
	t.Run("Seed003Line", func(t *testing.T) {
		t.Parallel()
		// A line of seed 003's JSONL log, verbatim: plan_id "local" (no
		// FLOW_PLAN_ID), its task_id and timestamp.
		f := apprFile(t)
		line := `{"plan_id": "local", "task_id": "T-2", "timestamp": "2025-07-23T18:54:03.123Z", "elapsed_ms": 12.5, ` +
			`"code": "print(1)", "stdout": "1\n", "stderr": "", "success": true, "added_vars": [], "added_imports": []}`
		x := apprDecode[execJSON](t, f.mustRun(line, "exec", "record", "-", "-o", "json"))
		if x.ID != "X-1" || x.Task != "T-2" || x.Plan != "" || x.Code != "print(1)" || !x.Success || x.ElapsedMS != 12.5 {
			t.Errorf("record = %+v", x)
		}
		if x.OccurredAt != "2025-07-23T18:54:03.123Z" || !strings.HasPrefix(x.CreatedAt, "2026-") {
			t.Errorf("occurred_at %q, created_at %q; want the line's timestamp and the time of the record", x.OccurredAt, x.CreatedAt)
		}
		logged := f.logEvents("--type", "exec.recorded")
		if len(logged) != 1 || logged[0].Occurred != "2025-07-23T18:54:03.123Z" || logged[0].Time != x.CreatedAt {
			t.Errorf("logged %+v, want one event with the line's timestamp as occurred_at", logged)
		}
		if text := f.mustRun("", "log", "--type", "exec.recorded"); !strings.Contains(text, "occurred_at=2025-07-23T18:54:03Z {") {
			t.Errorf("log text does not show occurred_at before the payload:\n%s", text)
		}
		if show := f.mustRun("", "exec", "show", "X-1"); !strings.Contains(show, "ran at 2025-07-23 18:54:03Z") {
			t.Errorf("show does not say when it ran:\n%s", show)
		}
	})
	t.Run("Seed003UnknownTask", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		line := `{"plan_id": "local", "task_id": "unknown", "timestamp": 1712909761.25, "code": "x", "success": false}`
		x := apprDecode[execJSON](t, f.mustRun(line, "exec", "record", "-", "-o", "json"))
		if x.Task != "" || x.ExitCode != 1 || x.OccurredAt != "2024-04-12T08:16:01.25Z" {
			t.Errorf("record = %+v, want a failed exec of the project that occurred at 2024-04-12T08:16:01.25Z", x)
		}
	})
	t.Run("StdinAndEnvDefaults", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		f.mustRun("", "plan", "new", "p")
		env := map[string]string{"FLOW_TASK_ID": "T-1", "FLOW_PLAN_ID": "P-1"}
		stdout, stderr, code := runCLIEnv(t, f.dir, env, `{"command":"make","exit_code":2,"stderr":"boom"}`, "exec", "record", "-")
		if code != 0 || stdout != "Recorded X-1 (exit 2)\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if x := execShow(t, f, "X-1"); x.Task != "T-1" || x.Plan != "P-1" || x.Success || x.Stderr.Head != "boom" {
			t.Errorf("record = %+v", x)
		}
	})
}

func TestExec_LsShow(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	if got := f.mustRun("", "exec", "ls", "-o", "json"); strings.TrimSpace(got) != "[]" {
		t.Errorf("ls of nothing = %q, want []", got)
	}
	f.mustRun("", "exec", "record", `{"command":"a","success":true,"task":"T-1"}`)
	f.mustRun("", "exec", "record", `{"command":"b","exit_code":1,"task":"T-2"}`)
	f.mustRun("", "exec", "record", `{"command":"c","exit_code":1}`)
	ids := func(args ...string) string {
		t.Helper()
		all := apprDecode[[]execJSON](t, f.mustRun("", append([]string{"exec", "ls", "-o", "json"}, args...)...))
		var out []string
		for _, x := range all {
			out = append(out, x.ID)
		}
		return strings.Join(out, ",")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "X-1,X-2,X-3"},
		{[]string{"--failed"}, "X-2,X-3"},
		{[]string{"--task", "T-2"}, "X-2"},
		{[]string{"--task", "T-1", "--failed"}, ""},
	} {
		if got := ids(tt.args...); got != tt.want {
			t.Errorf("exec ls %v = %s, want %s", tt.args, got, tt.want)
		}
	}
	text := f.mustRun("", "exec", "show", "2")
	for _, want := range []string{"X-2", "exit 1", "failed", "T-2", "command: b"} {
		if !strings.Contains(text, want) {
			t.Errorf("show text does not mention %q:\n%s", want, text)
		}
	}
	if table := f.mustRun("", "exec", "ls"); !strings.HasPrefix(table, "ID") || strings.Count(table, "\n") != 4 {
		t.Errorf("ls text =\n%s\nwant a header and three rows", table)
	}
}

func TestExec_BadInput(t *testing.T) {
	t.Parallel()
	execNeedsShell(t)
	f := apprFile(t)
	apprWrite(t, f, "bad.json", "{\"command\":\"\xff\",\"success\":true}")
	rec := func(json string) []string { return []string{"exec", "record", json} }
	run := func(args ...string) []string {
		return append(append([]string{"exec", "run"}, args...), "--", "sh", "-c", "echo ran > marker")
	}
	axRunBad(t, f, []axBad{
		{name: "UnknownField", args: rec(`{"code":"x","success":true,"debug_info":{}}`), code: 2, facts: []string{"debug_info"}},
		{name: "TaskAndTaskID", args: rec(`{"code":"x","success":true,"task":"T-1","task_id":"T-2"}`), code: 2, facts: []string{"task_id"}},
		{name: "PlanAndPlanID", args: rec(`{"code":"x","success":true,"plan":"P-1","plan_id":"P-1"}`), code: 2, facts: []string{"plan_id"}},
		{name: "BadTimestamp", args: rec(`{"code":"x","success":true,"timestamp":"23/07/2025"}`), code: 2, facts: []string{"23/07/2025"}},
		{name: "TimestampNotTime", args: rec(`{"code":"x","success":true,"timestamp":true}`), code: 2, facts: []string{"timestamp"}},
		{name: "TimestampAfter2262", args: rec(`{"code":"x","success":true,"timestamp":"2999-01-01T00:00:00Z"}`), code: 2, facts: []string{"2999"}},
		{name: "BadPlanID", args: rec(`{"code":"x","success":true,"plan_id":"P-0001"}`), code: 2, facts: []string{"P-0001"}},
		{name: "UnknownTaskID", args: rec(`{"code":"x","success":true,"task_id":"T-9"}`), code: 3, facts: []string{"T-9"}},
		{name: "MiscasedField", args: rec(`{"code":"x","Success":true}`), code: 2, facts: []string{"Success"}},
		{name: "Malformed", args: rec(`{"code":`), code: 2, facts: []string{"JSON"}},
		{name: "NotObject", args: rec(`["code"]`), code: 2, facts: []string{"object"}},
		{name: "DuplicateKeys", args: rec(`{"code":"x","code":"y","success":true}`), code: 2, facts: []string{"duplicate"}},
		{name: "InvalidUTF8", args: rec("@bad.json"), code: 2, facts: []string{"UTF-8"}},
		{name: "WrongType", args: rec(`{"code":"x","success":"yes"}`), code: 2, facts: []string{"success"}},
		{name: "NoCommand", args: rec(`{"success":true}`), code: 2, facts: []string{"command"}},
		{name: "NoOutcome", args: rec(`{"code":"x"}`), code: 2, facts: []string{"success", "exit_code"}},
		{name: "SuccessMismatch", args: rec(`{"code":"x","success":true,"exit_code":2}`), code: 2, facts: []string{"exit_code"}},
		{name: "NegativeElapsed", args: rec(`{"code":"x","success":true,"elapsed_ms":-1}`), code: 2, facts: []string{"elapsed_ms"}},
		{name: "UnknownTask", args: rec(`{"code":"x","success":true,"task":"T-9"}`), code: 3, facts: []string{"T-9"}},
		{name: "UnknownStep", args: rec(`{"code":"x","success":true,"step":"T-1.2"}`), code: 3, facts: []string{"T-1.2"}},
		{name: "BadPlanFromEnv", env: map[string]string{"FLOW_PLAN_ID": "local"}, args: rec(`{"code":"x","success":true}`), code: 2, facts: []string{"local"}},
		{name: "StaleIfVersion", args: append(rec(`{"code":"x","success":true,"task":"T-1"}`), "--if-version", "99"), code: 4, facts: []string{"99"}},
		{name: "RecordNoArg", args: []string{"exec", "record"}, code: 2},
		{name: "RecordMissingFile", args: rec("@missing.json"), code: 3, facts: []string{"missing.json"}},
		{name: "RunUnknownTask", args: run("--task", "T-9"), code: 3, facts: []string{"T-9"}},
		{name: "RunUnknownPlan", args: run("--plan", "P-9"), code: 3, facts: []string{"P-9"}},
		{name: "RunBadStep", args: run("--step", "T-1"), code: 2, facts: []string{"step"}},
		{name: "RunBadTaskFromEnv", env: map[string]string{"FLOW_TASK_ID": "unknown"}, args: run(), code: 2, facts: []string{"unknown"}},
		{name: "RunStaleIfVersion", args: run("--task", "T-1", "--if-version", "99"), code: 4, facts: []string{"99"}},
		{name: "RunNoCommand", args: []string{"exec", "run"}, code: 2},
		{name: "RunUnknownProject", args: append([]string{"--project", "nope"}, run()...), code: 3, facts: []string{"nope"}},
		{name: "ShowUnknown", args: []string{"exec", "show", "X-9"}, code: 3, facts: []string{"X-9"}},
		{name: "ShowBadID", args: []string{"exec", "show", "Y-1"}, code: 2, facts: []string{"Y-1"}},
		{name: "LsUnknownTask", args: []string{"exec", "ls", "--task", "T-9"}, code: 3, facts: []string{"T-9"}},
		{name: "LsBadTask", args: []string{"exec", "ls", "--task", "T-x"}, code: 2, facts: []string{"T-x"}},
	})
	if _, err := os.Stat(filepath.Join(f.dir, "marker")); err == nil {
		t.Errorf("a refused exec run ran its command")
	}
}
