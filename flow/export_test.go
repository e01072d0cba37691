package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/internal/eventview"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// oldExportLine is an export line as export wrote it with encoding/json,
// which appendExportLine replaces.
func oldExportLine(tb testing.TB, r *store.Record) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	ev := eventOf(r)
	ev.Raw = r.Data
	if err := enc.Encode(ev); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestAppendExportLine: the export encoder writes encoding/json's bytes
// for random records: every envelope field empty or not, strings to
// escape, payloads of every type with and without occurred_at.
func TestAppendExportLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", "p0", "T-1", "a\"b\\c\nd\te\x01f", "é\u2028x", "\xff\xfe", "<&>", "task.created"}
	text := func() string { return texts[rng.IntN(len(texts))] }
	id := func() store.ID {
		var id store.ID
		if rng.IntN(3) > 0 {
			for i := range id {
				id[i] = byte(rng.IntN(256))
			}
		}
		return id
	}
	types := projection.Types()
	var a eventview.Appender // one for every record, as export's encoders use one per page
	for i := range 5000 {
		typ := types[rng.IntN(len(types))]
		r := &store.Record{
			Seq: rng.Uint64N(1 << 40), Stream: text(), Version: rng.Uint64N(1 << 20),
			Event: store.Event{
				ID: id(), Type: typ, Schema: uint32(rng.IntN(3)),
				Time:  time.Unix(0, rng.Int64N(1<<62)).UTC(),
				Actor: text(), Session: text(), Project: text(), Correlation: id(), Causation: id(),
			},
		}
		if i%5 == 0 {
			r.Type = text()
		}
		for j := range r.Hash {
			r.Hash[j], r.Prev[j] = byte(rng.IntN(256)), byte(rng.IntN(256))
		}
		var payload any = map[string]any{"id": text(), "title": text(), "lease_until": rng.Int64N(1 << 62),
			"patch": `{"a": [1, 2]}`, "n": rng.Float64()}
		switch i % 4 {
		case 0:
			payload = nil
		case 1:
			payload.(map[string]any)["occurred_at"] = rng.Int64N(1 << 62)
		}
		if payload != nil {
			data, err := marshal(payload)
			if err != nil {
				t.Fatal(err)
			}
			r.Data = data
		}
		if got, want := appendExportLine([]byte("x"), &a, r), oldExportLine(t, r); !bytes.Equal(got[1:], want) {
			t.Fatalf("record %+v:\n got %s\nwant %s", r, got[1:], want)
		}
	}
}

// TestExport_Pages: an export read in many small pages, encoded on
// several goroutines, writes the lines of a one-page export in the same
// order, whole file and one project; a write that fails ends it with
// that error and leaves no goroutine behind.
func TestExport_Pages(t *testing.T) {
	e := mustOpen(t)
	fill(t, e, 5) // p0..p4, one event each
	for range 20 {
		if _, err := e.AddTask(NewTask{Project: "p2", Title: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	whole := pageLimits{records: 1 << 20, bytes: 1 << 30}
	for _, f := range []Filter{{}, {Project: "p2"}, {SinceSeq: 7}} {
		var want bytes.Buffer
		wantN, err := e.export(&want, f, whole)
		if err != nil || wantN < 15 {
			t.Fatalf("export(%+v) in one page = %d, %v", f, wantN, err)
		}
		for _, lim := range []pageLimits{{records: 1, bytes: 1 << 30}, {records: 3, bytes: 1 << 30}, {records: 100, bytes: 1}} {
			var got bytes.Buffer
			n, err := e.export(&got, f, lim)
			if err != nil || n != wantN || got.String() != want.String() {
				t.Errorf("export(%+v) in pages of %+v = %d, %v:\n%s\nwant %d:\n%s", f, lim, n, err, got.String(), wantN, want.String())
			}
		}
	}
	t.Run("ErrWrite", func(t *testing.T) {
		before := runtime.NumGoroutine()
		w := &failAfterWriter{after: 2}
		n, err := e.export(w, Filter{}, pageLimits{records: 2, bytes: 1 << 30})
		if !errors.Is(err, errWrite) || n != 4 {
			t.Fatalf("export to a writer failing at its third write = %d, %v; want 4 events and errWrite", n, err)
		}
		for i := 0; runtime.NumGoroutine() > before; i++ {
			if i == 100 {
				t.Fatalf("%d goroutines after the export, %d before", runtime.NumGoroutine(), before)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

var errWrite = errors.New("write failed")

// failAfterWriter takes after writes, then fails.
type failAfterWriter struct{ after int }

func (w *failAfterWriter) Write(b []byte) (int, error) {
	if w.after == 0 {
		return 0, errWrite
	}
	w.after--
	return len(b), nil
}
