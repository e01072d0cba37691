package snapshot_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/internal/workload/flowrun"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
	"github.com/vmihailenco/msgpack/v5"
)

// Offsets of the header fields (doc.go).
const (
	offFormat   = 8
	offScopeLen = 86
	offScope    = 88
)

// snapEvent is one event of a test history.
type snapEvent struct {
	stream, typ string
	payload     any
}

// foldEvents folds a history of project into a fresh Memory through the
// real fold, so that the states tested here are the engine's states.
func foldEvents(tb testing.TB, project string, events []snapEvent) *projection.Memory {
	tb.Helper()
	mem := projection.NewMemory()
	versions := map[string]uint64{}
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i, ev := range events {
		data, err := msgpack.Marshal(ev.payload)
		if err != nil {
			tb.Fatal(err)
		}
		versions[ev.stream]++
		r := &eventlog.Record{Seq: uint64(i + 1), Stream: ev.stream, Version: versions[ev.stream], Event: eventlog.Event{
			Type: ev.typ, Schema: projection.SchemaVersion, Time: t0.Add(time.Duration(i) * time.Second),
			Actor: "ann", Session: "s1", Project: project, Data: data,
		}}
		if err := projection.Apply(mem, r); err != nil {
			tb.Fatalf("folding event %d (%s): %v", i+1, ev.typ, err)
		}
	}
	return mem
}

// smallHistory: a project, a task with two steps and context, an approval
// and an exec record on the task.
func smallHistory(project string) []snapEvent {
	ps, ts := projection.ProjectStream(project), projection.TaskStream(project, "T-1")
	progress := 40
	action := `{"cmd":"deploy"}`
	return []snapEvent{
		{ps, projection.TypeProjectCreated, projection.ProjectCreated{Name: project}},
		{ts, projection.TypeTaskCreated, projection.TaskCreated{ID: "T-1", Title: "ship it", Tags: []string{"web"}}},
		{ts, projection.TypeStepAdded, projection.StepAdded{ID: "T-1.1", Title: "build"}},
		{ts, projection.TypeStepAdded, projection.StepAdded{ID: "T-1.2", Title: "test"}},
		{ts, projection.TypeStepStatusChanged, projection.StepStatusChanged{ID: "T-1.1", To: projection.StepInProgress, Progress: &progress}},
		{ts, projection.TypeTaskContextMerged, projection.TaskContextMerged{Patch: `{"env":"prod","n":3}`}},
		{ts, projection.TypeApprovalRequested, projection.ApprovalRequested{ID: "A-1", Task: "T-1", Message: "deploy?", Action: action, ActionHash: hexSHA(action)}},
		{ts, projection.TypeExecRecorded, projection.ExecRecorded{ID: "X-1", Task: "T-1", Command: "make", Success: true, ElapsedMS: 12.5}},
	}
}

func hexSHA(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }

// smallState is the state of smallHistory.
func smallState(tb testing.TB) *projection.Scope {
	tb.Helper()
	return foldEvents(tb, "p", smallHistory("p")).Scope("p")
}

// bigState is a realistic state: tasks tasks with three steps and some
// context each, and execs exec records.
func bigState(tb testing.TB, tasks, execs int) *projection.Scope {
	tb.Helper()
	events := []snapEvent{{projection.ProjectStream("big"), projection.TypeProjectCreated, projection.ProjectCreated{Name: "big", Description: "a big one"}}}
	for i := 1; i <= tasks; i++ {
		id := projection.ShortID(projection.PrefixTask, i)
		ts := projection.TaskStream("big", id)
		events = append(events, snapEvent{ts, projection.TypeTaskCreated, projection.TaskCreated{
			ID: id, Title: fmt.Sprintf("task number %d of the big project", i), Description: strings.Repeat("words ", 10),
			Tags: []string{"backend", "q3"}, Priority: i % 5,
		}})
		for s := 1; s <= 3; s++ {
			events = append(events, snapEvent{ts, projection.TypeStepAdded, projection.StepAdded{ID: fmt.Sprintf("%s.%d", id, s), Title: fmt.Sprintf("step %d", s)}})
		}
		events = append(events, snapEvent{ts, projection.TypeTaskContextMerged, projection.TaskContextMerged{
			Patch: fmt.Sprintf(`{"branch":"feature/%d","files":["a.go","b.go","c.go"],"notes":"%s"}`, i, strings.Repeat("x", 80)),
		}})
	}
	for i := 1; i <= execs; i++ {
		task := projection.ShortID(projection.PrefixTask, 1+i%tasks)
		events = append(events, snapEvent{projection.TaskStream("big", task), projection.TypeExecRecorded, projection.ExecRecorded{
			ID: projection.ShortID(projection.PrefixExec, i), Task: task, Command: "go test ./...", Success: i%7 != 0, ElapsedMS: float64(i),
			Stdout: projection.Output{Head: strings.Repeat("ok  pkg\n", 20), Bytes: 160},
		}})
	}
	return foldEvents(tb, "big", events).Scope("big")
}

func testHeader(scope string) snapshot.Header {
	h := snapshot.Header{ProjectionVersion: projection.Version, Scope: scope, Seq: 8}
	copy(h.ChainHash[:], bytes.Repeat([]byte{0xab}, 32))
	return h
}

func mustEncode(tb testing.TB, h snapshot.Header, s *projection.Scope) []byte {
	tb.Helper()
	b, _, err := snapshot.Encode(h, s)
	if err != nil {
		tb.Fatalf("Encode: %v", err)
	}
	return b
}

func smallSnapshot(tb testing.TB) []byte {
	tb.Helper()
	return mustEncode(tb, testHeader("p"), smallState(tb))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// reseal recomputes the CRC of b in place, so that a test reaches the
// check behind it.
func reseal(b []byte) []byte {
	n := len(b) - 4
	binary.BigEndian.PutUint32(b[n:], crc32.Checksum(b[:n], castagnoli))
	return b
}

func wantCorrupt(tb testing.TB, what string, b []byte) {
	tb.Helper()
	h, s, err := snapshot.Decode(b)
	if !errors.Is(err, snapshot.ErrCorrupt) {
		tb.Fatalf("%s: Decode = %+v, %v; want ErrCorrupt", what, h, err)
	}
	var ce *snapshot.CorruptError
	if !errors.As(err, &ce) || s != nil {
		tb.Fatalf("%s: Decode = state %v, error %T; want no state and a *CorruptError", what, s != nil, err)
	}
}

func TestEncode_RoundTrip(t *testing.T) {
	t.Parallel()
	want := smallState(t)
	if want.Project == nil || len(want.Tasks) != 1 || len(want.Tasks[0].Steps) != 2 || len(want.Approvals) != 1 || len(want.Execs) != 1 {
		t.Fatalf("the fixture state is not what the test needs: %+v", want)
	}
	b, wantH, err := snapshot.Encode(testHeader("p"), want)
	if err != nil {
		t.Fatal(err)
	}
	if wantH.Format != snapshot.FullVersion || wantH.StateHash != mustStateHash(t, want) {
		t.Errorf("Encode's header = %+v: want the format version and the state hash set", wantH)
	}
	h, got, err := snapshot.Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if h != wantH {
		t.Errorf("header = %+v, want %+v", h, wantH)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("state = %+v\nwant %+v", got, want)
	}
	if h2, body, err := snapshot.Check(b); err != nil || h2 != wantH || !bytes.Equal(body, mustBody(t, want)) {
		t.Errorf("Check = %+v, %d body bytes, %v", h2, len(body), err)
	}
	t.Logf("the small snapshot is %d bytes", len(b))
}

func mustStateHash(tb testing.TB, s *projection.Scope) [32]byte {
	tb.Helper()
	h, err := snapshot.StateHash(s)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

func mustBody(tb testing.TB, s *projection.Scope) []byte {
	tb.Helper()
	b, err := snapshot.EncodeState(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestEncode_EmptyState(t *testing.T) {
	t.Parallel()
	empty := projection.NewMemory().Scope("nobody")
	b := mustEncode(t, snapshot.Header{Scope: "nobody"}, empty)
	_, got, err := snapshot.Decode(b)
	if err != nil || got.Project != nil || len(got.Tasks) != 0 {
		t.Fatalf("Decode of an empty state = %+v, %v", got, err)
	}
}

func TestEncode_Deterministic(t *testing.T) {
	t.Parallel()
	t.Run("SameStateTwice", func(t *testing.T) {
		s := smallState(t)
		if a, b := smallSnapshot(t), mustEncode(t, testHeader("p"), s); !bytes.Equal(a, b) {
			t.Fatal("two encodings of one state differ")
		}
	})
	t.Run("InsertionOrder", func(t *testing.T) {
		// The same entities put into the maps of a Memory in different
		// orders (so iterated in different orders) encode alike.
		ref := bigState(t, 40, 15)
		want := mustEncode(t, testHeader("big"), ref)
		for round := range 5 {
			rng := rand.New(rand.NewPCG(uint64(round), 7))
			mem := projection.NewMemory()
			mem.PutProject(ref.Project)
			for _, i := range rng.Perm(len(ref.Tasks)) {
				mem.PutTask(ref.Tasks[i])
			}
			for _, i := range rng.Perm(len(ref.Execs)) {
				mem.PutExec(ref.Execs[i])
			}
			for _, i := range rng.Perm(len(ref.Approvals)) {
				mem.PutApproval(ref.Approvals[i])
			}
			if got := mustEncode(t, testHeader("big"), mem.Scope("big")); !bytes.Equal(got, want) {
				t.Fatalf("round %d: a state built in another order encodes differently", round)
			}
		}
	})
	t.Run("DifferentStatesDiffer", func(t *testing.T) {
		s := smallState(t)
		s.Tasks[0].Title = "another title"
		if bytes.Equal(mustEncode(t, testHeader("p"), s), smallSnapshot(t)) {
			t.Fatal("a changed state encodes like the original")
		}
	})
}

func TestEncode_RefusesBadScope(t *testing.T) {
	t.Parallel()
	for name, scope := range map[string]string{
		"TooLong":     strings.Repeat("x", snapshot.MaxScope+1),
		"InvalidUTF8": "p\xff",
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := snapshot.Encode(snapshot.Header{Scope: scope}, smallState(t)); err == nil {
				t.Fatal("Encode accepted the scope")
			}
		})
	}
}

// TestDecode_EveryBitFlip flips every bit of a small snapshot, one at a
// time: every one is detected.
func TestDecode_EveryBitFlip(t *testing.T) {
	t.Parallel()
	orig := smallSnapshot(t)
	b := bytes.Clone(orig)
	for i := range b {
		for bit := range 8 {
			b[i] ^= 1 << bit
			if _, _, err := snapshot.Decode(b); !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("flipping bit %d of byte %d (of %d): Decode = %v, want ErrCorrupt", bit, i, len(b), err)
			}
			b[i] ^= 1 << bit
		}
	}
	if !bytes.Equal(b, orig) {
		t.Fatal("Decode changed its input")
	}
	if _, _, err := snapshot.Decode(b); err != nil {
		t.Fatalf("the unflipped snapshot: %v", err)
	}
}

// TestDecode_EveryTruncation cuts a small snapshot at every length.
func TestDecode_EveryTruncation(t *testing.T) {
	t.Parallel()
	b := smallSnapshot(t)
	for n := range len(b) {
		wantCorrupt(t, fmt.Sprintf("the first %d of %d bytes", n, len(b)), b[:n:n])
	}
}

func TestDecode_Damaged(t *testing.T) {
	t.Parallel()
	orig := smallSnapshot(t)
	scopeLen := int(binary.BigEndian.Uint16(orig[offScopeLen:]))
	offBodyLen := offScope + scopeLen
	bodyLen := binary.BigEndian.Uint64(orig[offBodyLen:])
	for _, tt := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"Empty", func([]byte) []byte { return nil }},
		{"BadMagic", func(b []byte) []byte { copy(b, "FLOWSNAQ"); return reseal(b) }},
		{"OtherMagic", func(b []byte) []byte { copy(b, "BOLTSNAP"); return b }},
		{"NextFormatVersion", func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[offFormat:], snapshot.FormatVersion+1)
			return reseal(b)
		}},
		{"FormatVersionZero", func(b []byte) []byte { binary.BigEndian.PutUint16(b[offFormat:], 0); return reseal(b) }},
		{"ScopeLengthPastTheEnd", func(b []byte) []byte { binary.BigEndian.PutUint16(b[offScopeLen:], 0xffff); return reseal(b) }},
		{"ScopeLengthOneLonger", func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[offScopeLen:], uint16(scopeLen+1))
			return reseal(b)
		}},
		{"BodyLengthOneShort", func(b []byte) []byte { binary.BigEndian.PutUint64(b[offBodyLen:], bodyLen-1); return reseal(b) }},
		{"BodyLengthOneLong", func(b []byte) []byte { binary.BigEndian.PutUint64(b[offBodyLen:], bodyLen+1); return reseal(b) }},
		{"BodyLength2^63", func(b []byte) []byte { binary.BigEndian.PutUint64(b[offBodyLen:], 1<<63); return reseal(b) }},
		{"BodyLengthMax", func(b []byte) []byte { binary.BigEndian.PutUint64(b[offBodyLen:], ^uint64(0)); return reseal(b) }},
		{"TrailingByte", func(b []byte) []byte { return reseal(append(b, 0, 0, 0, 0, 0)[:len(b)+1]) }},
		{"TrailingSnapshot", func(b []byte) []byte { return append(b, orig...) }},
		{"BadCRC", func(b []byte) []byte { b[len(b)-1]++; return b }},
		{"StateHashOfAnotherState", func(b []byte) []byte {
			other := smallState(t)
			other.Tasks[0].Title = "x"
			h := mustStateHash(t, other)
			copy(b[54:86], h[:])
			return reseal(b)
		}},
		{"BodyChangedWithHashAndCRC", func(b []byte) []byte {
			// A resealed body that is not msgpack of a state.
			body := b[offBodyLen+8 : len(b)-4]
			for i := range body {
				body[i] = 0xc1 // never used in msgpack
			}
			h := sha256.Sum256(body)
			copy(b[54:86], h[:])
			return reseal(b)
		}},
		{"ScopeOfAnotherProject", func(b []byte) []byte {
			b[offScope] = 'q' // header says q, body is the state of p
			return reseal(b)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantCorrupt(t, tt.name, tt.damage(bytes.Clone(orig)))
		})
	}
}

// TestDecode_ForgedLengthDoesNotAllocate: a header that claims an
// enormous body is refused before anything is allocated for it.
func TestDecode_ForgedLengthDoesNotAllocate(t *testing.T) {
	b := smallSnapshot(t)
	scopeLen := int(binary.BigEndian.Uint16(b[offScopeLen:]))
	binary.BigEndian.PutUint64(b[offScope+scopeLen:], 1<<63)
	reseal(b)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, _, err := snapshot.Decode(b); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("Decode = %v, want ErrCorrupt", err)
		}
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("100 decodes of a forged length allocated %d bytes", got)
	}
}

// TestDecode_ClaimedLengthDoesNotAllocate: a 12-byte body whose array
// header claims 16M tasks is refused without allocating for them.
func TestDecode_ClaimedLengthDoesNotAllocate(t *testing.T) {
	body := append([]byte{0x81, 0xa5}, "tasks"...)
	body = append(body, 0xdd, 0x01, 0x00, 0x00, 0x00) // array32 of 2^24 elements, none there
	b := envelope("p", body)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := snapshot.Decode(b)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, snapshot.ErrCorrupt) {
		t.Fatalf("Decode = %v, want ErrCorrupt", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("decoding %d bytes allocated %d", len(b), got)
	}
}

// TestDecode_DeepNestingIsRefused: an unknown field nested 100,000 deep
// is refused (8M deep, skipping it overflows the stack: a fatal error no
// recover catches).
func TestDecode_DeepNestingIsRefused(t *testing.T) {
	body := append([]byte{0x81, 0xa1, 'x'}, bytes.Repeat([]byte{0x91}, 100_000)...) // [[[...nil...]]]
	if _, _, err := snapshot.Decode(envelope("p", append(body, 0xc0))); !errors.Is(err, snapshot.ErrCorrupt) {
		t.Fatalf("Decode = %v, want ErrCorrupt", err)
	}
}

// BenchmarkEncode and BenchmarkDecode: a project of 1,000 tasks with
// steps and context and 200 exec records.
func BenchmarkEncode(b *testing.B) {
	s := bigState(b, 1000, 200)
	h := testHeader("big")
	blob := mustEncode(b, h, s)
	b.SetBytes(int64(len(blob)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := snapshot.Encode(h, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	blob := mustEncode(b, testHeader("big"), bigState(b, 1000, 200))
	b.SetBytes(int64(len(blob)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := snapshot.Decode(blob); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	blob := mustEncode(b, testHeader("big"), bigState(b, 1000, 200))
	b.SetBytes(int64(len(blob)))
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := snapshot.Check(blob); err != nil {
			b.Fatal(err)
		}
	}
}

// workState is the state of the project of the shared benchmark workload
// (package internal/workload, what flowbench gen writes), run through the
// engine until it has about tasks tasks (the workload makes about 28
// events a task). 2,000 tasks make a body of a few MB.
func workState(tb testing.TB, tasks int) *projection.Scope {
	tb.Helper()
	e, err := flow.Open(filepath.Join(tb.TempDir(), "work.db"), flow.Options{Create: true, NoSync: true, Actor: "bench"})
	if err != nil {
		tb.Fatal(err)
	}
	defer e.Close()
	g := workload.New(workload.Options{Projects: 1, Seed: 1})
	if err := flowrun.Write(context.Background(), e, g, uint64(28*tasks), nil); err != nil {
		tb.Fatal(err)
	}
	var head uint64
	if err := e.Read(func(r *flow.Reader) error { head = r.Head(); return nil }); err != nil {
		tb.Fatal(err)
	}
	ps, err := e.Scopes(workload.ProjectName(0), flow.Point{Seq: head})
	if err != nil {
		tb.Fatal(err)
	}
	return ps[0].Scope
}

// BenchmarkEncodeWork and BenchmarkDecodeWork: workState(2000), a body
// of a few MB.
func BenchmarkEncodeWork(b *testing.B) {
	s := workState(b, 2000)
	h := testHeader(workload.ProjectName(0))
	b.SetBytes(int64(len(mustEncode(b, h, s))))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := snapshot.Encode(h, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeWork(b *testing.B) {
	blob := mustEncode(b, testHeader(workload.ProjectName(0)), workState(b, 2000))
	b.SetBytes(int64(len(blob)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := snapshot.Decode(blob); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBody_MatchesReflection: the body Encode writes is what msgpack's
// reflection encoder wrote for the same state (the bytes of the
// snapshots already stored, and the state hashes they carry), and Decode
// reads it into the state reflection reads.
func TestBody_MatchesReflection(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]*projection.Scope{
		"Small": smallState(t), "Empty": projection.NewMemory().Scope("nobody"),
		"Big": bigState(t, 40, 15), "Work": workState(t, 30),
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := msgpack.NewEncoder(&buf)
			enc.SetSortMapKeys(true)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			if got := mustBody(t, s); !bytes.Equal(got, buf.Bytes()) {
				t.Fatalf("body of %d bytes differs from reflection's %d", len(got), buf.Len())
			}
			var want projection.Scope
			if err := msgpack.Unmarshal(buf.Bytes(), &want); err != nil {
				t.Fatal(err)
			}
			scope := "nobody"
			if s.Project != nil {
				scope = s.Project.Name
			}
			_, got, err := snapshot.Decode(envelope(scope, buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("Decode = %+v\nreflection %+v", got, &want)
			}
		})
	}
}
