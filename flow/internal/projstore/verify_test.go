package projstore

import (
	"bytes"
	"testing"

	"github.com/flowctl/flowctl/projection"
)

// verifyMemory is a replay with every kind of entity the status index
// covers: plans, planned tasks done and not, a claim, approvals, execs
// that failed and did not.
func verifyMemory(t *testing.T) *projection.Memory {
	mem := projection.NewMemory()
	for _, v := range valueEntities() {
		var err error
		switch v := v.(type) {
		case *projection.Project:
			err = mem.PutProject(v)
		case *projection.Plan:
			err = mem.PutPlan(v)
		case *projection.Task:
			err = mem.PutTask(v)
		case *projection.Approval:
			err = mem.PutApproval(v)
		case *projection.Checkpoint:
			err = mem.PutCheckpoint(v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"T-2", "T-3"} {
		status := "done"
		if id == "T-3" {
			status = "todo"
		}
		if err := mem.PutTask(&projection.Task{Project: "p", ID: id, Title: id, Status: status, Plan: "P-1"}); err != nil {
			t.Fatal(err)
		}
	}
	for i, ok := range []bool{true, false} {
		x := &projection.Exec{Project: "p", Meta: projection.Meta{Seq: uint64(10 + i), Version: 1}}
		x.ID, x.Task, x.Success = []string{"X-1", "X-2"}[i], "T-1", ok
		if err := mem.PutExec(x); err != nil {
			t.Fatal(err)
		}
	}
	return mem
}

// TestSummarySum: the sum verify compares the status index by is the
// sum of the entries wantSummaries makes, and a changed entry changes it.
func TestSummarySum(t *testing.T) {
	mem := verifyMemory(t)
	s := newSummarySum()
	want := wantSummaries(mem)
	var sum entrySum
	for k, v := range want {
		sum.add(s.hash([]byte(k), v))
	}
	if got := s.of(mem); got != sum {
		t.Fatalf("summarySum = %+v over the entries, wantSummaries' = %+v (%d entries)", got, sum, len(want))
	}
	if again := s.of(mem); again != sum {
		t.Fatalf("a second sum = %+v, want %+v", again, sum)
	}
	mem.Tasks["p/T-3"].Status = "done"
	if got := s.of(mem); got == sum {
		t.Fatal("the sum did not change with a task's status")
	}
}

// TestEntityComparer: verify's comparison of a replayed entity with a
// stored value says what sameValue says of its encoding.
func TestEntityComparer(t *testing.T) {
	var c entityComparer
	key := []byte("p/T-1")
	ents := valueEntities()
	task := ents[2]
	s2Body, _ := appendBody(nil, task)
	m, _ := projection.AppendEntity(nil, task)
	packed, _ := pack([]byte{valuePacked}, m)
	other, _ := appendBody(nil, &projection.Task{Project: "p", ID: "T-1"})
	exec := &projection.Exec{Project: "p", Meta: projection.Meta{Seq: 10, Version: 1}}
	exec.ID, exec.Task = "X-1", "T-1"
	ref, _ := appendBody(nil, exec)
	for _, tc := range []struct {
		name   string
		bucket string
		e      any
		got    []byte
		same   bool
	}{
		{"Equal", BucketTasks, task, Seal(key, bytes.Clone(s2Body)), true},
		{"PackedOnly", BucketTasks, task, Seal(key, packed), true},
		{"Format3", BucketTasks, task, Seal(key, bytes.Clone(m)), true},
		{"AnotherTask", BucketTasks, task, Seal(key, other), false},
		{"Damaged", BucketTasks, task, append(bytes.Clone(packed), 0, 0, 0, 0), false},
		{"RefForTask", BucketTasks, task, Seal(key, bytes.Clone(ref)), false},
		{"ExecRef", BucketExecs, exec, Seal(key, bytes.Clone(ref)), true},
		{"ExecOtherSeq", BucketExecs, &projection.Exec{Project: "p", ExecRecorded: exec.ExecRecorded, Meta: projection.Meta{Seq: 11, Version: 1}}, Seal(key, bytes.Clone(ref)), false},
		{"ExecNotRef", BucketExecs, exec, Seal(key, packed), false},
	} {
		for range 2 { // the buffers it reuses hold nothing of the call before
			if got := c.same(tc.bucket, key, tc.e, tc.got); got != tc.same {
				t.Errorf("%s: same = %v, want %v", tc.name, got, tc.same)
			}
		}
	}
}
