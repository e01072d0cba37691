package flow

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

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
		if got, want := appendExportLine([]byte("x"), r), oldExportLine(t, r); !bytes.Equal(got[1:], want) {
			t.Fatalf("record %+v:\n got %s\nwant %s", r, got[1:], want)
		}
	}
}
