package storetest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// The Processes test re-executes the test binary, running only the test
// that called Run, with these variables set; Run then plays a writer
// instead of running the suite.
const (
	childDSNEnv    = "STORETEST_CHILD_DSN"
	childNameEnv   = "STORETEST_CHILD_NAME"
	childRoundsEnv = "STORETEST_CHILD_ROUNDS"
)

// child plays a writer in a child process if this is one, and reports
// whether it was. The writer opens the store for each transaction and
// closes it after, as a command line program does; it prints what it
// did, one line each: "storetest ack ID SEQ", "storetest lost ID",
// "storetest conflict EXPECTED ACTUAL".
func (s *suite) child(t *testing.T) bool {
	dsn := os.Getenv(childDSNEnv)
	if dsn == "" {
		return false
	}
	rounds, err := strconv.Atoi(os.Getenv(childRoundsEnv))
	if err != nil {
		t.Fatalf("%s: %v", childRoundsEnv, err)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	w := &writer{
		name: os.Getenv(childNameEnv),
		with: func(fn func(store.Store) error) error {
			st, err := s.b.Driver.Open(dsn, s.options(false, nil))
			if err != nil {
				return err
			}
			err = fn(st)
			if cerr := st.Close(); err == nil {
				err = cerr
			}
			// A command takes milliseconds to start: without a pause the
			// process that just closed the store would usually open it
			// again first, and the writers would not interleave.
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			return err
		},
		ack:      func(id store.ID, seq uint64) { fmt.Fprintln(out, "storetest ack", id, seq) },
		conflict: func(e, a uint64) { fmt.Fprintln(out, "storetest conflict", e, a) },
		lost:     func(id store.ID) { fmt.Fprintln(out, "storetest lost", id) },
	}
	if err := w.run(rounds); err != nil {
		t.Fatal(err)
	}
	return true
}

// runPattern is the -test.run pattern that selects the test named name
// and none of its subtests' siblings.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

func (s *suite) testProcesses(t *testing.T) {
	if s.b.NoProcesses {
		t.Skip("Backend.NoProcesses: another process cannot open the store")
	}
	const children, rounds = 3, 12
	st, dsn := s.fresh(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	names := make([]string, children)
	cmds := make([]*exec.Cmd, children)
	for i := range cmds {
		names[i] = fmt.Sprint("p", i)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+runPattern(s.name), "-test.count=1")
		cmd.Env = append(os.Environ(), childDSNEnv+"="+dsn, childNameEnv+"="+names[i], childRoundsEnv+"="+fmt.Sprint(rounds))
		cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting child %d: %v", i, err)
		}
		cmds[i] = cmd
	}
	y := newTally()
	for i, cmd := range cmds {
		err := cmd.Wait()
		if err != nil {
			t.Errorf("child %d: %v\n%s%s", i, err, cmd.Stdout, cmd.Stderr)
		}
		if err := y.read(cmd.Stdout.(*bytes.Buffer)); err != nil {
			t.Errorf("child %d: %v", i, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	y.check(t, s.open(t, dsn, true), names, rounds)
}

// read adds what a child printed to y.
func (y *tally) read(out *bytes.Buffer) error {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "storetest" {
			continue // the test binary's own output
		}
		switch {
		case f[1] == "ack" && len(f) == 4:
			id, err := store.ParseID(f[2])
			seq, err2 := strconv.ParseUint(f[3], 10, 64)
			if err != nil || err2 != nil {
				return fmt.Errorf("child printed %q", sc.Text())
			}
			y.ack(id, seq)
		case f[1] == "lost":
			id, err := store.ParseID(f[2])
			if err != nil {
				return fmt.Errorf("child printed %q", sc.Text())
			}
			y.lose(id)
		case f[1] == "conflict":
			y.conflict(0, 0)
		default:
			return fmt.Errorf("child printed %q", sc.Text())
		}
	}
	return sc.Err()
}
