package projstore

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// valueEntities are entities of every kind with the fields packing
// rewrites: names, statuses, small and large uint64s, SHA-256 hex.
func valueEntities() []any {
	meta := projection.Meta{Version: 7, Seq: 1 << 50, CreatedAt: 1_700_000_000_000_000_000, CreatedBy: "agent", UpdatedAt: 1_700_000_000_000_000_001}
	return []any{
		&projection.Project{Name: "p", Description: "d", Counters: projection.Counters{Tasks: 3}, Events: 40, Meta: meta},
		&projection.Plan{Project: "p", ID: "P-1", Title: "open", Status: "open", Meta: meta},
		&projection.Task{Project: "p", ID: "T-1", Title: "done", Status: "doing", Tags: []string{"todo", "x"}, Deps: []string{"T-0"},
			Claim: &projection.Claim{Actor: "a", LeaseUntil: 5}, Context: projection.JSON(`{"k":"` + strings.Repeat("v", 300) + `"}`),
			Steps:            []projection.Step{{ID: "T-1.1", Title: "s", Status: "completed", Progress: 100}, {ID: "T-1.2", Status: "pending"}},
			PendingApprovals: []string{"A-1"}, Meta: meta},
		&projection.Approval{Project: "p", ID: "A-1", Message: "m", Status: "pending",
			ActionHash: strings.Repeat("0123456789abcdef", 4), Comment: strings.Repeat("0123456789ABCDEF", 4), Meta: meta},
		&projection.Approval{Project: "p", ID: "A-2", ActionHash: strings.Repeat("0123456789abcdeg", 4), Meta: meta},
		&projection.Checkpoint{Project: "p", ID: "C-1", Label: "l", AtSeq: 9, Meta: meta},
	}
}

// TestValue_RoundTrip: every entity's stored body unpacks to its msgpack
// byte for byte, decodes to the entity, and is smaller than the msgpack.
func TestValue_RoundTrip(t *testing.T) {
	for _, v := range valueEntities() {
		want, _ := projection.AppendEntity(nil, v)
		body, err := appendBody(nil, v)
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		if body[0] != valuePacked && body[0] != valueS2 {
			t.Fatalf("%T: kind %#x", v, body[0])
		}
		if len(body) >= len(want) {
			t.Errorf("%T: body %d bytes, msgpack %d", v, len(body), len(want))
		}
		got, err := unpackBody(nil, body)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%T: unpacked %x, %v; want %x", v, got, err, want)
		}
		out := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		if _, err := projection.DecodeEntity(got, out); err != nil || !reflect.DeepEqual(out, v) {
			t.Fatalf("%T: decoded %+v, %v", v, out, err)
		}
	}
}

// TestValue_Format3: a body stored by Format 3 (the plain msgpack) still
// decodes.
func TestValue_Format3(t *testing.T) {
	task := &projection.Task{Project: "p", ID: "T-1", Title: "one", Status: "todo"}
	body, _ := projection.AppendEntity(nil, task)
	got, err := decodeEntity[projection.Task](nil, BucketTasks, []byte("p/T-1"), Seal([]byte("p/T-1"), body))
	if err != nil || !reflect.DeepEqual(got, task) {
		t.Fatalf("decodeEntity of a Format 3 value = %+v, %v", got, err)
	}
}

// TestValue_Damaged: a body that does not unpack, and an exec reference
// where another kind is stored, are ErrDamaged.
func TestValue_Damaged(t *testing.T) {
	task, _ := appendBody(nil, valueEntities()[2])
	for name, body := range map[string][]byte{
		"Empty":        {},
		"UnknownKind":  {0x7f, 1, 2},
		"UnknownWord":  {valuePacked, 0x81, packMark, 0x7f},
		"CutToken":     {valuePacked, 0x81, packMark},
		"CutHex":       {valuePacked, 0x81, packMark, packHex, 1, 2},
		"CutString":    {valuePacked, 0x81, 0xa5, 'a'},
		"BadS2":        {valueS2, 0xff, 0xff, 0xff},
		"CutS2":        task[:len(task)/2],
		"ExecRefTask":  {valueExecRef, 1, 1},
		"BadExecRef":   {valueExecRef, 0x80},
		"PackedMarker": {valuePacked, packMark},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeEntity[projection.Task](nil, BucketTasks, []byte("p/T-1"), Seal([]byte("p/T-1"), body))
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("decodeEntity = %v, want ErrDamaged", err)
			}
		})
	}
	_, err := decodeEntity[projection.Exec](nil, BucketExecs, []byte("p/X-1"), Seal([]byte("p/X-1"), []byte{valueExecRef, 0x80}))
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("a cut exec reference = %v, want ErrDamaged", err)
	}
}

// FuzzPack: what packs unpacks to itself, byte for byte.
func FuzzPack(f *testing.F) {
	for _, v := range valueEntities() {
		b, _ := projection.AppendEntity(nil, v)
		f.Add(b)
	}
	f.Add([]byte{0xc1})
	f.Fuzz(func(t *testing.T, m []byte) {
		p, err := pack(nil, m)
		if err != nil {
			return
		}
		got, err := unpack(nil, p)
		if err != nil || !bytes.Equal(got, m) {
			t.Fatalf("unpack(pack(%x)) = %x, %v", m, got, err)
		}
	})
}

// recordTx serves Record from recs; nothing else of a store.Tx.
type recordTx struct {
	store.Tx
	recs map[uint64]*store.Record
}

func (t recordTx) Record(seq uint64) (*store.Record, error) { return t.recs[seq], nil }

// TestValue_ExecRef: an exec is stored as a reference to its event and
// decodes to the exec the event makes; a reference that does not fit the
// event (missing, another project, another task) is ErrDamaged.
func TestValue_ExecRef(t *testing.T) {
	payload := func(x projection.ExecRecorded) []byte {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.SetSortMapKeys(true)
		enc.SetCustomStructTag("msgpack")
		if err := enc.Encode(&x); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	rec := &store.Record{Seq: 9, Stream: "task/p/T-2", Version: 4, Event: store.Event{Type: projection.TypeExecRecorded,
		Schema: projection.SchemaVersion, Time: time.Unix(100, 0), Actor: "a", Project: "p",
		Data: payload(projection.ExecRecorded{ID: "X-1", Task: "T-2", Command: "go test", Stdout: projection.Output{Head: "ok", Bytes: 2}})}}
	want, err := projection.ExecAt(rec, "X-1", 4)
	if err != nil {
		t.Fatal(err)
	}
	body, err := appendBody(nil, want)
	if err != nil || body[0] != valueExecRef || !bytes.HasSuffix(body, []byte("T-2")) {
		t.Fatalf("appendBody = %x, %v", body, err)
	}
	log := recordTx{recs: map[uint64]*store.Record{9: rec}}
	got, err := decodeBody[projection.Exec](log, BucketExecs, []byte("p/X-1"), body)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeBody = %+v, %v; want %+v", got, err, want)
	}
	for name, c := range map[string]struct {
		key  string
		body []byte
		log  recordTx
	}{
		"Missing":        {"p/X-1", body, recordTx{}},
		"AnotherProject": {"q/X-1", body, log},
		"AnotherID":      {"p/X-2", body, log},
		"AnotherTask":    {"p/X-1", append(bytes.TrimSuffix(bytes.Clone(body), []byte("T-2")), "T-3"...), log},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeBody[projection.Exec](c.log, BucketExecs, []byte(c.key), c.body); !errors.Is(err, ErrDamaged) {
				t.Fatalf("decodeBody = %v, want ErrDamaged", err)
			}
		})
	}
}

// TestSameValue: verify takes a body compressed otherwise for the same
// entity, never another entity's.
func TestSameValue(t *testing.T) {
	key := []byte("p/T-1")
	v := valueEntities()[2]
	s2Body, _ := appendBody(nil, v)
	if s2Body[0] != valueS2 {
		t.Fatalf("kind %#x, want S2", s2Body[0])
	}
	m, _ := projection.AppendEntity(nil, v)
	packed, _ := pack([]byte{valuePacked}, m)
	other, _ := appendBody(nil, &projection.Task{Project: "p", ID: "T-1"})
	want := Seal(key, s2Body)
	for _, c := range []struct {
		name   string
		bucket string
		got    []byte
		same   bool
	}{
		{"Equal", BucketTasks, Seal(key, bytes.Clone(s2Body)), true},
		{"PackedOnly", BucketTasks, Seal(key, packed), true},
		{"AnotherTask", BucketTasks, Seal(key, other), false},
		{"Damaged", BucketTasks, append(bytes.Clone(packed), 0, 0, 0, 0), false},
		{"NotAnEntity", BucketSummaries, Seal(key, packed), false},
	} {
		if got := sameValue(c.bucket, key, want, c.got); got != c.same {
			t.Errorf("%s: sameValue = %v, want %v", c.name, got, c.same)
		}
	}
}

// TestPackWords: every word has a token below packUint, once, and fits a
// fixstr.
func TestPackWords(t *testing.T) {
	if len(packWords) > packUint {
		t.Fatalf("%d words, at most %d tokens", len(packWords), packUint)
	}
	seen := map[string]bool{}
	for _, w := range packWords {
		if seen[w] || len(w) > 31 {
			t.Errorf("word %q: repeated or too long for a fixstr", w)
		}
		seen[w] = true
	}
}
