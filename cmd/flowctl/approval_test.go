package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// apprFile is a file with project website, task T-1 (doing) and T-2 (todo).
func apprFile(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "website")
	f.mustRun("", "task", "add", "build")
	f.mustRun("", "task", "add", "ship")
	f.mustRun("", "task", "start", "T-1")
	return f
}

// apprJSON is an approval as -o json prints it.
type apprJSON struct {
	ID          string          `json:"id"`
	Task        string          `json:"task"`
	Step        string          `json:"step"`
	Message     string          `json:"message"`
	Code        string          `json:"code"`
	Action      json.RawMessage `json:"action"`
	ActionHash  string          `json:"action_hash"`
	Expires     *string         `json:"expires"`
	Status      string          `json:"status"`
	RequestedBy string          `json:"requested_by"`
	DecidedBy   string          `json:"decided_by"`
	Comment     string          `json:"comment"`
	Version     uint64          `json:"version"`
}

func apprDecode[T any](t *testing.T, stdout string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("output is not the JSON expected: %v\n%s", err, stdout)
	}
	return v
}

// apprRun runs a command with -o json and decodes the approval it prints.
func apprRun(t *testing.T, f *flowFile, stdin string, args ...string) apprJSON {
	t.Helper()
	return apprDecode[apprJSON](t, f.mustRun(stdin, append(args, "-o", "json")...))
}

func apprSHA(b string) string {
	h := sha256.Sum256([]byte(b))
	return hex.EncodeToString(h[:])
}

// apprWrite writes a file in f's directory and returns its name.
func apprWrite(t *testing.T, f *flowFile, name, content string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// axBad is one bad command line of the approval and exec commands.
type axBad struct {
	name  string
	env   map[string]string
	stdin string
	args  []string
	code  int
	facts []string
}

// axRunBad runs each case and checks the exit code, one line on stderr
// naming the facts, nothing on stdout, and a byte-identical file.
func axRunBad(t *testing.T, f *flowFile, tests []axBad) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.bytes()
			stdout, stderr, code := runCLIEnv(t, f.dir, tt.env, tt.stdin, tt.args...)
			wantError(t, stderr, code, tt.code, tt.facts...)
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !bytes.Equal(before, f.bytes()) {
				t.Errorf("flowctl %v changed the file", tt.args)
			}
		})
	}
}

func TestApproval_Request(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		action := "{\"cmd\": \"deploy\",\n \"to\": [\"prod\"]}\n"
		apprWrite(t, f, "deploy.json", action)
		a := apprRun(t, f, "", "approval", "request", "--task", "T-1", "-m", "deploy?", "--code", "make deploy",
			"--action", "@deploy.json", "--expires", "1h")
		if a.ID != "A-1" || a.Task != "T-1" || a.Status != "pending" || a.Message != "deploy?" || a.Code != "make deploy" ||
			a.RequestedBy != "tester" || a.Expires == nil || a.Version == 0 {
			t.Errorf("approval = %+v", a)
		}
		if a.ActionHash != apprSHA(action) {
			t.Errorf("action_hash = %s, want the SHA-256 of the file's exact bytes %s", a.ActionHash, apprSHA(action))
		}
		var got, want any
		json.Unmarshal(a.Action, &got)
		json.Unmarshal([]byte(action), &want)
		if !jsonEqual(got, want) {
			t.Errorf("action = %s, want %s", a.Action, action)
		}
	})
	t.Run("Text", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		if got := f.mustRun("", "approval", "request", "-m", "go?"); got != "Requested approval A-1: go?\n" {
			t.Errorf("stdout = %q", got)
		}
	})
	t.Run("TaskFromEnvAndStdinAction", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		stdout, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_TASK_ID": "T-2"}, `{"x":1}`,
			"approval", "request", "-m", "m", "--action", "-", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		a := apprDecode[apprJSON](t, stdout)
		if a.Task != "T-2" || a.ActionHash != apprSHA(`{"x":1}`) || a.Expires != nil {
			t.Errorf("approval = %+v, want task T-2 from FLOW_TASK_ID, the stdin action, no expiry", a)
		}
		logged := f.logEvents("--type", "approval.requested")
		if len(logged) != 1 || logged[0].Stream != "task/website/T-2" {
			t.Errorf("events = %+v, want one on task/website/T-2", logged)
		}
	})
	t.Run("ProjectStream", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		a := apprRun(t, f, "", "approval", "request", "-m", "release?")
		if a.Task != "" || a.ActionHash != apprSHA("") {
			t.Errorf("approval = %+v, want no task and the hash of the empty action", a)
		}
		logged := f.logEvents("--type", "approval.requested")
		if len(logged) != 1 || logged[0].Stream != "project/website" {
			t.Errorf("events = %+v, want one on project/website", logged)
		}
	})
}

// jsonEqual compares decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return a != nil && bytes.Equal(x, y)
}

func TestApproval_LsShow(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	if got := f.mustRun("", "approval", "ls", "-o", "json"); strings.TrimSpace(got) != "[]" {
		t.Errorf("ls of nothing = %q, want []", got)
	}
	f.mustRun("", "approval", "request", "--task", "T-1", "-m", "one", "--action", `{"a":1}`)
	f.mustRun("", "approval", "request", "--task", "T-2", "-m", "two")
	f.mustRun("", "approval", "request", "-m", "three")
	f.mustRun("", "--actor", "reviewer", "approval", "grant", "A-2")
	ids := func(args ...string) string {
		t.Helper()
		all := apprDecode[[]apprJSON](t, f.mustRun("", append([]string{"approval", "ls", "-o", "json"}, args...)...))
		var out []string
		for _, a := range all {
			out = append(out, a.ID)
		}
		return strings.Join(out, ",")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "A-1,A-2,A-3"},
		{[]string{"--status", "pending"}, "A-1,A-3"},
		{[]string{"--status", "granted"}, "A-2"},
		{[]string{"--task", "T-1"}, "A-1"},
		{[]string{"--task", "T-2", "--status", "pending"}, ""},
	} {
		if got := ids(tt.args...); got != tt.want {
			t.Errorf("ls %v = %s, want %s", tt.args, got, tt.want)
		}
	}
	a := apprRun(t, f, "", "approval", "show", "a-1")
	if a.ID != "A-1" || string(a.Action) != `{"a":1}` || a.Version == 0 {
		t.Errorf("show = %+v", a)
	}
	text := f.mustRun("", "approval", "show", "A-1")
	for _, want := range []string{"A-1", "pending", "one", `{"a":1}`, apprSHA(`{"a":1}`)} {
		if !strings.Contains(text, want) {
			t.Errorf("show text does not mention %q:\n%s", want, text)
		}
	}
	if table := f.mustRun("", "approval", "ls"); !strings.HasPrefix(table, "ID") || strings.Count(table, "\n") != 4 {
		t.Errorf("ls text =\n%s\nwant a header and three rows", table)
	}
}

func TestApproval_Decide(t *testing.T) {
	t.Parallel()
	t.Run("Grant", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		f.mustRun("", "approval", "request", "--task", "T-1", "-m", "m")
		a := apprRun(t, f, "", "--actor", "reviewer", "approval", "grant", "A-1", "--comment", "fine")
		if a.Status != "granted" || a.DecidedBy != "reviewer" || a.Comment != "fine" {
			t.Errorf("granted = %+v", a)
		}
		logged := f.logEvents("--type", "approval.decided")
		if len(logged) != 1 || logged[0].Stream != "task/website/T-1" {
			t.Errorf("decision events = %+v, want one on the task's stream", logged)
		}
	})
	t.Run("Deny", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		f.mustRun("", "approval", "request", "-m", "m")
		if got := f.mustRun("", "--actor", "reviewer", "approval", "deny", "A-1"); got != "Denied A-1: m\n" {
			t.Errorf("stdout = %q", got)
		}
		if a := apprRun(t, f, "", "approval", "show", "A-1"); a.Status != "denied" {
			t.Errorf("status = %s, want denied", a.Status)
		}
	})
	t.Run("ErrConflictExpired", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		f.mustRun("", "approval", "request", "-m", "m", "--expires", "1ms")
		time.Sleep(20 * time.Millisecond)
		before := f.bytes()
		_, stderr, code := f.run("", "--actor", "reviewer", "approval", "grant", "A-1")
		wantError(t, stderr, code, 4, "A-1", "expired")
		if !bytes.Equal(before, f.bytes()) {
			t.Errorf("a refused grant changed the file")
		}
		if a := apprRun(t, f, "", "--actor", "reviewer", "approval", "deny", "A-1"); a.Status != "denied" {
			t.Errorf("deny after expiry: status %s, want denied", a.Status)
		}
	})
	t.Run("PendingBlocksTaskDone", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		f.mustRun("", "approval", "request", "--task", "T-1", "-m", "m")
		_, stderr, code := f.run("", "task", "done", "T-1")
		wantError(t, stderr, code, 6, "A-1")
		f.mustRun("", "--actor", "reviewer", "approval", "grant", "A-1")
		f.mustRun("", "task", "done", "T-1")
	})
}

func TestApproval_Wait(t *testing.T) {
	t.Parallel()
	// decideDuring starts `approval wait` and decides the approval from a
	// second in-process flowctl while it waits.
	decideDuring := func(t *testing.T, decision string) (string, string, int) {
		f := apprFile(t)
		f.mustRun("", "approval", "request", "-m", "m")
		done := make(chan int, 1)
		go func() {
			time.Sleep(150 * time.Millisecond)
			_, _, code := runCLI(t, f.dir, "", "--actor", "reviewer", "approval", decision, "A-1")
			done <- code
		}()
		stdout, stderr, code := f.run("", "approval", "wait", "A-1", "--timeout", "20s", "--interval", "10ms", "-o", "json")
		if c := <-done; c != 0 {
			t.Fatalf("approval %s during the wait: exit %d", decision, c)
		}
		return stdout, stderr, code
	}
	t.Run("Granted", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := decideDuring(t, "grant")
		if code != 0 || stderr != "" {
			t.Fatalf("wait: exit %d, stderr %q; want 0", code, stderr)
		}
		if a := apprDecode[apprJSON](t, stdout); a.Status != "granted" {
			t.Errorf("printed status %s, want granted", a.Status)
		}
	})
	t.Run("Denied", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, code := decideDuring(t, "deny")
		wantJSONError(t, stderr, code, 4, "conflict")
		if a := apprDecode[apprJSON](t, stdout); a.Status != "denied" {
			t.Errorf("printed status %s, want denied", a.Status)
		}
	})
	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		f.mustRun("", "approval", "request", "-m", "m")
		start := time.Now()
		stdout, stderr, code := f.run("", "approval", "wait", "A-1", "--timeout", "100ms", "--interval", "20ms")
		wantError(t, stderr, code, 6, "A-1", "pending")
		if waited := time.Since(start); waited < 100*time.Millisecond {
			t.Errorf("wait returned after %s, before its timeout", waited)
		}
		if !strings.HasPrefix(stdout, "A-1 pending") {
			t.Errorf("stdout = %q, want the approval", stdout)
		}
	})
	t.Run("DoesNotHoldTheLock", func(t *testing.T) {
		t.Parallel()
		f := apprFile(t)
		f.mustRun("", "approval", "request", "-m", "m")
		done := make(chan int, 1)
		go func() {
			_, _, code := f.run("", "approval", "wait", "A-1", "--timeout", "2s", "--interval", "300ms")
			done <- code
		}()
		time.Sleep(50 * time.Millisecond)
		// A write with a short lock timeout succeeds while wait sleeps.
		f.mustRun("", "--lock-timeout", "200ms", "task", "add", "meanwhile")
		f.mustRun("", "--actor", "reviewer", "approval", "grant", "A-1")
		if code := <-done; code != 0 {
			t.Errorf("wait: exit %d, want 0", code)
		}
	})
}

func TestApproval_Check(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	action := "{\"cmd\": \"rm -rf build\"}\n"
	apprWrite(t, f, "act.json", action)
	apprWrite(t, f, "other.json", `{"cmd": "rm -rf /"}`)
	for _, m := range []string{"granted", "pending", "denied"} {
		f.mustRun("", "approval", "request", "-m", m, "--action", "@act.json")
	}
	f.mustRun("", "--actor", "reviewer", "approval", "grant", "A-1")
	f.mustRun("", "--actor", "reviewer", "approval", "deny", "A-3")
	tests := []struct {
		name, stdin string
		args        []string
		code        int
		facts       []string
	}{
		{"OK", "", []string{"A-1", "--action", "act.json"}, 0, nil},
		{"Stdin", action, []string{"A-1", "--action", "-"}, 0, nil},
		{"ErrMismatch", "", []string{"A-1", "--action", "other.json"}, 4, []string{"does not match"}},
		{"ErrMismatchNewline", strings.TrimSuffix(action, "\n"), []string{"A-1", "--action", "-"}, 4, []string{"does not match"}},
		{"ErrPending", "", []string{"A-2", "--action", "act.json"}, 6, []string{"A-2", "pending"}},
		{"ErrDenied", "", []string{"A-3", "--action", "act.json"}, 4, []string{"A-3", "denied"}},
		{"ErrNotFound", "", []string{"A-7", "--action", "act.json"}, 3, []string{"A-7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := f.run(tt.stdin, append([]string{"approval", "check"}, tt.args...)...)
			if tt.code == 0 {
				if code != 0 || !strings.Contains(stdout, "granted") {
					t.Errorf("exit %d, stdout %q, stderr %q; want 0", code, stdout, stderr)
				}
				return
			}
			wantError(t, stderr, code, tt.code, tt.facts...)
		})
	}
}

func TestApproval_BadInput(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	f.mustRun("", "task", "add", "finished") // T-3
	f.mustRun("", "task", "start", "T-3")
	f.mustRun("", "task", "done", "T-3")
	f.mustRun("", "approval", "request", "-m", "granted one")
	f.mustRun("", "--actor", "reviewer", "approval", "grant", "A-1")
	f.mustRun("", "approval", "request", "-m", "pending one")
	apprWrite(t, f, "bad.json", "{\"a\":\"\xff\"}")
	req := func(args ...string) []string { return append([]string{"approval", "request"}, args...) }
	axRunBad(t, f, []axBad{
		{name: "NoMessage", args: req("--task", "T-1"), code: 2, facts: []string{"message"}},
		{name: "EmptyMessage", args: req("-m", " "), code: 2, facts: []string{"message"}},
		{name: "MessageInvalidUTF8", args: req("-m", "a\xffb"), code: 2, facts: []string{"UTF-8"}},
		{name: "MalformedAction", args: req("-m", "m", "--action", "{nope"), code: 2, facts: []string{"JSON"}},
		{name: "DuplicateKeys", args: req("-m", "m", "--action", `{"a":1,"a":2}`), code: 2, facts: []string{"duplicate"}},
		{name: "ActionInvalidUTF8", args: req("-m", "m", "--action", "@bad.json"), code: 2, facts: []string{"UTF-8"}},
		{name: "ActionFileMissing", args: req("-m", "m", "--action", "@missing.json"), code: 3, facts: []string{"missing.json"}},
		{name: "UnknownTask", args: req("-m", "m", "--task", "T-9"), code: 3, facts: []string{"T-9"}},
		{name: "UnknownStep", args: req("-m", "m", "--step", "T-1.5"), code: 3, facts: []string{"T-1.5"}},
		{name: "BadTaskID", args: req("-m", "m", "--task", "X-1"), code: 2, facts: []string{"X-1"}},
		{name: "BadTaskIDFromEnv", env: map[string]string{"FLOW_TASK_ID": "unknown"}, args: req("-m", "m"), code: 2, facts: []string{"unknown"}},
		{name: "StepOfOtherTask", args: req("-m", "m", "--task", "T-2", "--step", "T-1.1"), code: 2, facts: []string{"T-1.1", "T-2"}},
		{name: "NegativeExpiry", args: req("-m", "m", "--expires", "-1h"), code: 2, facts: []string{"negative"}},
		{name: "BadExpiry", args: req("-m", "m", "--expires", "soon"), code: 2, facts: []string{"soon"}},
		{name: "DoneTask", args: req("-m", "m", "--task", "T-3"), code: 4, facts: []string{"T-3", "done"}},
		{name: "StaleIfVersion", args: req("-m", "m", "--task", "T-1", "--if-version", "99"), code: 4, facts: []string{"99"}},
		{name: "UnknownFlag", args: req("-m", "m", "--colour"), code: 2, facts: []string{"colour"}},
		{name: "GrantUnknown", args: []string{"--actor", "reviewer", "approval", "grant", "A-9"}, code: 3, facts: []string{"A-9"}},
		{name: "GrantBadID", args: []string{"--actor", "reviewer", "approval", "grant", "B-1"}, code: 2, facts: []string{"B-1"}},
		{name: "GrantDecided", args: []string{"--actor", "reviewer", "approval", "grant", "A-1"}, code: 4, facts: []string{"A-1", "granted"}},
		{name: "DenyDecided", args: []string{"--actor", "reviewer", "approval", "deny", "A-1"}, code: 4, facts: []string{"already"}},
		{name: "GrantStaleIfVersion", args: []string{"--actor", "reviewer", "approval", "grant", "A-2", "--if-version", "99"}, code: 4, facts: []string{"99"}},
		{name: "CommentInvalidUTF8", args: []string{"--actor", "reviewer", "approval", "deny", "A-2", "--comment", "\xff"}, code: 2, facts: []string{"UTF-8"}},
		{name: "GrantNoID", args: []string{"--actor", "reviewer", "approval", "grant"}, code: 2},
		{name: "LsBadStatus", args: []string{"approval", "ls", "--status", "cancelled"}, code: 2, facts: []string{"cancelled"}},
		{name: "LsUnknownTask", args: []string{"approval", "ls", "--task", "T-9"}, code: 3, facts: []string{"T-9"}},
		{name: "ShowUnknown", args: []string{"approval", "show", "A-9"}, code: 3, facts: []string{"A-9"}},
		{name: "WaitBadInterval", args: []string{"approval", "wait", "A-2", "--interval", "0s"}, code: 2, facts: []string{"interval"}},
		{name: "WaitUnknown", args: []string{"approval", "wait", "A-9", "--timeout", "0s"}, code: 3, facts: []string{"A-9"}},
		{name: "CheckNoAction", args: []string{"approval", "check", "A-1"}, code: 2, facts: []string{"action"}},
		{name: "CheckMissingFile", args: []string{"approval", "check", "A-1", "--action", "nope.json"}, code: 3, facts: []string{"nope.json"}},
	})
}
