package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// The tests drive the real `flowctl mcp`: TestMain builds flowctl once,
// and every server and every CLI command of a test is that binary.

// flowctlBin is the flowctl binary the tests run.
var flowctlBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcpserver-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	flowctlBin = filepath.Join(dir, "flowctl")
	build := exec.Command("go", "build", "-o", flowctlBin, "github.com/flowctl/flowctl/cmd/flowctl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building flowctl:", err)
		return 1
	}
	return m.Run()
}

// testEnv is the environment of every command: FLOW_ACTOR and nothing
// else, so that the tests never depend on the real environment.
var testEnv = map[string]string{"FLOW_ACTOR": "tester"}

// environ is vars as os/exec wants them, with PATH (and GOCOVERDIR).
func environ(vars map[string]string) []string {
	out := []string{"PATH=" + os.Getenv("PATH")}
	if v, ok := os.LookupEnv("GOCOVERDIR"); ok {
		out = append(out, "GOCOVERDIR="+v)
	}
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	return out
}

// runCLI runs flowctl in dir with stdin and returns what it printed and
// its exit code.
func runCLI(t testing.TB, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(flowctlBin, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, environ(testEnv), strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errOut.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("flowctl %v: %v", args, err)
	}
	return out.String(), errOut.String(), 0
}

// flowFile is a flow file made by `flowctl init` for one test; on cleanup
// `flowctl verify` must find it clean.
type flowFile struct {
	t    testing.TB
	dir  string // working directory of the commands run through f.run
	path string // the file
}

// mustInit runs `flowctl init args...` in a fresh temporary directory.
func mustInit(t testing.TB, args ...string) *flowFile {
	t.Helper()
	dir := t.TempDir()
	f := &flowFile{t: t, dir: dir, path: filepath.Join(dir, flow.DefaultDir, flow.DefaultFile)}
	f.mustRun("", append([]string{"init"}, args...)...)
	t.Cleanup(func() {
		if stdout, stderr, code := runCLI(t, dir, "", "verify", "--db", f.path); code != 0 {
			t.Errorf("cleanup: flowctl verify: exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
	return f
}

func (f *flowFile) run(stdin string, args ...string) (stdout, stderr string, code int) {
	f.t.Helper()
	return runCLI(f.t, f.dir, stdin, args...)
}

// mustRun runs flowctl and fails the test unless it exits 0.
func (f *flowFile) mustRun(stdin string, args ...string) string {
	f.t.Helper()
	stdout, stderr, code := f.run(stdin, args...)
	if code != 0 {
		f.t.Fatalf("flowctl %v: exit %d, stderr %q", args, code, stderr)
	}
	return stdout
}

// bytes returns the file's contents.
func (f *flowFile) bytes() []byte {
	f.t.Helper()
	b, err := os.ReadFile(f.path)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// event is an event of `log -o json`.
type event struct {
	Seq     uint64          `json:"seq"`
	Type    string          `json:"type"`
	Stream  string          `json:"stream"`
	Time    string          `json:"time"`
	Actor   string          `json:"actor"`
	Project string          `json:"project"`
	Data    json.RawMessage `json:"data"`
}

// logEvents runs `log -o json args...` and returns the events.
func (f *flowFile) logEvents(args ...string) []event {
	f.t.Helper()
	out := f.mustRun("", append([]string{"log", "-o", "json"}, args...)...)
	var evs []event
	if err := json.Unmarshal([]byte(out), &evs); err != nil {
		f.t.Fatalf("log -o json: %v\n%s", err, out)
	}
	return evs
}

// exportedRaw returns the stored payload of the event at seq, from export.
func exportedRaw(t *testing.T, f *flowFile, seq uint64) []byte {
	t.Helper()
	line, _, _ := strings.Cut(f.mustRun("", "export", "--since", strconv.FormatUint(seq, 10)), "\n")
	var ev struct {
		Seq uint64 `json:"seq"`
		Raw []byte `json:"raw"`
	}
	if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Seq != seq {
		t.Fatalf("export --since %d: %q (%v)", seq, line, err)
	}
	return ev.Raw
}
