package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/pgtest"
)

// update rewrites the golden files under testdata/ instead of comparing.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// childMarker separates the test binary's own arguments from the flowctl
// arguments when the binary runs as flowctl (FLOWCTL_TEST_MAIN=1).
const childMarker = "--"

// TestMain lets the test binary act as flowctl for the multi-process
// tests: with FLOWCTL_TEST_MAIN=1 it runs main() on the arguments after
// childMarker instead of running the tests.
func TestMain(m *testing.M) {
	if os.Getenv("FLOWCTL_TEST_MAIN") == "1" {
		i := slices.Index(os.Args, childMarker)
		if i < 0 {
			os.Stderr.WriteString("flowctl test child: no " + childMarker + " marker in the arguments\n")
			os.Exit(1)
		}
		os.Args = append([]string{os.Args[0]}, os.Args[i+1:]...)
		main() // exits
	}
	os.Exit(pgtest.Main(m)) // stops the PostgreSQL cluster a test started
}

// testEnv is the environment every in-process run sees: FLOW_ACTOR and
// nothing else, so that the tests never depend on the real environment.
var testEnv = map[string]string{"FLOW_ACTOR": "tester"}

// runCLI runs flowctl in process, in dir, with stdin, and returns what it
// printed and its exit code.
func runCLI(t testing.TB, dir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLIEnv(t, dir, nil, stdin, args...)
}

// runCLIEnv is runCLI with extra environment variables on top of testEnv.
func runCLIEnv(t testing.TB, dir string, extra map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	vars := make(map[string]string, len(testEnv)+len(extra))
	for k, v := range testEnv {
		vars[k] = v
	}
	for k, v := range extra {
		vars[k] = v
	}
	var out, errOut bytes.Buffer
	e := env{
		stdin:  strings.NewReader(stdin),
		stdout: &out,
		stderr: &errOut,
		getenv: func(k string) string { return vars[k] },
		dir:    dir,
	}
	// Not t.Context(): it is cancelled before cleanups, which run verify.
	code = run(context.Background(), args, e)
	return out.String(), errOut.String(), code
}

// flowFile is a flow file made by `flowctl init` for one test. On cleanup
// it runs `flowctl verify` and fails the test unless the file is clean,
// unless the test corrupted it on purpose (markCorrupted).
type flowFile struct {
	t         testing.TB
	dir       string // working directory of the commands run through f.run
	path      string // the file
	corrupted bool
}

// mustInit runs `flowctl init args...` in a fresh temporary directory and
// returns the file it made: dir/.flow/flow.db.
func mustInit(t testing.TB, args ...string) *flowFile {
	t.Helper()
	dir := t.TempDir()
	return mustInitAt(t, dir, filepath.Join(dir, flow.DefaultDir, flow.DefaultFile), args...)
}

// mustInitAt runs `flowctl init args...` in dir and returns the file it
// made, which must be at path (args name it with --db when it is not the
// default).
func mustInitAt(t testing.TB, dir, path string, args ...string) *flowFile {
	t.Helper()
	stdout, stderr, code := runCLI(t, dir, "", append([]string{"init"}, args...)...)
	if code != 0 {
		t.Fatalf("flowctl init %v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("flowctl init %v: %v", args, err)
	}
	f := &flowFile{t: t, dir: dir, path: path}
	t.Cleanup(f.mustVerify)
	return f
}

func (f *flowFile) mustVerify() {
	f.t.Helper()
	if f.corrupted {
		return
	}
	stdout, stderr, code := runCLI(f.t, f.dir, "", "verify", "--db", f.path)
	if code != 0 {
		f.t.Errorf("cleanup: flowctl verify %s: exit %d, stdout %q, stderr %q", f.path, code, stdout, stderr)
	}
}

// markCorrupted tells the cleanup that the test damaged the file on purpose.
func (f *flowFile) markCorrupted() { f.corrupted = true }

// run runs flowctl in the file's directory (where it finds the file).
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

// mustImportFixture imports testdata/events.jsonl (six events of two
// projects, three actors' worth of streams, fixed ids and times).
func (f *flowFile) mustImportFixture() {
	f.t.Helper()
	f.mustRun("", "import", fixturePath(f.t))
}

func fixturePath(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantError checks a failed command: its exit code, and that stderr is
// one error line (and in text mode a "hint:" line) that mentions every
// one of facts.
func wantError(t testing.TB, stderr string, code, wantCode int, facts ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit code = %d, want %d (stderr %q)", code, wantCode, stderr)
	}
	if !oneError(stderr) {
		t.Errorf("stderr is not one error line (and a hint line): %q", stderr)
	}
	for _, fact := range facts {
		if !strings.Contains(stderr, fact) {
			t.Errorf("stderr %q does not mention %q", stderr, fact)
		}
	}
}

// oneError reports whether stderr is one error: a line, then in text mode
// a second line "hint: …".
func oneError(stderr string) bool {
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if !strings.HasSuffix(stderr, "\n") || len(lines) > 2 || lines[0] == "" {
		return false
	}
	return len(lines) == 1 || strings.HasPrefix(lines[1], "hint: ")
}

// jsonError is the error object printed on stderr in JSON mode.
type jsonError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Hint    string `json:"hint"`
	} `json:"error"`
}

// wantJSONError checks that stderr is one line holding the JSON error
// object with the given code, and returns it.
func wantJSONError(t testing.TB, stderr string, code, wantCode int, wantErrCode string) jsonError {
	t.Helper()
	wantError(t, stderr, code, wantCode)
	var e jsonError
	dec := json.NewDecoder(strings.NewReader(stderr))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("stderr %q is not the JSON error object: %v", stderr, err)
	}
	if e.Error.Code != wantErrCode {
		t.Errorf("error code = %q, want %q", e.Error.Code, wantErrCode)
	}
	if e.Error.Message == "" {
		t.Errorf("error object has no message: %q", stderr)
	}
	return e
}

// event is an event as `log -o json` prints it.
type event struct {
	Seq      uint64          `json:"seq"`
	ID       string          `json:"id"`
	Stream   string          `json:"stream"`
	Version  uint64          `json:"version"`
	Type     string          `json:"type"`
	Schema   uint32          `json:"schema"`
	Time     string          `json:"time"`
	Occurred string          `json:"occurred_at"`
	Actor    string          `json:"actor"`
	Project  string          `json:"project"`
	Data     json.RawMessage `json:"data"`
	PrevHash string          `json:"prev_hash"`
	Hash     string          `json:"hash"`
}

// decodeEvents parses the JSON array printed by `log -o json`.
func decodeEvents(t testing.TB, stdout string) []event {
	t.Helper()
	var evs []event
	if err := json.Unmarshal([]byte(stdout), &evs); err != nil {
		t.Fatalf("log -o json output is not a JSON array: %v\n%s", err, stdout)
	}
	return evs
}

// logEvents runs `log -o json args...` and returns the events.
func (f *flowFile) logEvents(args ...string) []event {
	f.t.Helper()
	return decodeEvents(f.t, f.mustRun("", append([]string{"log", "-o", "json"}, args...)...))
}

func seqsOf(evs []event) []uint64 {
	seqs := make([]uint64, len(evs))
	for i, ev := range evs {
		seqs[i] = ev.Seq
	}
	return seqs
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
