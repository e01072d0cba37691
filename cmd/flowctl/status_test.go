package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// statusFile is a file holding testdata/status_events.jsonl: project alpha
// (37 events, fixed ids and times; claims last until 2099):
//
//	T-1 doing, claimed by alice, steps T-1.1 completed and T-1.2 at 40%,
//	    context, approval A-1 granted, exec records X-1 ok, X-2 failed,
//	    X-5 ok, a note
//	T-2 todo after T-1, T-4 todo after T-2 (both blocked by deps)
//	T-3 todo with approval A-2 pending and exec record X-4 (npm run docs)
//	T-5 blocked, T-6 todo (the only ready task), T-7 done, T-8 cancelled
//	T-9 todo, claimed by bob (ready for bob only)
//	P-1 open, P-2 closed; X-3 a code record of no task; a project note
func statusFile(t testing.TB) *flowFile {
	t.Helper()
	f := mustInit(t)
	path, err := filepath.Abs(filepath.Join("testdata", "status_events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f.mustRun("", "import", path)
	return f
}

// statusUnchanged runs args, expects exit code want, and checks that
// stderr is one line and the file is byte for byte what it was.
func statusUnchanged(t *testing.T, f *flowFile, want int, args ...string) {
	t.Helper()
	before := f.bytes()
	stdout, stderr, code := f.run("", args...)
	wantError(t, stderr, code, want)
	if stdout != "" {
		t.Errorf("flowctl %v printed %q on stdout", args, stdout)
	}
	if !bytes.Equal(before, f.bytes()) {
		t.Errorf("flowctl %v changed the file", args)
	}
}

// statusJSON is `status -o json` as the README documents it.
type statusJSON struct {
	Project string `json:"project"`
	HeadSeq uint64 `json:"head_seq"`
	Tasks   struct {
		Total, Todo, Doing, Done, Blocked, Cancelled int
	} `json:"tasks"`
	Ready []struct {
		ID string `json:"id"`
	} `json:"ready"`
	Blocked []struct {
		ID         string   `json:"id"`
		Status     string   `json:"status"`
		WaitingFor []string `json:"waiting_for"`
	} `json:"blocked"`
	PendingApprovals []struct {
		ID   string `json:"id"`
		Task string `json:"task"`
	} `json:"pending_approvals"`
	Claims []struct {
		Task       string `json:"task"`
		Actor      string `json:"actor"`
		LeaseUntil string `json:"lease_until"`
	} `json:"claims"`
	Plans struct{ Open, Closed int }  `json:"plans"`
	Execs struct{ Total, Failed int } `json:"execs"`
}

func decodeStatus(t *testing.T, stdout string) statusJSON {
	t.Helper()
	var st statusJSON
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&st); err != nil {
		t.Fatalf("status -o json is not the status object: %v\n%s", err, stdout)
	}
	return st
}

func TestStatus(t *testing.T) {
	t.Parallel()
	f := statusFile(t)

	t.Run("Text", func(t *testing.T) {
		stdout, stderr, code := f.run("", "status")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		golden(t, "status_text.golden", stdout)
	})

	t.Run("JSON", func(t *testing.T) {
		st := decodeStatus(t, f.mustRun("", "status", "-o", "json"))
		if st.Project != "alpha" || st.HeadSeq != 37 {
			t.Errorf("project, head_seq = %q, %d; want alpha, 37", st.Project, st.HeadSeq)
		}
		c := st.Tasks
		if c.Total != 9 || c.Todo != 5 || c.Doing != 1 || c.Done != 1 || c.Blocked != 1 || c.Cancelled != 1 {
			t.Errorf("tasks = %+v, want 9: 5 todo, 1 each of the others", c)
		}
		if len(st.Ready) != 1 || st.Ready[0].ID != "T-6" {
			t.Errorf("ready = %+v, want [T-6]", st.Ready)
		}
		var blocked []string
		for _, b := range st.Blocked {
			blocked = append(blocked, b.ID+"("+strings.Join(b.WaitingFor, ",")+")")
		}
		if got := strings.Join(blocked, " "); got != "T-2(T-1) T-4(T-2) T-5()" {
			t.Errorf("blocked = %s, want T-2(T-1) T-4(T-2) T-5()", got)
		}
		if len(st.PendingApprovals) != 1 || st.PendingApprovals[0].ID != "A-2" || st.PendingApprovals[0].Task != "T-3" {
			t.Errorf("pending approvals = %+v, want [A-2 of T-3]", st.PendingApprovals)
		}
		if len(st.Claims) != 2 || st.Claims[0].Actor != "alice" || st.Claims[0].LeaseUntil != "2099-01-01T00:00:00Z" || st.Claims[1].Task != "T-9" {
			t.Errorf("claims = %+v, want alice's on T-1 and bob's on T-9, until 2099", st.Claims)
		}
		if st.Plans.Open != 1 || st.Plans.Closed != 1 || st.Execs.Total != 5 || st.Execs.Failed != 1 {
			t.Errorf("plans %+v, execs %+v; want 1/1 and 5 with 1 failed", st.Plans, st.Execs)
		}
	})

	t.Run("JSONL", func(t *testing.T) {
		stdout := f.mustRun("", "status", "-o", "jsonl")
		if strings.Count(stdout, "\n") != 1 {
			t.Errorf("-o jsonl printed %d lines, want 1", strings.Count(stdout, "\n"))
		}
		if st := decodeStatus(t, stdout); st.Tasks.Total != 9 {
			t.Errorf("jsonl tasks total = %d, want 9", st.Tasks.Total)
		}
	})

	t.Run("ReadyForActor", func(t *testing.T) {
		for actor, want := range map[string]string{"tester": "T-6", "bob": "T-6 T-9"} {
			var ids []string
			for _, r := range decodeStatus(t, f.mustRun("", "status", "--json", "--actor", actor)).Ready {
				ids = append(ids, r.ID)
			}
			if got := strings.Join(ids, " "); got != want {
				t.Errorf("ready for %s = %q, want %q (as 'ready' says: %q)", actor, got, want,
					strings.Join(strings.Fields(f.mustRun("", "ready", "--actor", actor)), " "))
			}
			// 'ready' answers for the actor too; only a claim of theirs
			// makes them matter, and bob holds one.
			var ready []string
			for _, line := range strings.Split(strings.TrimSpace(f.mustRun("", "ready", "-q", "--actor", actor)), "\n")[1:] {
				ready = append(ready, strings.Fields(line)[0])
			}
			if got := strings.Join(ready, " "); got != want {
				t.Errorf("'ready --actor %s' lists %q, want %q", actor, got, want)
			}
		}
	})

	t.Run("BadFlags", func(t *testing.T) {
		statusUnchanged(t, f, 2, "status", "--bogus")
		statusUnchanged(t, f, 2, "status", "extra")
		statusUnchanged(t, f, 2, "status", "-o", "yaml")
		statusUnchanged(t, f, 3, "status", "--project", "nope")
	})
}

func TestStatus_Empty(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "empty")
	stdout, stderr, code := f.run("", "status")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"tasks  0: 0 todo, 0 doing, 0 done, 0 blocked, 0 cancelled", "ready: none", "live claims: none"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status text lacks %q:\n%s", want, stdout)
		}
	}
	out := f.mustRun("", "status", "--json")
	for _, want := range []string{`"ready":[]`, `"blocked":[]`, `"pending_approvals":[]`, `"claims":[]`, `"execs":{"total":0,"failed":0}`} {
		if !strings.Contains(out, want) {
			t.Errorf("status JSON lacks %s: %s", want, out)
		}
	}
	if st := decodeStatus(t, out); st.Project != "empty" || st.HeadSeq != 1 {
		t.Errorf("project, head_seq = %q, %d; want empty, 1", st.Project, st.HeadSeq)
	}
}
