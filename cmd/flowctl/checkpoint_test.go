package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// travelFile is the scripted history the checkpoint, diff, rollback and
// --at tests share, in project p:
//
//	T-1 "write the parser" started, context {"branch":"main","files":["a.go"]}
//	T-2 "write the tests", depending on T-1
//	checkpoint C-1 "before" (task T-1)                           <- cp
//	T-1 done                                                     <- done
//	T-2 started, T-3 "three" added,
//	T-1 context merged {"branch":"fix parser","files":null,"n":3},
//	exec record X-1 (go test ./...) and approval A-1, granted, on T-2 <- head
type travelFile struct {
	*flowFile
	cp   uint64 // the seq C-1 marks
	done uint64 // the seq of 'task done T-1'
	head uint64
}

func travelFixture(t *testing.T) *travelFile {
	t.Helper()
	f := &travelFile{flowFile: mustInit(t, "--project", "p")}
	f.mustRun("", "task", "add", "write the parser")
	f.mustRun("", "task", "add", "write the tests", "--dep", "T-1")
	f.mustRun("", "task", "start", "T-1")
	f.mustRun("", "ctx", "merge", "T-1", `{"branch":"main","files":["a.go"]}`)
	c := travelCheckpoint(t, f.mustRun("", "checkpoint", "--label", "before", "--task", "T-1", "-o", "json"))
	f.cp = c.AtSeq
	f.mustRun("", "task", "done", "T-1")
	f.done = f.headSeq()
	f.mustRun("", "task", "start", "T-2")
	f.mustRun("", "task", "add", "three")
	f.mustRun("", "ctx", "merge", "T-1", `{"branch":"fix parser","files":null,"n":3}`)
	f.mustRun("", "exec", "record", `{"command":"go test ./...","success":true,"task":"T-2"}`)
	f.mustRun("", "approval", "request", "--task", "T-2", "-m", "ship it?")
	f.mustRun("", "--actor", "reviewer", "approval", "grant", "A-1")
	f.head = f.headSeq()
	return f
}

// headSeq is the seq of the newest event.
func (f *flowFile) headSeq() uint64 {
	f.t.Helper()
	evs := f.logEvents("--limit", "1")
	if len(evs) != 1 {
		f.t.Fatalf("log --limit 1 printed %d events", len(evs))
	}
	return evs[0].Seq
}

// checkpointJSON is a checkpoint as -o json prints it.
type checkpointJSON struct {
	Project   string `json:"project"`
	ID        string `json:"id"`
	Label     string `json:"label"`
	AtSeq     uint64 `json:"at_seq"`
	Task      string `json:"task"`
	GitHead   string `json:"git_head"`
	Seq       uint64 `json:"seq"`
	CreatedAt string `json:"created_at"`
}

func travelCheckpoint(t *testing.T, stdout string) checkpointJSON {
	t.Helper()
	var c checkpointJSON
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("checkpoint -o json printed %q: %v", stdout, err)
	}
	return c
}

// travelUnchanged runs args, expects exit code want with one line on
// stderr, nothing on stdout, and the file byte for byte as it was.
func travelUnchanged(t *testing.T, f *flowFile, want int, args ...string) {
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

func TestCheckpoint_Create(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	t.Run("MarksTheHeadBeforeIt", func(t *testing.T) {
		c := travelCheckpoint(t, f.mustRun("", "checkpoint", "--label", "after", "-o", "json"))
		if c.ID != "C-2" || c.Label != "after" || c.AtSeq != f.head || c.Project != "p" || c.Task != "" {
			t.Fatalf("checkpoint = %+v, want C-2 'after' at seq %d", c, f.head)
		}
		evs := f.logEvents("--type", "checkpoint.created")
		if len(evs) != 2 || evs[1].Seq != f.head+1 {
			t.Fatalf("checkpoint.created events at %v, want the second at seq %d", seqsOf(evs), f.head+1)
		}
	})
	t.Run("TextIsOneLine", func(t *testing.T) {
		out := f.mustRun("", "checkpoint", "--task", "t-2")
		if !strings.HasPrefix(out, "Created checkpoint C-3 at seq ") || !strings.Contains(out, "task T-2") || strings.Count(out, "\n") != 1 {
			t.Fatalf("checkpoint printed %q", out)
		}
	})
	t.Run("NoGitHeadOutsideAWorkTree", func(t *testing.T) {
		if gitHead(f.dir) != "" {
			t.Skip("the temporary directory is inside a git work tree")
		}
		c := travelCheckpoint(t, f.mustRun("", "checkpoint", "-o", "json"))
		if c.GitHead != "" {
			t.Fatalf("git_head = %q outside a git work tree", c.GitHead)
		}
	})
}

func TestCheckpoint_GitHead(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Skipf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "first")
	want := git("rev-parse", "HEAD")
	f := mustInitAt(t, dir, filepath.Join(dir, flow.DefaultDir, flow.DefaultFile), "--project", "p")
	c := travelCheckpoint(t, f.mustRun("", "checkpoint", "-o", "json"))
	if c.GitHead != want {
		t.Fatalf("git_head = %q, want %q", c.GitHead, want)
	}
	if out := f.mustRun("", "checkpoint", "ls"); !strings.Contains(out, want[:12]) {
		t.Errorf("checkpoint ls does not show the short git head %s:\n%s", want[:12], out)
	}
}

func TestCheckpoint_Ls(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	t.Run("EmptyIsOK", func(t *testing.T) {
		g := mustInit(t, "--project", "q")
		if out := g.mustRun("", "checkpoint", "ls", "-o", "json"); out != "[]\n" {
			t.Fatalf("checkpoint ls -o json on no checkpoints = %q, want []", out)
		}
	})
	f.mustRun("", "checkpoint", "--label", "after everything")
	t.Run("JSON", func(t *testing.T) {
		var got []checkpointJSON
		out := f.mustRun("", "checkpoint", "ls", "-o", "json")
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("checkpoint ls -o json = %q: %v", out, err)
		}
		if len(got) != 2 || got[0].ID != "C-1" || got[0].AtSeq != f.cp || got[0].Task != "T-1" ||
			got[1].ID != "C-2" || got[1].AtSeq != f.head || got[1].Label != "after everything" || got[1].CreatedAt == "" {
			t.Fatalf("checkpoint ls = %+v", got)
		}
	})
	t.Run("Table", func(t *testing.T) {
		lines := strings.Split(strings.TrimSuffix(f.mustRun("", "checkpoint", "ls"), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("checkpoint ls printed %q, want a header and 2 rows", lines)
		}
		if got := strings.Fields(lines[0]); strings.Join(got, " ") != "ID AT SEQ LABEL TASK GIT TIME" {
			t.Errorf("header = %q", lines[0])
		}
		row := strings.Fields(lines[1])
		if len(row) < 5 || row[0] != "C-1" || row[1] != strconv.FormatUint(f.cp, 10) || row[2] != "before" || row[3] != "T-1" {
			t.Errorf("row of C-1 = %q", lines[1])
		}
	})
}

func TestCheckpoint_BadInput(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "p")
	f.mustRun("", "task", "add", "one")
	for _, tc := range []struct {
		name string
		code int
		args []string
	}{
		{"UnknownTask", 3, []string{"checkpoint", "--task", "T-9"}},
		{"BadTaskID", 2, []string{"checkpoint", "--task", "nine"}},
		{"ExtraArgument", 2, []string{"checkpoint", "now"}},
		{"UnknownFlag", 2, []string{"checkpoint", "--lable", "x"}},
		{"LsTakesNoLabel", 2, []string{"checkpoint", "ls", "--label", "x"}},
		{"LabelTooLong", 2, []string{"checkpoint", "--label", strings.Repeat("x", flow.MaxTitle+1)}},
		{"StaleIfVersion", 4, []string{"checkpoint", "--if-version", "99"}},
	} {
		t.Run(tc.name, func(t *testing.T) { travelUnchanged(t, f, tc.code, tc.args...) })
	}
}
