package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUndo: undo walks back the actor's commands, -o json says what it
// reverted, and a command another actor changed since is refused naming
// the entity, leaving the file as it was.
func TestUndo(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "web")
	f.mustRun("", "task", "add", "a")
	f.mustRun("", "task", "add", "b")
	f.mustRun("", "task", "start", "T-2")
	var res struct {
		First   uint64 `json:"first_seq"`
		Applied bool   `json:"applied"`
		Events  []struct {
			Type string `json:"type"`
		} `json:"events"`
		Changes []struct {
			ID string `json:"id"`
		} `json:"changes"`
	}
	before := f.bytes()
	out := f.mustRun("", "undo", "--dry-run", "-o", "json")
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Applied || len(res.Events) != 1 || res.Events[0].Type != "task.status_changed" {
		t.Fatalf("undo --dry-run -o json = %s (%v)", out, err)
	}
	if string(before) != string(f.bytes()) {
		t.Error("the dry run changed the file")
	}
	out = f.mustRun("", "undo", "-o", "json")
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Applied || len(res.Changes) != 1 || res.Changes[0].ID != "T-2" {
		t.Fatalf("undo -o json = %s (%v)", out, err)
	}
	if show := f.mustRun("", "task", "show", "T-2"); !strings.Contains(show, "todo") {
		t.Errorf("T-2 after the undo:\n%s", show)
	}
	f.mustRun("", "--actor", "bob", "task", "edit", "T-2", "--title", "B")
	before = f.bytes()
	_, stderr, code := f.run("", "undo")
	wantError(t, stderr, code, 4, "task T-2", "bob")
	if string(before) != string(f.bytes()) {
		t.Error("the refused undo changed the file")
	}
	if out := f.mustRun("", "--actor", "bob", "undo"); !strings.Contains(out, "undid") {
		t.Errorf("bob's undo: %s", out)
	}
	if out := f.mustRun("", "undo"); !strings.Contains(out, "- task T-2") {
		t.Errorf("undo of T-2's creation: %s", out)
	}
}

// TestProjectFork: the fork holds the source's tasks and context at the
// point, shows its origin, and the source is left as it is.
func TestProjectFork(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "web")
	f.mustRun("", "task", "add", "a")
	f.mustRun("", "ctx", "set", "T-1", "k", `"v"`)
	f.mustRun("", "checkpoint", "--label", "one")
	f.mustRun("", "task", "add", "b")
	f.mustRun("", "ctx", "set", "T-1", "k", `"w"`)
	if out := f.mustRun("", "project", "fork", "retry", "--from", "C-1"); !strings.Contains(out, "Forked project retry from web at seq") {
		t.Errorf("fork: %s", out)
	}
	if got, want := f.mustRun("", "--project", "retry", "task", "ls", "-o", "json"), f.mustRun("", "--project", "web", "task", "ls", "--at", "C-1", "-o", "json"); strings.Count(got, `"id"`) != strings.Count(want, `"id"`) || !strings.Contains(got, `"k":"v"`) {
		t.Errorf("the fork's tasks\n%s\nthe source's at C-1\n%s", got, want)
	}
	var p struct {
		Origin struct {
			Project string `json:"project"`
			Seq     uint64 `json:"seq"`
			Hash    string `json:"hash"`
		} `json:"origin"`
	}
	out := f.mustRun("", "project", "show", "retry", "-o", "json")
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Origin.Project != "web" || p.Origin.Seq == 0 || len(p.Origin.Hash) != 64 {
		t.Errorf("project show -o json = %s", out)
	}
	if show := f.mustRun("", "project", "show", "retry"); !strings.Contains(show, "forked from web at seq") {
		t.Errorf("project show:\n%s", show)
	}
	if got := f.mustRun("", "--project", "web", "ctx", "get", "T-1"); !strings.Contains(got, "w") {
		t.Errorf("the source changed: %s", got)
	}
	before := f.bytes()
	_, stderr, code := f.run("", "project", "fork", "retry", "--from", "C-1")
	wantError(t, stderr, code, 4, "retry")
	_, stderr, code = f.run("", "project", "fork", "other")
	wantError(t, stderr, code, 2, "--from")
	if string(before) != string(f.bytes()) {
		t.Error("refused forks changed the file")
	}
}
