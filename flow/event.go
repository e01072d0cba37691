package flow

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/flowctl/flowctl/flow/internal/eventview"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// Event is a stored event as users see it: in `log`, `export` and over
// MCP. Field names are the JSON output contract; fields are only added.
type Event struct {
	Seq     uint64    `json:"seq"`
	ID      string    `json:"id"`
	Stream  string    `json:"stream"`
	Version uint64    `json:"version"`
	Type    string    `json:"type"`
	Schema  uint32    `json:"schema"`
	Time    time.Time `json:"time"`
	// OccurredAt is when what the event records happened, when that is
	// not its time: an entry's time in a file it was imported from (the
	// payload's occurred_at, unix ns). Absent for an event recorded as
	// it happened.
	OccurredAt  *time.Time      `json:"occurred_at,omitempty"`
	Actor       string          `json:"actor"`
	Session     string          `json:"session,omitempty"`
	Project     string          `json:"project,omitempty"`
	Correlation string          `json:"correlation,omitempty"`
	Causation   string          `json:"causation,omitempty"`
	Data        json.RawMessage `json:"data"`
	// Raw is the payload exactly as stored (msgpack; base64 in JSON). Only
	// export fills it, so that import reproduces the payload byte for byte.
	Raw      []byte `json:"raw,omitempty"`
	PrevHash string `json:"prev_hash"`
	Hash     string `json:"hash"`
}

func eventOf(r *store.Record) Event {
	return Event{
		Seq:         r.Seq,
		ID:          r.ID.String(),
		Stream:      r.Stream,
		Version:     r.Version,
		Type:        r.Type,
		Schema:      r.Schema,
		Time:        r.Time,
		Actor:       r.Actor,
		Session:     r.Session,
		Project:     r.Project,
		Correlation: optionalID(r.Correlation),
		Causation:   optionalID(r.Causation),
		Data:        eventview.JSON(r.Type, r.Schema, r.Data),
		OccurredAt:  payloadOccurredAt(r.Data),
		PrevHash:    hex.EncodeToString(r.Prev[:]),
		Hash:        hex.EncodeToString(r.Hash[:]),
	}
}

func optionalID(id store.ID) string {
	if id.IsZero() {
		return ""
	}
	return id.String()
}

// payloadOccurredAt reads the occurred_at key of a payload that is a
// msgpack map, nil when it has none (or it is not an integer).
func payloadOccurredAt(data []byte) *time.Time {
	if len(data) == 0 || !bytes.Contains(data, []byte(occurredAtKey)) {
		return nil
	}
	var p struct {
		OccurredAt *int64 `msgpack:"occurred_at"`
	}
	if err := msgpack.Unmarshal(data, &p); err != nil || p.OccurredAt == nil || *p.OccurredAt == 0 {
		return nil
	}
	return stdTime(projection.Time(*p.OccurredAt))
}

// occurredAtKey is the payload key of an original time, as msgpack
// writes it (fixstr of 11 bytes).
const occurredAtKey = "\xaboccurred_at"

// occurredAt is t as a payload's occurred_at: 0 (omitted) for no time.
func occurredAt(t time.Time) projection.Time {
	if t.IsZero() {
		return 0
	}
	return projection.TimeOf(t)
}

// stdTime is t for a JSON view: nil (omitted) for no time.
func stdTime(t projection.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	s := t.Std()
	return &s
}
