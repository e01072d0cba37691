package eventlog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The multi-process test re-executes the test binary; these variables tell
// the child what to do, and TestMain runs it instead of the tests.
const (
	childPathEnv   = "EVENTLOG_TEST_CHILD_PATH"
	childStreamEnv = "EVENTLOG_TEST_CHILD_STREAM"
	childCountEnv  = "EVENTLOG_TEST_CHILD_COUNT"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(childPathEnv); path != "" {
		n, _ := strconv.Atoi(os.Getenv(childCountEnv))
		os.Exit(runChild(path, os.Getenv(childStreamEnv), n, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// runChild appends n events to stream, one per open-append-close cycle as
// a CLI command would, with fsync on. It prints "ack ID SEQ" once an
// append is acknowledged and "busy ID" when the lock could not be taken.
// Any other failure is exit status 1.
func runChild(path, stream string, n int, stdout, stderr io.Writer) int {
	var version uint64
	for i := range n {
		id := NewID(time.Now())
		l, err := Open(path, Options{Timeout: 10 * time.Second})
		if errors.Is(err, ErrBusy) {
			fmt.Fprintln(stdout, "busy", id)
			continue
		}
		if err != nil {
			fmt.Fprintln(stderr, "open:", err)
			return 1
		}
		got, err := l.Append(stream, Exact(version), Event{ID: id, Type: "child.appended", Data: fmt.Appendf(nil, "%s/%d", stream, i)})
		if cerr := l.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintln(stderr, "append:", err)
			return 1
		}
		version = got.Version
		fmt.Fprintln(stdout, "ack", id, got.Seqs[0])
		// A CLI process takes milliseconds to start; without a pause the
		// child that just unlocked would usually win the lock again.
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
	}
	return 0
}

func TestLog_MultiProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 4 processes")
	}
	const children, perChild = 4, 50
	path := filepath.Join(t.TempDir(), "flow.db")
	l, err := Open(path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmds := make([]*exec.Cmd, children)
	outs := make([]*bytes.Buffer, children)
	for i := range cmds {
		outs[i] = new(bytes.Buffer)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(),
			childPathEnv+"="+path, childStreamEnv+"="+fmt.Sprint("child-", i), childCountEnv+"="+fmt.Sprint(perChild))
		cmd.Stdout, cmd.Stderr = outs[i], new(strings.Builder)
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting child %d: %v", i, err)
		}
		cmds[i] = cmd
	}

	acked := map[ID]uint64{} // id -> seq it was acknowledged at
	busy := map[ID]bool{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("child %d: %v\n%s", i, err, cmd.Stderr)
		}
		sc := bufio.NewScanner(outs[i])
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 {
				t.Fatalf("child %d printed %q", i, sc.Text())
			}
			id, err := ParseID(f[1])
			if err != nil {
				t.Fatalf("child %d printed %q: %v", i, sc.Text(), err)
			}
			switch {
			case f[0] == "ack" && len(f) == 3:
				seq, err := strconv.ParseUint(f[2], 10, 64)
				if err != nil {
					t.Fatalf("child %d printed %q", i, sc.Text())
				}
				acked[id] = seq
			case f[0] == "busy":
				busy[id] = true
			default:
				t.Fatalf("child %d printed %q", i, sc.Text())
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%d events acknowledged, %d reported busy", len(acked), len(busy))
	if len(acked)+len(busy) != children*perChild {
		t.Fatalf("%d acknowledged + %d busy, want %d attempts", len(acked), len(busy), children*perChild)
	}

	l = mustOpenPath(t, path, Options{ReadOnly: true})
	recs := readAll(t, l)
	if got, want := seqsOf(recs), seqRange(1, uint64(len(acked))); !equalSeqs(got, want) {
		t.Fatalf("seqs = %v, want 1..%d", got, len(acked))
	}
	seen := map[ID]bool{}
	switches := 0 // how often consecutive records come from different children
	for i, r := range recs {
		if i > 0 && r.Stream != recs[i-1].Stream {
			switches++
		}
		seq, ok := acked[r.ID]
		switch {
		case !ok:
			t.Errorf("seq %d holds %s, which no child acknowledged", r.Seq, r.ID)
		case seen[r.ID]:
			t.Errorf("%s is stored twice", r.ID)
		case seq != r.Seq:
			t.Errorf("%s is at seq %d, acknowledged at %d", r.ID, r.Seq, seq)
		}
		seen[r.ID] = true
	}
	t.Logf("children interleaved %d times", switches)
	for i := range children {
		// Each child's events are its attempts in order: versions 1..n,
		// attempt numbers rising (equal to version-1 when none was busy).
		stream := fmt.Sprint("child-", i)
		last := -1
		for v, r := range mustCollect(t, func(fn func(*Record) error) error { return l.ReadStream(stream, 0, fn) }) {
			var attempt int
			_, err := fmt.Sscanf(strings.TrimPrefix(string(r.Data), stream+"/"), "%d", &attempt)
			if err != nil || r.Version != uint64(v+1) || attempt <= last || (len(busy) == 0 && attempt != v) {
				t.Errorf("%s: seq %d has version %d, data %q", stream, r.Seq, r.Version, r.Data)
				break
			}
			last = attempt
		}
	}
}
