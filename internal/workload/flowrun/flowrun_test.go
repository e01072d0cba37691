package flowrun_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/internal/workload/flowrun"
)

// mustOpen creates an engine on a new file with a clock that ticks a
// second per event, as flowbench gen's does.
func mustOpen(tb testing.TB) *flow.Engine {
	tb.Helper()
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e, err := flow.Open(filepath.Join(tb.TempDir(), "flow.db"), flow.Options{Create: true, NoSync: true, Actor: "agent",
		Session: "bench", Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// events writes n ops of o to a new file and returns its records without
// their random ids and the hashes that cover them.
func events(t *testing.T, o workload.Options, n uint64) []eventlog.Record {
	t.Helper()
	e := mustOpen(t)
	var last uint64
	err := flowrun.Write(context.Background(), e, workload.New(o), n, func(done, total uint64) { last = done })
	if err != nil || last != n {
		t.Fatalf("Write: %v, progress %d of %d", err, last, n)
	}
	path := e.Path()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []eventlog.Record
	err = l.ReadRange(0, 0, func(r *eventlog.Record) error {
		c := *r
		c.ID, c.Prev, c.Hash = eventlog.ID{}, eventlog.Hash{}, eventlog.Hash{}
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWrite_SameSeedSameEvents(t *testing.T) {
	o := workload.Options{Projects: 3, Seed: 7, CheckpointEvery: 500}
	a, b := events(t, o, 3000), events(t, o, 3000)
	if len(a) != 3000 {
		t.Fatalf("%d events, want 3000", len(a))
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two files of one seed hold different events")
	}
	o.Seed = 8
	if reflect.DeepEqual(a, events(t, o, 3000)) {
		t.Fatal("two seeds wrote the same events")
	}
}

func TestRun(t *testing.T) {
	t.Run("ErrOutOfStep", func(t *testing.T) {
		e := mustOpen(t)
		g := workload.New(workload.Options{Projects: 1, Seed: 1})
		if err := flowrun.Run(e, g.Next()); err != nil {
			t.Fatal(err)
		}
		if _, err := e.AddTask(flow.NewTask{Project: workload.ProjectName(0), Title: "not the workload's"}); err != nil {
			t.Fatal(err)
		}
		var op workload.Op
		var err error
		for err == nil && op.Kind != workload.AddTask {
			op = g.Next()
			err = flowrun.Run(e, op)
		}
		if op.Kind != workload.AddTask || !errors.Is(err, flowrun.ErrOutOfStep) {
			t.Fatalf("%s %s after a task of the file's own: %v, want ErrOutOfStep", op.Kind, op.ID, err)
		}
	})
}
