package digest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// statusEmit appends one event as the engine's actor would, through
// Import (the commands for steps, approvals and exec records check what
// these fixtures set directly): at the next version of stream, at the
// engine's time.
func statusEmit(tb testing.TB, e *flow.Engine, stream, project, typ string, payload any) {
	tb.Helper()
	var version uint64
	for _, ev := range flowtest.Events(tb, e, flow.Filter{Stream: stream}) {
		version = ev.Version
	}
	var raw bytes.Buffer
	enc := msgpack.NewEncoder(&raw)
	enc.SetSortMapKeys(true)
	enc.SetCustomStructTag("msgpack")
	if err := enc.Encode(payload); err != nil {
		tb.Fatal(err)
	}
	schema, _ := projection.Schema(typ)
	id := make([]byte, 16)
	rand.Read(id)
	id[6], id[8] = id[6]&0x0f|0x40, id[8]&0x3f|0x80
	ev := flow.Event{ID: fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:]),
		Stream: stream, Version: version + 1, Type: typ, Schema: schema, Time: e.Now().UTC(),
		Actor: e.Actor(), Session: "s1", Project: project, Data: json.RawMessage("null"), Raw: raw.Bytes()}
	line, err := json.Marshal(ev)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := e.Import(bytes.NewReader(line)); err != nil {
		tb.Fatalf("emit %s on %s: %v", typ, stream, err)
	}
}

func statusProject(tb testing.TB, e *flow.Engine, name string) {
	tb.Helper()
	if _, err := e.CreateProject(flow.NewProject{Name: name}); err != nil {
		tb.Fatal(err)
	}
}

func statusTask(tb testing.TB, e *flow.Engine, project, title string, deps ...string) string {
	tb.Helper()
	t, err := e.AddTask(flow.NewTask{Project: project, Title: title, Deps: deps})
	if err != nil {
		tb.Fatal(err)
	}
	return t.ID
}

func statusMove(tb testing.TB, e *flow.Engine, project, id string, to ...string) {
	tb.Helper()
	for _, s := range to {
		if _, err := e.MoveTask(flow.Move{Project: project, ID: id, To: s}); err != nil {
			tb.Fatalf("move %s to %s: %v", id, s, err)
		}
	}
}

func statusExec(tb testing.TB, e *flow.Engine, project string, x projection.ExecRecorded) {
	tb.Helper()
	stream := projection.ProjectStream(project)
	if x.Task != "" {
		stream = projection.TaskStream(project, x.Task)
	}
	statusEmit(tb, e, stream, project, projection.TypeExecRecorded, x)
}

func statusApproval(tb testing.TB, e *flow.Engine, project, task, id string) {
	tb.Helper()
	statusEmit(tb, e, projection.TaskStream(project, task), project, projection.TypeApprovalRequested,
		projection.ApprovalRequested{ID: id, Task: task, Message: "may I?", ActionHash: strings.Repeat("0", 64)})
}

// misplacedEmit appends one event straight to the log, on a stream no
// command puts it on (as an older file may hold it, and Import refuses),
// and rebuilds the projections from the log.
func misplacedEmit(tb testing.TB, e *flow.Engine, stream, project, typ string, payload any) {
	tb.Helper()
	if err := e.Close(); err != nil { // the engine opens the file again on its next call
		tb.Fatal(err)
	}
	l, err := eventlog.Open(e.Path(), eventlog.Options{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	schema, _ := projection.Schema(typ)
	data, err := msgpack.Marshal(payload)
	if err != nil {
		tb.Fatal(err)
	}
	err = l.Update(func(tx *eventlog.Tx) error {
		_, err := tx.Append(stream, eventlog.Any, eventlog.Event{Type: typ, Schema: schema, Time: e.Now().UTC(),
			Actor: e.Actor(), Session: "s1", Project: project, Data: data})
		return err
	})
	if err := errors.Join(err, l.Close()); err != nil {
		tb.Fatal(err)
	}
	if _, err := e.Rebuild(); err != nil {
		tb.Fatal(err)
	}
}
