package reliability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// ack is one write a writer was told succeeded (exit 0), as it records it
// in its log file, one JSON object a line.
type ack struct {
	Kind  string `json:"kind"`  // "task", "step" or "ctx"
	Key   string `json:"key"`   // task title and ref, step title, or ctx key
	ID    string `json:"id"`    // T-n or T-1.n
	Value int    `json:"value"` // the ctx value
}

// killMaxDelay bounds the random moment at which a writer's command is
// killed. A command takes a few milliseconds here, so about half the
// commands are killed, many of them mid-write.
const killMaxDelay = 15 * time.Millisecond

// writer runs one flowctl command per cycle, each in its own process that
// may be killed, and appends what it was told succeeded to its log.
type writer struct {
	n       int
	rng     *rand.Rand
	log     *os.File
	next    int    // number of the next key
	retry   string // task or step key whose command was killed or busy
	retryOp string
	ctxMax  int // highest ctx value attempted
	stats   killStats
}

type killStats struct{ commands, acked, killed, busy int }

func (s *killStats) add(o killStats) {
	s.commands += o.commands
	s.acked += o.acked
	s.killed += o.killed
	s.busy += o.busy
}

// step runs one command killed after a random delay up to killMaxDelay.
func (w *writer) step(t *testing.T, dir string) {
	op, key := w.retryOp, w.retry
	if key == "" {
		op = [...]string{"task", "step", "ctx"}[w.rng.IntN(3)]
		key = fmt.Sprintf("w%d-%s%d", w.n, op, w.next)
		w.next++
	}
	var args []string
	value := 0
	switch op {
	case "task":
		args = []string{"task", "add", key, "--ref", key, "--idempotency-key", key}
	case "step":
		args = []string{"step", "add", "T-1", key, "--idempotency-key", key}
	case "ctx":
		value = w.next
		w.ctxMax = value
		key = fmt.Sprintf("w%d", w.n)
		args = []string{"ctx", "merge", "T-1", fmt.Sprintf(`{%q:%d}`, key, value)}
	}
	delay := time.Duration(w.rng.Int64N(int64(killMaxDelay)))
	r := flow(t, dir, delay, args...)
	w.stats.commands++
	switch {
	case r.killed:
		w.stats.killed++
	case r.code == 5:
		w.stats.busy++
	case r.code != 0:
		t.Errorf("writer %d: flowctl %v: exit %d, stderr %q", w.n, args, r.code, r.stderr)
		return
	default:
		w.stats.acked++
		w.retry, w.retryOp = "", ""
		a := ack{Kind: op, Key: key, Value: value}
		if op != "ctx" {
			a.ID = decode[struct {
				ID string `json:"id"`
			}](t, r.stdout).ID
		}
		line, _ := json.Marshal(a)
		if _, err := w.log.Write(append(line, '\n')); err != nil {
			t.Error(err)
		}
		return
	}
	if op != "ctx" { // retried with the same idempotency key
		w.retry, w.retryOp = key, op
	}
}

// readAcks reads back every writer's log.
func readAcks(t *testing.T, writers []*writer) []ack {
	t.Helper()
	var acks []ack
	for _, w := range writers {
		f, err := os.Open(w.log.Name())
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			acks = append(acks, decode[ack](t, sc.Text()))
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return acks
}

// checkAcked fails unless every acknowledged write is in the file, each
// task and step key was applied at most once (retries after a kill reuse
// the idempotency key), and each writer's ctx key holds its last
// acknowledged value or a later attempted one.
func checkAcked(t *testing.T, dir string, writers []*writer) {
	t.Helper()
	tasks := decode[[]task](t, mustFlow(t, dir, "task", "ls"))
	byRef := map[string]task{}
	ids := map[string]bool{}
	var anchor task
	for _, tk := range tasks {
		if ids[tk.ID] {
			t.Fatalf("task id %s listed twice", tk.ID)
		}
		ids[tk.ID] = true
		if tk.ID == "T-1" {
			anchor = tk
			continue
		}
		if _, dup := byRef[tk.Ref]; dup {
			t.Fatalf("tasks %s and %s both have ref %q: a retry applied twice", byRef[tk.Ref].ID, tk.ID, tk.Ref)
		}
		if tk.Title != tk.Ref {
			t.Fatalf("task %s: title %q, ref %q: half applied", tk.ID, tk.Title, tk.Ref)
		}
		byRef[tk.Ref] = tk
	}
	steps := map[string]step{}
	for _, s := range anchor.Steps {
		if prev, dup := steps[s.Title]; dup {
			t.Fatalf("steps %s and %s both titled %q: a retry applied twice", prev.ID, s.ID, s.Title)
		}
		steps[s.Title] = s
	}
	lastCtx := map[string]int{}
	for _, a := range readAcks(t, writers) {
		switch a.Kind {
		case "task":
			if got, ok := byRef[a.Key]; !ok || got.ID != a.ID {
				t.Fatalf("acknowledged task %s %q is missing (found %+v)", a.ID, a.Key, got)
			}
		case "step":
			if got, ok := steps[a.Key]; !ok || got.ID != a.ID {
				t.Fatalf("acknowledged step %s %q is missing (found %+v)", a.ID, a.Key, got)
			}
		case "ctx":
			lastCtx[a.Key] = a.Value
		}
	}
	for _, w := range writers {
		key := fmt.Sprintf("w%d", w.n)
		want, acked := lastCtx[key]
		got, ok := anchor.Context[key].(float64)
		if acked && (!ok || int(got) < want || int(got) > w.ctxMax) {
			t.Fatalf("ctx %s = %v, want between the acknowledged %d and the last attempted %d", key, anchor.Context[key], want, w.ctxMax)
		}
	}
}

// TestKill_AcknowledgedWritesSurviveSIGKILL: three writers add tasks and
// steps and merge context into one file, each command its own process,
// SIGKILLed at a random moment. After every cycle the file verifies
// (chain, seqs, indexes, projections equal a replay), every acknowledged
// write is there and nothing was applied twice. FLOW_KILL_CYCLES sets the
// number of cycles (default 300).
func TestKill_AcknowledgedWritesSurviveSIGKILL(t *testing.T) {
	cycles := envInt(t, "FLOW_KILL_CYCLES", 300)
	if testing.Short() {
		cycles = min(cycles, 50)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	dir := newFile(t)
	writers := make([]*writer, 3)
	for i := range writers {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("writer%d.log", i)))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		writers[i] = &writer{n: i, rng: rand.New(rand.NewPCG(seed, uint64(i))), log: f}
	}
	start := time.Now()
	var head uint64
	for c := 0; c < cycles && !t.Failed(); c++ {
		var wg sync.WaitGroup
		for _, w := range writers {
			wg.Go(func() { w.step(t, dir) })
		}
		wg.Wait()
		head = mustVerify(t, dir)
		checkAcked(t, dir, writers)
	}
	events := mustEvents(t, dir, head)
	var total killStats
	for _, w := range writers {
		total.add(w.stats)
	}
	counts := map[string]int{}
	for _, ev := range events {
		counts[ev.Type]++
	}
	t.Logf("%d cycles in %v: %d commands, %d acknowledged, %d killed, %d busy; %d events %v",
		cycles, time.Since(start).Round(time.Millisecond), total.commands, total.acked, total.killed, total.busy, len(events), counts)
	if total.killed == 0 || total.acked == 0 {
		t.Errorf("%d killed, %d acknowledged: the kills did not land mid-run", total.killed, total.acked)
	}
}
