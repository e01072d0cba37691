package eventlog

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// genPeekRecord draws a record whose fields take every msgpack form the
// envelope writes: integers of each size (and negative times), strings
// from empty to longer than a str8 holds, ids nil or set.
func genPeekRecord(t *rapid.T) *Record {
	num := func(label string) uint64 {
		return rapid.SampledFrom([]uint64{0, 1, 127, 128, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, 1<<64 - 1}).Draw(t, label)
	}
	str := func(label string) string {
		n := rapid.SampledFrom([]int{0, 1, 31, 32, 255, 256, 300}).Draw(t, label+"Len")
		return strings.Repeat(rapid.StringMatching(`[a-z/.-]`).Draw(t, label), n)
	}
	r := &Record{
		Seq:     max(num("seq"), 1),
		Stream:  str("stream"),
		Version: num("version"),
	}
	r.Type, r.Actor, r.Session, r.Project = str("type"), str("actor"), str("session"), str("project")
	r.Schema = uint32(num("schema"))
	r.Time = time.Unix(0, rapid.Int64().Draw(t, "time")).UTC()
	r.ID = testID(rapid.Uint64Min(1).Draw(t, "id"))
	if rapid.Bool().Draw(t, "correlated") {
		r.Correlation, r.Causation = testID(7), testID(8)
	}
	r.Data = rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "data")
	return r
}

// TestPeekProject: the project the walk of a ReplaySplit reads by the
// fields' headers alone is the one the decode finds, in both formats;
// on damaged bytes (cut short, a byte changed) it never panics, and
// where the decode still accepts them it still agrees.
func TestPeekProject(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genPeekRecord(t)
		for _, f := range []format{formatV1, formatV2} {
			c := *r
			b := f.encode(&c)
			checkPeek(t, f, r.Seq, b, r.Prev)
			if got, want := f.peekProject(b), r.Project; got == nil || string(got) != want {
				t.Fatalf("format %d: peekProject = %q, want %q", f, got, want)
			}
			damaged := bytes.Clone(b[:rapid.IntRange(0, len(b)).Draw(t, "cut")])
			if len(damaged) > 0 {
				damaged[rapid.IntRange(0, len(damaged)-1).Draw(t, "at")] ^= rapid.Byte().Draw(t, "flip")
			}
			checkPeek(t, f, r.Seq, damaged, r.Prev)
		}
	})
}

// checkPeek: peekProject(b) does not panic, and equals the project of
// b's decode when b decodes.
func checkPeek(t interface{ Fatalf(string, ...any) }, f format, seq uint64, b []byte, prev Hash) {
	got := f.peekProject(b)
	var r Record
	if err := f.decodeInto(&r, seq, b, prev, true); err == nil && (got == nil || string(got) != r.Project) {
		t.Fatalf("format %d: peekProject = %q, the decode finds project %q", f, got, r.Project)
	}
}

// BenchmarkPeekProject: the walk of a ReplaySplit reads every record's
// project; a record as the generated workload writes them.
func BenchmarkPeekProject(b *testing.B) {
	r := &Record{Seq: 123456, Stream: "task/proj003/T-1234", Version: 17}
	r.Type, r.Actor, r.Session, r.Project = "step.status_changed", "agent-3", "session-0042", "proj003"
	r.Time, r.ID, r.Data = time.Unix(1_760_000_000, 123), testID(99), make([]byte, 46)
	v := formatV2.encode(r)
	for b.Loop() {
		if formatV2.peekProject(v) == nil {
			b.Fatal("no project")
		}
	}
}
