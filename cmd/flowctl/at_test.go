package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// atReads are the read commands that take --at.
var atReads = [][]string{
	{"task", "show", "T-1"},
	{"task", "ls"},
	{"ctx", "get", "T-1"},
	{"ctx", "get", "T-1", "--key", "branch"},
	{"status"},
	{"ready", "--explain"},
	{"graph"},
}

func atArgs(args []string, more ...string) []string {
	return append(append([]string{}, args...), more...)
}

func TestAt_HeadIsNow(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	for _, read := range atReads {
		for _, format := range []string{"text", "json"} {
			t.Run(strings.Join(read, " ")+" "+format, func(t *testing.T) {
				want := f.mustRun("", atArgs(read, "-o", format)...)
				for _, at := range []string{"HEAD", fmt.Sprint(f.head), time.Now().Add(time.Hour).Format(time.RFC3339)} {
					if got := f.mustRun("", atArgs(read, "-o", format, "--at", at)...); got != want {
						t.Errorf("--at %s printed\n%s\nwant what it prints without --at:\n%s", at, got, want)
					}
				}
			})
		}
	}
}

func TestAt_Checkpoint(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	t.Run("SameAsItsSeq", func(t *testing.T) {
		for _, read := range atReads {
			a := f.mustRun("", atArgs(read, "-o", "json", "--at", "C-1")...)
			b := f.mustRun("", atArgs(read, "-o", "json", "--at", fmt.Sprint(f.cp))...)
			if a != b {
				t.Errorf("%v: --at C-1 printed %s, --at %d printed %s", read, a, f.cp, b)
			}
			if now := f.mustRun("", atArgs(read, "-o", "json")...); now == a {
				t.Errorf("%v: --at C-1 prints what it prints now: %s", read, now)
			}
		}
	})
	t.Run("TaskShow", func(t *testing.T) {
		var got struct {
			Status  string `json:"status"`
			Context json.RawMessage
		}
		out := f.mustRun("", "task", "show", "T-1", "--at", "C-1", "-o", "json")
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.Status != "doing" {
			t.Fatalf("task show T-1 --at C-1 = %s (%v), want status doing", out, err)
		}
	})
	t.Run("TaskLs", func(t *testing.T) {
		var got []taskJSON
		if err := json.Unmarshal([]byte(f.mustRun("", "task", "ls", "--at", "C-1", "-o", "json")), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Status != "doing" || got[1].Status != "todo" {
			t.Fatalf("task ls --at C-1 = %+v, want T-1 doing and T-2 todo", got)
		}
	})
	t.Run("CtxGet", func(t *testing.T) {
		if got := f.mustRun("", "ctx", "get", "T-1", "--at", "C-1", "-o", "json"); got != `{"branch":"main","files":["a.go"]}`+"\n" {
			t.Fatalf("ctx get T-1 --at C-1 = %s", got)
		}
		if got := f.mustRun("", "ctx", "get", "T-1", "--key", "branch", "--at", "C-1"); got != "main\n" {
			t.Fatalf("ctx get T-1 --key branch --at C-1 = %q", got)
		}
	})
	t.Run("Status", func(t *testing.T) {
		st := decodeStatus(t, f.mustRun("", "status", "--at", "C-1", "-o", "json"))
		if st.HeadSeq != f.cp || st.Tasks.Total != 2 || st.Tasks.Doing != 1 || st.Execs.Total != 0 {
			t.Fatalf("status --at C-1 = %+v, want seq %d, 2 tasks, 1 doing, no execs", st, f.cp)
		}
	})
	t.Run("Ready", func(t *testing.T) {
		// At C-1 nothing is ready (T-1 doing, T-2 waiting for it); now T-3 is.
		if got := f.mustRun("", "ready", "--at", "C-1", "-o", "json"); got != "[]\n" {
			t.Errorf("ready --at C-1 = %s, want []", got)
		}
		if got := f.mustRun("", "ready", "-o", "json"); !strings.Contains(got, `"T-3"`) {
			t.Errorf("ready now = %s, want T-3", got)
		}
	})
	t.Run("TaskCreatedLaterIsNotFound", func(t *testing.T) {
		travelUnchanged(t, f.flowFile, 3, "task", "show", "T-3", "--at", "C-1")
	})
}

// TestAt_TimeBetweenEvents: a time strictly between two events resolves
// to the last event at or before it.
func TestAt_TimeBetweenEvents(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	times := map[uint64]time.Time{}
	for _, ev := range f.logEvents() {
		tm, err := time.Parse(time.RFC3339Nano, ev.Time)
		if err != nil {
			t.Fatalf("event %d time %q: %v", ev.Seq, ev.Time, err)
		}
		times[ev.Seq] = tm
	}
	before, after := times[f.done-1], times[f.done] // the checkpoint, then T-1 done
	if after.Sub(before) < 2 {
		t.Fatalf("events %d and %d are %s apart: no time strictly between them", f.done-1, f.done, after.Sub(before))
	}
	mid := before.Add(after.Sub(before) / 2)
	ls := func(at string) string { return f.mustRun("", "task", "ls", "-o", "json", "--at", at) }
	wantBefore, wantAfter := ls(fmt.Sprint(f.done-1)), ls(fmt.Sprint(f.done))
	if wantBefore == wantAfter {
		t.Fatalf("task ls is the same at seqs %d and %d; the test cannot tell them apart", f.done-1, f.done)
	}
	for _, tc := range []struct {
		name, at, want string
	}{
		{"Between", mid.Format(time.RFC3339Nano), wantBefore},
		{"BetweenInAnotherZone", mid.In(time.FixedZone("", 2*3600)).Format(time.RFC3339Nano), wantBefore},
		{"JustBeforeTheLater", after.Add(-1).Format(time.RFC3339Nano), wantBefore},
		{"ExactlyTheLater", after.Format(time.RFC3339Nano), wantAfter},
		{"ExactlyTheEarlier", before.Format(time.RFC3339Nano), wantBefore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ls(tc.at); got != tc.want {
				t.Errorf("task ls --at %s = %s, want %s", tc.at, got, tc.want)
			}
		})
	}
	t.Run("BeforeTheFirstEventIsEmpty", func(t *testing.T) {
		first := times[1].Add(-time.Second).Format(time.RFC3339Nano)
		travelUnchanged(t, f.flowFile, 3, "status", "--at", first) // the project did not exist yet
	})
}

func TestAt_BadInput(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	past := fmt.Sprint(f.head + 1)
	for _, read := range atReads {
		for _, tc := range []struct {
			name string
			code int
			at   []string
		}{
			{"SeqPastHead", 2, []string{"--at", past}},
			{"UnknownCheckpoint", 3, []string{"--at", "C-9"}},
			{"BadPoint", 2, []string{"--at", "yesterday"}},
			{"Empty", 2, []string{"--at", ""}},
			{"NoValue", 2, []string{"--at"}},
		} {
			t.Run(strings.Join(read, " ")+" "+tc.name, func(t *testing.T) {
				travelUnchanged(t, f.flowFile, tc.code, atArgs(read, tc.at...)...)
			})
		}
	}
	t.Run("NotOnWrites", func(t *testing.T) {
		travelUnchanged(t, f.flowFile, 2, "task", "start", "T-3", "--at", "C-1")
	})
}
