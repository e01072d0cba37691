package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// taskFile is a file with project "demo" and tasks T-1 (parser), T-2
// (tests, depends on T-1) and T-3 (docs).
func taskFile(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "demo")
	f.mustRun("", "task", "add", "write the parser", "--tag", "be", "--priority", "2")
	f.mustRun("", "task", "add", "write the tests", "--dep", "T-1")
	f.mustRun("", "task", "add", "write the docs", "--owner", "ann")
	return f
}

type taskJSON struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Status   string   `json:"status"`
	Version  uint64   `json:"version"`
	Deps     []string `json:"deps"`
	Tags     []string `json:"tags"`
	Priority int      `json:"priority"`
	Plan     string   `json:"plan"`
	Owner    string   `json:"owner"`
	Forced   bool     `json:"forced"`
	Claim    *struct {
		Actor string `json:"actor"`
	} `json:"claim"`
}

func showTask(t *testing.T, f *flowFile, id string) taskJSON {
	t.Helper()
	var got taskJSON
	if err := json.Unmarshal([]byte(f.mustRun("", "task", "show", id, "-o", "json")), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestTask_AddShowList(t *testing.T) {
	f := taskFile(t)
	t.Run("AddPrintsTheCreatedObject", func(t *testing.T) {
		var got taskJSON
		out := f.mustRun("", "task", "add", "more", "-o", "json")
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.ID != "T-4" || got.Version != 1 || got.Status != "todo" {
			t.Fatalf("task add -o json = %s (%v)", out, err)
		}
	})
	t.Run("ShowHasVersionDepsTags", func(t *testing.T) {
		got := showTask(t, f, "T-2")
		if got.ID != "T-2" || got.Version != 1 || len(got.Deps) != 1 || got.Deps[0] != "T-1" {
			t.Fatalf("show T-2 = %+v", got)
		}
		if got := showTask(t, f, "1"); got.ID != "T-1" || got.Tags[0] != "be" || got.Priority != 2 {
			t.Fatalf("show 1 = %+v", got)
		}
	})
	t.Run("ShowDefaultsToFLOW_TASK_ID", func(t *testing.T) {
		out, _, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_TASK_ID": "T-3"}, "", "task", "show")
		if code != 0 || !strings.HasPrefix(out, "T-3  write the docs  [todo]  v1") {
			t.Fatalf("task show with FLOW_TASK_ID: exit %d, %q", code, out)
		}
	})
	t.Run("LsFilters", func(t *testing.T) {
		var all []taskJSON
		if err := json.Unmarshal([]byte(f.mustRun("", "task", "ls", "--owner", "ann", "-o", "json")), &all); err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 || all[0].ID != "T-3" {
			t.Fatalf("ls --owner ann = %+v", all)
		}
		if out := f.mustRun("", "task", "ls", "--status", "done", "-o", "json"); strings.TrimSpace(out) != "[]" {
			t.Fatalf("empty ls = %q, want []", out)
		}
	})
	t.Run("LsText", func(t *testing.T) {
		golden(t, "task_ls.golden", f.mustRun("", "task", "ls", "--tag", "be"))
	})
}

func TestTask_StatusMachine(t *testing.T) {
	f := taskFile(t)
	t.Run("DoneFromTodoIsConflictNamingMoves", func(t *testing.T) {
		_, stderr, code := f.run("", "task", "done", "T-1")
		wantError(t, stderr, code, 4, "todo", "doing (task start)")
	})
	t.Run("DoneBlockedByOpenDependency", func(t *testing.T) {
		f.mustRun("", "task", "start", "T-2")
		_, stderr, code := f.run("", "task", "done", "T-2")
		wantError(t, stderr, code, 4, "T-1 (todo)", "--force")
	})
	t.Run("ForceIsRecorded", func(t *testing.T) {
		f.mustRun("", "task", "done", "T-2", "--force", "--reason", "shipped anyway")
		if got := showTask(t, f, "T-2"); got.Status != "done" || !got.Forced {
			t.Fatalf("forced done = %+v", got)
		}
		evs := f.logEvents("--type", "task.status_changed", "--stream", "task/demo/T-2", "-o", "json")
		last := evs[len(evs)-1]
		var data struct {
			Forced bool   `json:"forced"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(last.Data, &data); err != nil || !data.Forced || data.Reason != "shipped anyway" {
			t.Fatalf("event data = %s", last.Data)
		}
	})
	t.Run("ForceDoesNotPassAPendingApproval", func(t *testing.T) {
		f.mustRun("", "task", "start", "T-1")
		f.mustRun("", "approval", "request", "--task", "T-1", "-m", "ship it?")
		before := f.bytes()
		_, stderr, code := f.run("", "task", "done", "T-1", "--force")
		wantError(t, stderr, code, 6, "A-1", "granted or denied")
		if string(before) != string(f.bytes()) {
			t.Fatal("a refused done changed the file")
		}
	})
	t.Run("ReopenThenStartAgain", func(t *testing.T) {
		f.mustRun("", "task", "reopen", "T-2")
		f.mustRun("", "task", "start", "T-2")
		if got := showTask(t, f, "T-2"); got.Status != "doing" || got.Version != 5 {
			t.Fatalf("after reopen+start = %+v", got)
		}
	})
	t.Run("SameStatusIsANoOp", func(t *testing.T) {
		before := f.bytes()
		f.mustRun("", "task", "start", "T-2")
		if string(before) != string(f.bytes()) {
			t.Fatal("moving a task to its own status changed the file")
		}
	})
	t.Run("IfVersion", func(t *testing.T) {
		_, stderr, code := f.run("", "task", "block", "T-3", "--if-version", "7")
		wantError(t, stderr, code, 4, "version 1")
		f.mustRun("", "task", "block", "T-3", "--if-version", "1")
	})
}

func TestTask_ClaimsAndReady(t *testing.T) {
	f := taskFile(t)
	other := map[string]string{"FLOW_ACTOR": "bob"}
	f.mustRun("", "task", "claim", "T-3")
	t.Run("ClaimAgainIsIdempotent", func(t *testing.T) {
		before := f.bytes()
		f.mustRun("", "task", "claim", "T-3")
		if string(before) != string(f.bytes()) {
			t.Fatal("claiming again by the same actor changed the file")
		}
	})
	t.Run("OtherActorConflicts", func(t *testing.T) {
		_, stderr, code := runCLIEnv(t, f.dir, other, "", "task", "claim", "T-3")
		wantError(t, stderr, code, 4, "claimed by tester")
		_, stderr, code = runCLIEnv(t, f.dir, other, "", "task", "release", "T-3")
		wantError(t, stderr, code, 4, "claimed by tester")
	})
	t.Run("ReadyExplainForOthers", func(t *testing.T) {
		stdout, _, code := runCLIEnv(t, f.dir, other, "", "ready", "--explain")
		for _, want := range []string{"T-1  todo    2    write the parser  ready", "waiting for T-1 (todo)", "claimed by tester until"} {
			if code != 0 || !strings.Contains(stdout, want) {
				t.Fatalf("ready --explain: exit %d, output lacks %q:\n%s", code, want, stdout)
			}
		}
	})
	t.Run("ReadyJSONForClaimer", func(t *testing.T) {
		var rs []struct {
			Task  taskJSON `json:"task"`
			Ready bool     `json:"ready"`
		}
		if err := json.Unmarshal([]byte(f.mustRun("", "ready", "-o", "json")), &rs); err != nil {
			t.Fatal(err)
		}
		if len(rs) != 2 || rs[0].Task.ID != "T-1" || rs[1].Task.ID != "T-3" || !rs[0].Ready {
			t.Fatalf("ready = %+v", rs)
		}
	})
	t.Run("HeartbeatAndRelease", func(t *testing.T) {
		f.mustRun("", "task", "heartbeat", "T-3", "--lease", "1h")
		f.mustRun("", "task", "release", "T-3")
		if got := showTask(t, f, "T-3"); got.Claim != nil {
			t.Fatalf("claim after release = %+v", got.Claim)
		}
		_, stderr, code := f.run("", "task", "heartbeat", "T-3")
		wantError(t, stderr, code, 4, "no live claim")
	})
}

func TestDep(t *testing.T) {
	f := taskFile(t)
	t.Run("CycleIsRefusedAndPrinted", func(t *testing.T) {
		f.mustRun("", "dep", "add", "T-3", "T-2")
		before := f.bytes()
		_, stderr, code := f.run("", "dep", "add", "T-1", "T-3")
		wantError(t, stderr, code, 4, "T-1 -> T-3 -> T-2 -> T-1")
		if string(before) != string(f.bytes()) {
			t.Fatal("a refused cycle changed the file")
		}
	})
	t.Run("SelfIsRefused", func(t *testing.T) {
		_, stderr, code := f.run("", "dep", "add", "T-1", "T-1")
		wantError(t, stderr, code, 4, "itself")
	})
	t.Run("LsAndRm", func(t *testing.T) {
		golden(t, "dep_ls.golden", f.mustRun("", "dep", "ls", "T-2"))
		f.mustRun("", "dep", "rm", "T-3", "T-2")
		if got := showTask(t, f, "T-3"); len(got.Deps) != 0 {
			t.Fatalf("deps after rm = %v", got.Deps)
		}
	})
}

func TestPlanAndProject(t *testing.T) {
	f := taskFile(t)
	t.Run("PlanNewShowClose", func(t *testing.T) {
		f.mustRun("", "plan", "new", "launch")
		f.mustRun("", "task", "edit", "T-1", "--plan", "P-1")
		out, _, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_PLAN_ID": "P-1"}, "", "task", "add", "in the plan", "-o", "json")
		var added taskJSON
		if code != 0 || json.Unmarshal([]byte(out), &added) != nil || added.Plan != "P-1" {
			t.Fatalf("task add with FLOW_PLAN_ID: exit %d, %s", code, out)
		}
		var plan struct {
			ID    string     `json:"id"`
			Tasks []taskJSON `json:"tasks"`
		}
		if err := json.Unmarshal([]byte(f.mustRun("", "plan", "show", "P-1", "-o", "json")), &plan); err != nil || len(plan.Tasks) != 2 {
			t.Fatalf("plan show = %+v (%v)", plan, err)
		}
		f.mustRun("", "plan", "close", "P-1")
	})
	t.Run("SwitchAndPrefix", func(t *testing.T) {
		f.mustRun("", "project", "new", "website")
		f.mustRun("", "project", "new", "webapp")
		_, stderr, code := f.run("", "task", "ls", "--project", "web")
		wantError(t, stderr, code, 2, "ambiguous", "webapp", "website")
		f.mustRun("", "project", "switch", "websi")
		b, err := os.ReadFile(filepath.Join(filepath.Dir(f.path), "current"))
		if err != nil || string(b) != "website\n" {
			t.Fatalf(".flow/current = %q, %v", b, err)
		}
		if out := f.mustRun("", "task", "ls", "-o", "json"); strings.TrimSpace(out) != "[]" {
			t.Fatalf("task ls in the switched-to project = %q", out)
		}
	})
	t.Run("NoProjectSelected", func(t *testing.T) {
		g := mustInit(t)
		g.mustRun("", "project", "new", "a")
		g.mustRun("", "project", "new", "b")
		if err := os.Remove(filepath.Join(filepath.Dir(g.path), "current")); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := g.run("", "task", "ls")
		wantError(t, stderr, code, 2, "no project selected")
	})
	t.Run("ArchiveRefusesNewWork", func(t *testing.T) {
		f.mustRun("", "project", "archive", "webapp")
		_, stderr, code := f.run("", "task", "add", "x", "--project", "webapp")
		wantError(t, stderr, code, 4, "archived")
	})
}

// TestProject_SelectionStays: init --project selects its project, and
// project new changes the selection only with --switch — also when the
// first project was selected for being the only one.
func TestProject_SelectionStays(t *testing.T) {
	t.Parallel()
	current := func(f *flowFile) string {
		t.Helper()
		var p struct{ Name string }
		if err := json.Unmarshal([]byte(f.mustRun("", "project", "show", "-o", "json")), &p); err != nil {
			t.Fatal(err)
		}
		return p.Name
	}
	for name, init := range map[string][]string{
		"InitProject": {"--project", "demo"},
		"ProjectNew":  nil,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := mustInit(t, init...)
			if init == nil {
				f.mustRun("", "project", "new", "demo")
			}
			f.mustRun("", "project", "new", "second")
			f.mustRun("", "task", "add", "lands in demo")
			if got := current(f); got != "demo" {
				t.Errorf("after project new second, the current project = %q, want demo", got)
			}
			f.mustRun("", "project", "new", "third", "--switch")
			if got := current(f); got != "third" {
				t.Errorf("after project new third --switch, the current project = %q, want third", got)
			}
			f.mustRun("", "init", "--project", "second")
			if got := current(f); got != "second" {
				t.Errorf("after init --project second, the current project = %q, want second", got)
			}
		})
	}
}

func TestTask_BadInputLeavesFileUnchanged(t *testing.T) {
	f := taskFile(t)
	tests := []struct {
		name  string
		args  []string
		code  int
		facts []string
	}{
		{"UnknownTask", []string{"task", "show", "T-9"}, 3, []string{"T-9"}},
		{"MalformedTaskID", []string{"task", "start", "X-1"}, 2, []string{"X-1"}},
		{"EmptyTitle", []string{"task", "add", " "}, 2, []string{"title"}},
		{"InvalidUTF8Title", []string{"task", "add", "bad \xff"}, 2, []string{"UTF-8"}},
		{"TitleTooLong", []string{"task", "add", strings.Repeat("x", 1025)}, 2, []string{"title"}},
		{"UnknownDep", []string{"task", "add", "x", "--dep", "T-9"}, 3, []string{"T-9"}},
		{"UnknownPlan", []string{"task", "add", "x", "--plan", "P-4"}, 3, []string{"P-4"}},
		{"BadPriority", []string{"task", "add", "x", "--priority", "high"}, 2, []string{"priority"}},
		{"StaleVersion", []string{"task", "edit", "T-1", "--title", "y", "--if-version", "3"}, 4, []string{"version"}},
		{"InvalidTransition", []string{"task", "done", "T-1"}, 4, []string{"todo"}},
		{"Cycle", []string{"dep", "add", "T-1", "T-2"}, 4, []string{"cycle"}},
		{"UnknownProject", []string{"task", "ls", "--project", "nope"}, 3, []string{"nope"}},
		{"BadProjectName", []string{"project", "new", "a b"}, 2, []string{"a b"}},
		{"ProjectExists", []string{"project", "new", "demo"}, 4, []string{"demo"}},
		{"NegativeLease", []string{"task", "claim", "T-1", "--lease", "-1m"}, 2, []string{"lease"}},
		{"ZeroLease", []string{"task", "claim", "T-1", "--lease", "0"}, 2, []string{"lease"}},
		{"LeaseMillionHours", []string{"task", "claim", "T-1", "--lease", "1000000h"}, 2, []string{"lease", "7 days"}},
		{"HeartbeatLeaseTooLong", []string{"task", "heartbeat", "T-1", "--lease", "169h"}, 2, []string{"lease"}},
		{"NegativePriority", []string{"task", "add", "x", "--priority", "-1"}, 2, []string{"priority", "0 to 1000"}},
		{"HugePriority", []string{"task", "edit", "T-1", "--priority", "99999999999"}, 2, []string{"priority"}},
		{"ExitCodeHuge", []string{"exec", "record", `{"command":"x","exit_code":99999999999}`}, 2, []string{"exit_code", "0-255"}},
		{"ExitCodeNegative", []string{"exec", "record", `{"command":"x","exit_code":-1}`}, 2, []string{"exit_code", "128+n"}},
		{"ExpiryTooFar", []string{"approval", "request", "-m", "m", "--expires", "1000000h"}, 2, []string{"expiry", "year"}},
		{"ProgressOver100", []string{"step", "progress", "T-1.1", "101"}, 2, []string{"progress"}},
		{"UnknownFlag", []string{"task", "add", "x", "--bogus"}, 2, []string{"bogus"}},
		{"MissingArg", []string{"dep", "add", "T-1"}, 2, []string{"arg"}},
		{"TitleWithNewline", []string{"task", "add", "a\nb"}, 2, []string{"title", "control character U+000A"}},
		{"TitleWithEscape", []string{"task", "add", "a\x1b[31mb"}, 2, []string{"title", "U+001B"}},
		{"EditTitleWithBell", []string{"task", "edit", "T-1", "--title", "a\ab"}, 2, []string{"title", "U+0007"}},
		{"TagWithNUL", []string{"task", "add", "x", "--tag", "a\x00"}, 2, []string{"tag", "U+0000"}},
		{"PlanTitleWithNewline", []string{"plan", "new", "a\nb"}, 2, []string{"title"}},
		{"StepTitleWithEscape", []string{"step", "add", "T-1", "a\x1b]0;x\a"}, 2, []string{"title"}},
		{"DescriptionWithEscape", []string{"task", "add", "x", "--description", "a\n\x1b[2J"}, 2, []string{"description", "U+001B"}},
		{"ActorWithNewline", []string{"task", "add", "x", "--actor", "ann\nbob"}, 2, []string{"actor"}},
		{"IdempotencyKeyReusedForOther", []string{"task", "add", "other", "--idempotency-key", "k"}, 4, []string{"k"}},
	}
	f.mustRun("", "task", "add", "first", "--idempotency-key", "k")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.bytes()
			_, stderr, code := f.run("", tt.args...)
			wantError(t, stderr, code, tt.code, tt.facts...)
			if string(before) != string(f.bytes()) {
				t.Fatal("the file changed")
			}
		})
	}
	t.Run("IdempotentRetryReturnsOriginal", func(t *testing.T) {
		before := f.bytes()
		var got taskJSON
		out := f.mustRun("", "task", "add", "first", "--idempotency-key", "k", "-o", "json")
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.ID != "T-4" {
			t.Fatalf("retry = %s", out)
		}
		if string(before) != string(f.bytes()) {
			t.Fatal("an idempotent retry changed the file")
		}
	})
}

// TestTask_TextOutputEscapesControls: text that carries control
// characters from elsewhere (events imported from another file, which
// are history and are not re-checked) prints escaped in log, task ls,
// task show and note ls: no raw escape sequence reaches a terminal.
func TestTask_TextOutputEscapesControls(t *testing.T) {
	t.Parallel()
	src := mustInit(t, "--project", "demo")
	src.mustRun("", "task", "add", "TITLEX", "--owner", "OWNERX")
	src.mustRun("", "note", "add", "--task", "T-1", "NOTEX")
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(src.mustRun("", "export")), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		delete(ev, "raw") // import the JSON data instead of the msgpack bytes
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, string(b))
	}
	dump := strings.NewReplacer("TITLEX", `\u001b[31mred\u0007`, "OWNERX", `ann\u001b[2J`, "NOTEX", `a\u001b]0;pwned\u0007b`).
		Replace(strings.Join(events, "\n"))
	dst := mustInit(t)
	dst.mustRun(dump, "import", "-")
	for _, args := range [][]string{{"log"}, {"task", "ls"}, {"task", "show", "T-1"}, {"note", "ls", "--task", "T-1"}} {
		out := dst.mustRun("", args...)
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%v printed a raw control character: %q", args, out)
		}
		if !strings.Contains(out, `\x1b`) && !strings.Contains(out, `\u001b`) {
			t.Errorf("%v does not show the escape escaped: %q", args, out)
		}
	}
}

func TestTask_LsLimit(t *testing.T) {
	f := taskFile(t)
	t.Run("TextStopsAndSaysMoreMatch", func(t *testing.T) {
		out, stderr, code := f.run("", "task", "ls", "--limit", "2")
		if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "T-2") || strings.Contains(out, "T-3") {
			t.Fatalf("ls --limit 2: exit %d, %q", code, out)
		}
		if !strings.Contains(stderr, "first 2 tasks shown; more match") {
			t.Fatalf("ls --limit 2: stderr %q, want the note that more match", stderr)
		}
	})
	t.Run("NoNoteWhenAllFitOrQuiet", func(t *testing.T) {
		for _, args := range [][]string{{"--limit", "3"}, {"--limit", "0"}, {"--limit", "1", "-q"}, {"--status", "todo", "--owner", "ann", "--limit", "1"}} {
			_, stderr, code := f.run("", append([]string{"task", "ls"}, args...)...)
			if code != 0 || stderr != "" {
				t.Fatalf("ls %v: exit %d, stderr %q", args, code, stderr)
			}
		}
	})
	t.Run("JSONIsTheFirstItemsOfTheWholeList", func(t *testing.T) {
		for _, format := range []string{"json", "jsonl"} {
			var all, first []json.RawMessage
			decodeList(t, format, f.mustRun("", "task", "ls", "-o", format), &all)
			decodeList(t, format, f.mustRun("", "task", "ls", "-o", format, "--limit", "2", "-q"), &first)
			if len(all) != 3 || len(first) != 2 || string(first[0]) != string(all[0]) || string(first[1]) != string(all[1]) {
				t.Fatalf("-o %s: --limit 2 = %s, all = %s", format, first, all)
			}
		}
	})
	t.Run("JSONShapeIsShowsObjects", func(t *testing.T) {
		var objs []string
		for _, id := range []string{"T-1", "T-2", "T-3"} {
			// task show adds what a list leaves out: children and progress.
			show := strings.TrimSpace(f.mustRun("", "task", "show", id, "-o", "json"))
			objs = append(objs, strings.TrimSuffix(show, `,"children":[],"progress":0}`)+"}")
		}
		if got, want := f.mustRun("", "task", "ls", "-o", "json"), "[\n"+strings.Join(objs, ",\n")+"\n]\n"; got != want {
			t.Fatalf("task ls -o json =\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("OtherListsTakeLimit", func(t *testing.T) {
		f.mustRun("", "plan", "new", "one")
		f.mustRun("", "plan", "new", "two")
		f.mustRun("", "approval", "request", "--task", "T-1", "-m", "a")
		f.mustRun("", "approval", "request", "--task", "T-2", "-m", "b")
		f.mustRun("", "exec", "record", `{"command":"true","task":"T-1","exit_code":0}`)
		f.mustRun("", "exec", "record", `{"command":"false","task":"T-1","exit_code":1}`)
		f.mustRun("", "checkpoint", "--label", "c1")
		f.mustRun("", "checkpoint", "--label", "c2")
		for _, cmd := range [][]string{{"plan", "ls"}, {"approval", "ls"}, {"exec", "ls"}, {"checkpoint", "ls"}, {"ready", "--explain"}} {
			var items []json.RawMessage
			out, stderr, code := f.run("", append(cmd, "-o", "json", "--limit", "1")...)
			decodeList(t, "json", out, &items)
			if code != 0 || len(items) != 1 || !strings.Contains(stderr, "more match") {
				t.Fatalf("%v --limit 1: exit %d, %d items, stderr %q", cmd, code, len(items), stderr)
			}
		}
	})
	t.Run("NegativeIsAUsageError", func(t *testing.T) {
		_, stderr, code := f.run("", "task", "ls", "--limit", "-1")
		wantError(t, stderr, code, 2, "--limit -1")
	})
}

// decodeList decodes a list printed with -o json (an array) or -o jsonl.
func decodeList(t *testing.T, format, out string, items *[]json.RawMessage) {
	t.Helper()
	if format == "json" {
		if err := json.Unmarshal([]byte(out), items); err != nil {
			t.Fatalf("%v: %q", err, out)
		}
		return
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		*items = append(*items, json.RawMessage(line))
	}
}
