package reliability

// Damaged files (issue 12 item 11): a zeroed page never makes a command
// print Go internals or change the file it refused; `flowctl recover`
// copies what still verifies into a new file that verifies; a copy left
// by a compact killed with SIGKILL is removed by the next compact.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// goInternals are texts of Go's runtime and libraries that must never
// reach a user.
var goInternals = []string{"panic", "assertion failed", "slice bounds", "index out of range",
	"strconv.", "Go struct field", "goroutine", "file size too small", "invalid database", "runtime error"}

func wantNoInternals(t *testing.T, what, stderr string) {
	t.Helper()
	for _, s := range goInternals {
		if strings.Contains(stderr, s) {
			t.Fatalf("%s: stderr %q shows Go internals (%q)", what, stderr, s)
		}
	}
}

// recoverReport is the part of 'recover -o json' these tests read.
type recoverReport struct {
	Kept          uint64 `json:"kept"`
	Lost          uint64 `json:"lost"`
	SourceHeadSeq uint64 `json:"source_head_seq"`
}

func TestZeroedPageRefusedCleanlyAndRecovered(t *testing.T) {
	dir, path := corruptFlowFile(t, flowctlBin)
	export := corruptRun(t, flowctlBin, dir, "export", "--db", path).stdout
	lines := strings.SplitAfter(export, "\n")
	head := uint64(strings.Count(export, "\n"))
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	counts := map[string]int{}
	for id := range len(orig) / page {
		work := filepath.Join(t.TempDir(), "flow.db")
		buf := bytes.Clone(orig)
		clear(buf[id*page : (id+1)*page])
		if err := os.WriteFile(work, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		damaged := corruptRun(t, flowctlBin, dir, "verify", "--db", work).code == 7
		for _, args := range [][]string{{"task", "add", "more"}, {"rebuild"}, {"compact"}} {
			what := fmt.Sprintf("page %d zeroed: flowctl %v", id, args)
			before, _ := os.ReadFile(work)
			r := corruptRun(t, flowctlBin, dir, append(args, "--db", work)...)
			wantNoInternals(t, what, r.stderr)
			after, _ := os.ReadFile(work)
			switch {
			case r.code == 7 && (!corruptOneLine(r.stderr) || !bytes.Equal(before, after)):
				t.Fatalf("%s: exit 7 with stderr %q, or the refused command changed the file", what, r.stderr)
			case r.code != 0 && r.code != 7:
				t.Fatalf("%s: exit %d, want 0 or 7; stderr %q", what, r.code, r.stderr)
			}
			counts[fmt.Sprintf("damaged=%v/%s/exit %d", damaged, args[0], r.code)]++
		}
		if !damaged {
			continue
		}
		// Recover from the damaged file as it was before the commands.
		if err := os.WriteFile(work, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		into := filepath.Join(t.TempDir(), "new.db")
		r := corruptRun(t, flowctlBin, dir, "recover", "--db", work, "--into", into, "-o", "json")
		if r.code != 0 {
			t.Fatalf("page %d zeroed: recover: exit %d, stderr %q", id, r.code, r.stderr)
		}
		var rep recoverReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("recover -o json: %v in %q", err, r.stdout)
		}
		// A zeroed meta page leaves bbolt the other one: the file as of
		// the commit before the last.
		if rep.SourceHeadSeq > head || (rep.SourceHeadSeq != 0 && rep.Kept+rep.Lost != rep.SourceHeadSeq) {
			t.Fatalf("page %d zeroed: recover kept %d and lost %d of %d events (meta's head %d)", id, rep.Kept, rep.Lost, head, rep.SourceHeadSeq)
		}
		if v := corruptRun(t, flowctlBin, dir, "verify", "--db", into); v.code != 0 {
			t.Fatalf("page %d zeroed: the recovered file fails verify: %s", id, v.stderr)
		}
		got := corruptRun(t, flowctlBin, dir, "export", "--db", into).stdout
		if got != strings.Join(lines[:rep.Kept], "") {
			t.Fatalf("page %d zeroed: the recovered events are not the first %d of the file's", id, rep.Kept)
		}
		counts[fmt.Sprintf("recovered all=%v", rep.Lost == 0)]++
	}
	t.Logf("%d pages of %d events zeroed one at a time: %v", len(orig)/page, head, counts)
}

func TestCompactKilledLeavesNoCopyAfterNextCompact(t *testing.T) {
	dir := newFile(t)
	for i := range 100 {
		mustFlow(t, dir, "task", "add", fmt.Sprint("task ", i, " ", strings.Repeat("x", 900)))
	}
	// A copy as a compact killed with SIGKILL leaves it: the size of the
	// file, beside it.
	stale := filepath.Join(dir, "flow.db.compact-1234567")
	orig, err := os.ReadFile(filepath.Join(dir, "flow.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 { // a kill at a random point, if the machine allows one
		runFlowctl(t, dir, 5*time.Millisecond, append([]string{"compact"}, fileArgs(20*time.Second)...)...)
	}
	mustFlow(t, dir, "compact")
	left, _ := filepath.Glob(filepath.Join(dir, "flow.db.compact-*"))
	if len(left) != 0 {
		t.Fatalf("copies of killed compacts still there after a compact: %v", left)
	}
	mustEvents(t, dir, mustVerify(t, dir))
}
