package flow

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// TestTime_ClockStepsBack: an engine whose clock goes back writes the
// time of the event before instead.
func TestTime_ClockStepsBack(t *testing.T) {
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), DefaultDir, DefaultFile)
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateProject(NewProject{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(-time.Hour)
	if _, err := e.CreateProject(NewProject{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	all := collect(t, e, Filter{})
	if len(all) != 2 || !all[1].Time.Equal(all[0].Time) {
		t.Fatalf("events = %+v, want the second at the first's time %s", all, all[0].Time)
	}
	b, err := e.Project("b")
	if err != nil || !b.CreatedAt.Std().Equal(all[0].Time) {
		t.Errorf("project b created at %v (%v), want the clamped time %s", b, err, all[0].Time)
	}
}

// TestWithOccurredAt: the key goes at the end of a map payload, whose
// header grows when it must; other payloads are left as they are.
func TestWithOccurredAt(t *testing.T) {
	at := time.Date(2024, 4, 12, 8, 16, 1, 0, time.UTC)
	for _, n := range []int{0, 1, 15, 16, 1 << 16} {
		m := make(map[string]int, n)
		for i := range n {
			m[fmt.Sprintf("k%05d", i)] = i
		}
		data, err := marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := withOccurredAt(data, at)
		var back map[string]int64
		if err := msgpack.Unmarshal(got, &back); err != nil || len(back) != n+1 || back["occurred_at"] != at.UnixNano() {
			t.Fatalf("%d keys: %d keys back, occurred_at %d, %v", n, len(back), back["occurred_at"], err)
		}
		if p := payloadOccurredAt(got); p == nil || !p.Equal(at) {
			t.Errorf("%d keys: payloadOccurredAt = %v, want %s", n, p, at)
		}
		if again := withOccurredAt(got, at.Add(time.Hour)); !bytes.Equal(again, got) {
			t.Errorf("%d keys: a payload with occurred_at got another", n)
		}
	}
	for _, data := range [][]byte{nil, {}, {0x93, 1, 2, 3}, {0xa1, 'x'}} {
		if got := withOccurredAt(data, at); !bytes.Equal(got, data) {
			t.Errorf("withOccurredAt(% x) = % x, want it unchanged", data, got)
		}
	}
}
