package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestApproval_SelfDecisionRefused: the requester's grant or deny is a
// conflict unless the project allows it; either way the refusal leaves
// the file as it was.
func TestApproval_SelfDecisionRefused(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	f.mustRun("", "approval", "request", "--task", "T-1", "-m", "ship?")
	for _, decision := range []string{"grant", "deny"} {
		before := f.bytes()
		_, stderr, code := f.run("", "approval", decision, "A-1")
		wantError(t, stderr, code, 4, "A-1", "ask someone else", "approvals.self_grant")
		if string(before) != string(f.bytes()) {
			t.Errorf("a refused %s changed the file", decision)
		}
	}
	var p struct {
		Settings []struct{ Key, Value string } `json:"settings"`
	}
	out := f.mustRun("", "project", "set", "approvals.self_grant", "allow", "-o", "json")
	if err := json.Unmarshal([]byte(out), &p); err != nil || len(p.Settings) != 1 || p.Settings[0].Key != "approvals.self_grant" || p.Settings[0].Value != "allow" {
		t.Errorf("project set -o json = %s (%v)", out, err)
	}
	if show := f.mustRun("", "project", "show"); !strings.Contains(show, "approvals.self_grant: allow") {
		t.Errorf("project show does not show the setting:\n%s", show)
	}
	if a := apprRun(t, f, "", "approval", "grant", "A-1"); a.Status != "granted" || a.DecidedBy != "tester" {
		t.Errorf("self-grant with the setting = %+v", a)
	}
	for _, args := range [][]string{{"project", "set", "approvals.nope", "allow"}, {"project", "set", "approvals.self_grant", "maybe"}} {
		before := f.bytes()
		_, stderr, code := f.run("", args...)
		wantError(t, stderr, code, 2, args[2])
		if string(before) != string(f.bytes()) {
			t.Errorf("%v changed the file", args)
		}
	}
}

// TestTaskDone_ForceNeverPassesAPendingApproval: the CLI's --force.
func TestTaskDone_ForceNeverPassesAPendingApproval(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	f.mustRun("", "approval", "request", "--task", "T-1", "-m", "ship?")
	before := f.bytes()
	_, stderr, code := f.run("", "task", "done", "T-1", "--force")
	wantError(t, stderr, code, 6, "A-1")
	if string(before) != string(f.bytes()) {
		t.Error("the refused done changed the file")
	}
}

// TestServe_ApprovalsHold: serve's grant obeys self-grant, and its move
// with force does not pass a pending approval.
func TestServe_ApprovalsHold(t *testing.T) {
	f, h := serveFixture(t)
	f.mustRun("", "--project", "web", "approval", "request", "--task", "T-3", "-m", "mine") // A-2, by tester, serve's actor
	f.mustRun("", "--project", "web", "task", "start", "T-2")
	before := f.bytes()
	if w := get(h, "POST", "/api/v1/projects/web/approvals/A-2/grant", `{}`); w.Code != 409 || !strings.Contains(w.Body.String(), "ask someone else") {
		t.Errorf("serve's self-grant: %d %s, want 409", w.Code, w.Body)
	}
	if w := get(h, "POST", "/api/v1/projects/web/tasks/T-2/move", `{"to":"done","force":true}`); w.Code == 200 || !strings.Contains(w.Body.String(), `"pending"`) || !strings.Contains(w.Body.String(), "A-1") {
		t.Errorf("serve's forced move past A-1: %d %s, want refused", w.Code, w.Body)
	}
	if string(before) != string(f.bytes()) {
		t.Error("the refused writes changed the file")
	}
	f.mustRun("", "--project", "web", "project", "set", "approvals.self_grant", "allow")
	if w := get(h, "POST", "/api/v1/projects/web/approvals/A-2/grant", `{}`); w.Code != 200 {
		t.Errorf("serve's self-grant when allowed: %d %s", w.Code, w.Body)
	}
}

// TestApproval_ExpiredEverywhere: an expired request reads expired in
// approval ls/show and status, and cannot be granted.
func TestApproval_ExpiredEverywhere(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	f.mustRun("", "approval", "request", "--task", "T-1", "-m", "ship?", "--ttl", "1ms")
	time.Sleep(20 * time.Millisecond)
	if ls := f.mustRun("", "approval", "ls", "--status", "expired"); !strings.Contains(ls, "A-1  expired") {
		t.Errorf("approval ls --status expired:\n%s", ls)
	}
	if a := apprRun(t, f, "", "approval", "show", "A-1"); a.Status != "expired" {
		t.Errorf("approval show: status %s, want expired", a.Status)
	}
	var st struct {
		Pending []struct {
			ID, Status string
		} `json:"pending_approvals"`
	}
	if err := json.Unmarshal([]byte(f.mustRun("", "status", "-o", "json")), &st); err != nil || len(st.Pending) != 1 || st.Pending[0].Status != "expired" {
		t.Errorf("status pending_approvals = %+v (%v)", st.Pending, err)
	}
	before := f.bytes()
	_, stderr, code := f.run("", "--actor", "reviewer", "approval", "grant", "A-1")
	wantError(t, stderr, code, 4, "A-1", "expired")
	if string(before) != string(f.bytes()) {
		t.Error("the refused grant changed the file")
	}
}

// TestExec_RequireApproval: the approved command runs once; another
// argv or another working directory does not run on its approval.
func TestExec_RequireApproval(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	runs := func() int {
		b, _ := os.ReadFile(filepath.Join(f.dir, "ran.txt"))
		return strings.Count(string(b), "x")
	}
	deploy := []string{"exec", "run", "--task", "T-1", "--require-approval", "--ttl", "1h", "--", "sh", "-c", "echo x >> " + filepath.Join(f.dir, "ran.txt")}
	stdout, stderr, code := f.run("", deploy...)
	wantError(t, stderr, code, 6, "A-1", "nothing ran")
	if !strings.Contains(stdout, "Approval A-1 requested") || !strings.Contains(stdout, "action sha256 ") || runs() != 0 {
		t.Errorf("first run: stdout %q, %d runs", stdout, runs())
	}
	if _, _, code := f.run("", deploy...); code != 6 || runs() != 0 {
		t.Errorf("second run before the grant: exit %d, %d runs", code, runs())
	}
	if ls := f.mustRun("", "approval", "ls"); strings.Count(ls, "A-") != 1 {
		t.Errorf("the pending request was not reused:\n%s", ls)
	}
	f.mustRun("", "--actor", "reviewer", "approval", "grant", "A-1")
	other := append(append([]string{}, deploy[:len(deploy)-1]...), deploy[len(deploy)-1]+" # another argv")
	if _, _, code := f.run("", other...); code != 6 || runs() != 0 {
		t.Errorf("another argv: exit %d, %d runs; want 6 and none", code, runs())
	}
	sub := filepath.Join(f.dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, code := runCLI(t, sub, "", deploy...); code != 6 || runs() != 0 {
		t.Errorf("another cwd: exit %d, %d runs; want 6 and none", code, runs())
	}
	_, stderr, code = f.run("", deploy...)
	if code != 0 || runs() != 1 || !strings.Contains(stderr, "approval A-1 used") {
		t.Fatalf("the approved run: exit %d, %d runs, stderr %q", code, runs(), stderr)
	}
	if a := apprRun(t, f, "", "approval", "show", "A-1"); a.Status != "granted" {
		t.Errorf("A-1 after its use: %+v", a)
	}
	if show := f.mustRun("", "approval", "show", "A-1"); !strings.Contains(show, "used by tester") {
		t.Errorf("approval show does not say it was used:\n%s", show)
	}
	if _, _, code := f.run("", deploy...); code != 6 || runs() != 1 {
		t.Errorf("a second run on the used approval: exit %d, %d runs; want 6 and still 1", code, runs())
	}
}

// TestExec_RequireApprovalWait: --wait runs the command once someone
// grants the request.
func TestExec_RequireApprovalWait(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	done := make(chan int, 1)
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, _, code := runCLI(t, f.dir, "", "--actor", "reviewer", "approval", "grant", "A-1"); code == 0 {
				done <- 0
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		done <- 1
	}()
	stdout, stderr, code := f.run("", "exec", "run", "--task", "T-1", "--require-approval", "--wait", "--timeout", "20s", "--interval", "20ms", "--", "echo", "deployed")
	if <-done != 0 {
		t.Fatal("the grant never went through")
	}
	if code != 0 || !strings.Contains(stdout, "deployed") {
		t.Errorf("exec run --wait: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
