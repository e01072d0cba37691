package workload

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func ops(o Options, n int) []Op { return New(o).Fill(nil, n) }

func TestGenerator_Deterministic(t *testing.T) {
	o := Options{Projects: 3, Seed: 7}
	a, b := ops(o, 20000), ops(o, 20000)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two generators with one seed differ")
	}
	o.Seed = 8
	if reflect.DeepEqual(a, ops(o, 20000)) {
		t.Fatal("two seeds give the same ops")
	}
}

// TestGenerator_Shape checks the mix the package doc promises: the
// projects first, then per task 28 ops, a plan every 40 tasks, a
// checkpoint every CheckpointEvery ops of a project.
func TestGenerator_Shape(t *testing.T) {
	const projects, n = 4, 60000
	got := ops(Options{Projects: projects, Seed: 1}, n)
	per := map[string]map[Kind]int{}
	for i, op := range got {
		if (i < projects) != (op.Kind == CreateProject) {
			t.Fatalf("op %d is %s", i, op.Kind)
		}
		if per[op.Project] == nil {
			per[op.Project] = map[Kind]int{}
		}
		per[op.Project][op.Kind]++
	}
	if len(per) != projects {
		t.Fatalf("%d projects, want %d", len(per), projects)
	}
	for name, k := range per {
		tasks, events := k[AddTask], 0
		for _, c := range k {
			events += c
		}
		if done := k[FinishTask]; done < tasks-1 || tasks < 100 {
			t.Errorf("%s: %d tasks, %d done", name, tasks, done)
		}
		if want := (tasks + 39) / 40; k[AddPlan] != want {
			t.Errorf("%s: %d plans for %d tasks, want %d", name, k[AddPlan], tasks, want)
		}
		if want := (events - 1) / (DefaultCheckpointEvery + 1); k[Checkpoint] != want {
			t.Errorf("%s: %d checkpoints in %d ops, want %d", name, k[Checkpoint], events, want)
		}
		for kind, want := range map[Kind]int{AddStep: 3, CompleteStep: 3, MergeContext: 6, AddNote: 2, RecordExec: 3, GrantApproval: 1} {
			if c := k[kind]; c < (tasks-1)*want || c > tasks*want {
				t.Errorf("%s: %d %s for %d tasks, want %d each", name, c, kind, tasks, want)
			}
		}
	}
}

func TestGenerator_NoCheckpoints(t *testing.T) {
	for _, op := range ops(Options{Projects: 1, Seed: 1, CheckpointEvery: -1}, 20000) {
		if op.Kind == Checkpoint {
			t.Fatal("a checkpoint with CheckpointEvery < 0")
		}
	}
}

// TestGenerator_IDs checks that the ids count per project as the engine
// counts them, and that every task depends only on earlier tasks.
func TestGenerator_IDs(t *testing.T) {
	got := ops(Options{Projects: 2, Seed: 3, CheckpointEvery: 100}, 5000)
	next := map[string]map[Kind]int{}
	for _, op := range got {
		if next[op.Project] == nil {
			next[op.Project] = map[Kind]int{}
		}
		prefix := map[Kind]string{AddPlan: "P", AddTask: "T", RecordExec: "X", RequestApproval: "A", Checkpoint: "C"}[op.Kind]
		if prefix == "" {
			continue
		}
		next[op.Project][op.Kind]++
		if want := shortID(prefix, next[op.Project][op.Kind]); op.ID != want {
			t.Fatalf("%s %s has id %s, want %s", op.Project, op.Kind, op.ID, want)
		}
		for _, d := range op.Deps {
			if n, err := strconv.Atoi(strings.TrimPrefix(d, "T-")); err != nil || n < 1 || n >= next[op.Project][AddTask] {
				t.Fatalf("%s %s depends on %s", op.Project, op.ID, d)
			}
		}
	}
}

func TestPayload(t *testing.T) {
	if p := Payload(); len(p) != PayloadSize || p[0] != 0x82 || p[len(p)-1] != 0x03 {
		t.Fatalf("payload of %d bytes: % x", len(p), p)
	}
}

func TestCommits(t *testing.T) {
	for _, n := range []int{1, 999, 1000, 2345} {
		total, commits := 0, 0
		for runs := range Commits(n) {
			commits++
			in := 0
			for _, r := range runs {
				if r.Events < 1 || r.Events > RunEvents || !strings.HasPrefix(r.Stream, "task/") {
					t.Fatalf("n=%d: run %+v", n, r)
				}
				in += r.Events
			}
			if in > CommitEvents {
				t.Fatalf("n=%d: %d events in one commit", n, in)
			}
			total += in
		}
		if total != n || commits != (n+CommitEvents-1)/CommitEvents {
			t.Errorf("n=%d: %d events in %d commits", n, total, commits)
		}
	}
}
