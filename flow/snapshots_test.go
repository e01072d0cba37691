package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// snapsEngine is an engine that snapshots every few events, with the
// warnings it gave.
type snapsEngine struct {
	*Engine
	mu       sync.Mutex
	warnings []string
}

func (s *snapsEngine) warned() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...)
}

// snapsOpen opens a new engine under t.TempDir() that snapshots a
// project every `every` of its events and, on cleanup, verifies the log
// and closes it (as mustOpen does).
func snapsOpen(t *testing.T, every int) *snapsEngine {
	t.Helper()
	s := &snapsEngine{}
	path := filepath.Join(t.TempDir(), DefaultDir, DefaultFile)
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: fixedClock(), SnapshotEvery: every,
		Warn: func(msg string) { s.mu.Lock(); s.warnings = append(s.warnings, msg); s.mu.Unlock() }})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	s.Engine = e
	t.Cleanup(func() {
		if _, err := e.Verify(); err != nil {
			t.Errorf("Verify on cleanup: %v", err)
		}
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// snapsHistory writes a history of two projects, p and q, interleaved:
// tasks, moves, context, steps, an approval, exec records, a checkpoint
// and a rollback; about 50 events.
func snapsHistory(t *testing.T, e *Engine) {
	t.Helper()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"p", "q"} {
		must(e.CreateProject(NewProject{Name: p}))
	}
	for i := range 6 {
		for _, p := range []string{"p", "q"} {
			task, err := e.AddTask(NewTask{Project: p, Title: "task", Tags: []string{"t"}})
			must(task, err)
			must(e.MergeContext(ContextPatch{Project: p, ID: task.ID, Patch: `{"round":` + string(rune('0'+i)) + `}`}))
			if i%2 == 0 {
				must(e.MoveTask(Move{Project: p, ID: task.ID, To: "doing"}))
				st, err := e.AddStep(NewStep{Project: p, Task: task.ID, Title: "step"})
				must(st, err)
				must(e.MoveStep(StepMove{Project: p, ID: st.ID, To: projection.StepInProgress}))
			}
		}
		if i == 2 {
			must(e.CreateCheckpoint(NewCheckpoint{Project: "p", Label: "middle"}))
		}
	}
	a, err := e.RequestApproval(NewApproval{Project: "p", Task: "T-1", Message: "ok?"})
	must(a, err)
	must(e.As("reviewer", "r1").DecideApproval(Decision{Project: "p", ID: a.ID, Grant: true}))
	must(e.RecordExec(NewExec{Project: "p", Task: "T-1", Command: "make", Success: true}))
	must(e.RecordExec(NewExec{Project: "q", Task: "T-2", Command: "make test", ExitCode: 1}))
	must(e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}, Reason: "again"}))
	must(e.AddTask(NewTask{Project: "p", Title: "after the rollback"}))
}

// snapsStored returns the stored snapshot keys and values.
func snapsStored(t *testing.T, e *Engine) (keys, values [][]byte) {
	t.Helper()
	err := e.view(func(tx store.Tx) error {
		return tx.Scan(snapstore.Bucket, nil, func(k, v []byte) error {
			keys, values = append(keys, k), append(values, v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, values
}

// snapsPut writes value under key in the snapshots bucket, as damage
// from outside would.
func snapsPut(t *testing.T, e *Engine, key, value []byte) {
	t.Helper()
	if err := e.log.Update(func(tx store.Tx) error { return tx.Put(snapstore.Bucket, key, value) }); err != nil {
		t.Fatal(err)
	}
}

func snapsHead(t *testing.T, e *Engine) uint64 {
	t.Helper()
	head, _, err := storeHead(e.log)
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// snapsReference copies e's file and drops every snapshot from the copy:
// its reads at any point are replays of the log alone.
func snapsReference(t *testing.T, e *Engine) *Engine {
	t.Helper()
	b, err := os.ReadFile(e.Path())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "reference.db")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ref, err := Open(path, Options{NoSync: true, Actor: "tester", SnapshotEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	if err := ref.log.Update(func(tx store.Tx) error { return tx.DeleteBucket(snapstore.Bucket) }); err != nil {
		t.Fatal(err)
	}
	if keys, _ := snapsStored(t, ref); len(keys) != 0 {
		t.Fatalf("the reference still has %d snapshots", len(keys))
	}
	return ref
}

// snapsReads is what the tests compare: every list read of a project at
// a point, as JSON, and the error of each.
func snapsReads(e *Engine, project string, p Point) string {
	v := e.At(project, p)
	var out strings.Builder
	add := func(name string, val any, err error) {
		b, _ := json.Marshal(val)
		out.WriteString(name + ": " + string(b))
		if err != nil {
			out.WriteString(" error: " + string(ErrorCode(err)))
		}
		out.WriteString("\n")
	}
	pr, err := v.Project(project)
	add("project", pr, err)
	tasks, err := v.Tasks(project, TaskFilter{})
	add("tasks", tasks, err)
	plans, err := v.Plans(project)
	add("plans", plans, err)
	approvals, err := v.Approvals(project, ApprovalFilter{})
	add("approvals", approvals, err)
	execs, err := v.Execs(project, ExecFilter{})
	add("execs", execs, err)
	cps, err := v.Checkpoints(project)
	add("checkpoints", cps, err)
	var state []byte
	err = v.read(func(src source) error {
		s, err := snapstore.ScopeOf(src, project)
		if err == nil {
			state, err = snapshot.EncodeState(s)
		}
		return err
	})
	add("state", state, err)
	return out.String()
}

// snapsSameReads checks that every read of e at every seq equals the
// reference's.
func snapsSameReads(t *testing.T, e, ref *Engine) {
	t.Helper()
	head := snapsHead(t, e)
	for seq := uint64(0); seq <= head; seq++ {
		for _, project := range []string{"p", "q"} {
			if got, want := snapsReads(e, project, Point{Seq: seq}), snapsReads(ref, project, Point{Seq: seq}); got != want {
				t.Fatalf("reads of %s at seq %d differ from a replay of the log:\ngot  %s\nwant %s", project, seq, got, want)
			}
		}
	}
}

func TestSnapshots_StoredAutomaticallyAndAtCheckpoints(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 5)
	snapsHistory(t, e.Engine)
	all, err := e.Snapshots("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Snapshots("p")
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Checkpoint("p", "C-1")
	if err != nil {
		t.Fatal(err)
	}
	atCheckpoint := false
	projects := map[string]int{}
	for i, in := range all {
		if !in.OK || in.Problem != "" || in.Bytes == 0 || len(in.StateHash) != 64 || len(in.ChainHash) != 64 || in.ProjectionVersion != projection.Version {
			t.Errorf("snapshot %d = %+v: want a healthy, described snapshot", i, in)
		}
		if i > 0 && (all[i-1].Project > in.Project || all[i-1].Project == in.Project && all[i-1].Seq >= in.Seq) {
			t.Errorf("snapshots not in project, seq order: %+v then %+v", all[i-1], in)
		}
		atCheckpoint = atCheckpoint || in.Project == "p" && in.Seq == c.AtSeq
		projects[in.Project]++
	}
	if projects["p"] < 3 || projects["q"] < 3 || len(p) != projects["p"] {
		t.Fatalf("snapshots per project = %v (%d listed for p): want several of each", projects, len(p))
	}
	if !atCheckpoint {
		t.Errorf("no snapshot at checkpoint C-1 (seq %d): %+v", c.AtSeq, p)
	}
	if _, err := e.Snapshots("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Snapshots of an unknown project = %v, want ErrNotFound", err)
	}
}

func TestSnapshots_NoneWhenDisabled(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, -1)
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	got, err := e.Snapshots("")
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Snapshots = %#v, %v; want an empty list", got, err)
	}
	if infos, err := e.VerifySnapshots(""); err != nil || len(infos) != 0 {
		t.Fatalf("VerifySnapshots = %+v, %v; want nothing to verify", infos, err)
	}
}

// TestSnapshots_CorruptStoredSnapshotLeavesReadsCorrect damages stored
// snapshots in every way: each time, every read at every seq equals a
// replay of the log, a warning names the bad snapshot, and Snapshots and
// VerifySnapshots report it.
func TestSnapshots_CorruptStoredSnapshotLeavesReadsCorrect(t *testing.T) {
	t.Parallel()
	base := snapsOpen(t, 5)
	snapsHistory(t, base.Engine)
	keys, values := snapsStored(t, base.Engine)
	ref := snapsReference(t, base.Engine)
	snapsSameReads(t, base.Engine, ref) // the healthy file first
	if w := base.warned(); len(w) != 0 {
		t.Fatalf("warnings on a healthy file: %q", w)
	}
	mid := len(keys) / 2
	flip := func(v []byte) []byte { v = bytes.Clone(v); v[len(v)/2] ^= 0x04; return v }
	for _, tt := range []struct {
		name   string
		damage func(i int, v []byte) []byte // nil: leave it alone
	}{
		{"OneGarbage", func(i int, v []byte) []byte {
			if i != mid {
				return nil
			}
			return []byte("not a snapshot at all")
		}},
		{"OneBitFlipped", func(i int, v []byte) []byte {
			if i != mid {
				return nil
			}
			return flip(v)
		}},
		{"OneTruncated", func(i int, v []byte) []byte {
			if i != mid {
				return nil
			}
			return v[:len(v)-7]
		}},
		{"OneEmpty", func(i int, v []byte) []byte {
			if i != mid {
				return nil
			}
			return []byte{}
		}},
		{"OneMovedToAnotherKey", func(i int, v []byte) []byte {
			if i != mid {
				return nil
			}
			return values[mid-1] // a good snapshot, of another seq
		}},
		{"AllGarbage", func(int, []byte) []byte { return bytes.Repeat([]byte{0xff}, 200) }},
		{"AllBitFlipped", func(_ int, v []byte) []byte { return flip(v) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := snapsOpen(t, 5)
			snapsHistory(t, e.Engine)
			ekeys, evalues := snapsStored(t, e.Engine)
			if len(ekeys) != len(keys) {
				t.Fatalf("%d snapshots, the first file has %d", len(ekeys), len(keys))
			}
			var bad []string
			for i, k := range ekeys {
				if v := tt.damage(i, evalues[i]); v != nil {
					snapsPut(t, e.Engine, k, v)
					scope, seq, _ := snapstore.ParseKey(k)
					bad = append(bad, snapsName(scope, seq))
				}
			}
			ref := snapsReference(t, e.Engine)
			snapsSameReads(t, e.Engine, ref)
			warned := strings.Join(e.warned(), "\n")
			for _, name := range bad {
				if !strings.Contains(warned, name) {
					t.Errorf("no warning names the bad snapshot %s; warnings:\n%s", name, warned)
				}
			}
			listed, err := e.Snapshots("")
			if err != nil {
				t.Fatalf("Snapshots: %v", err)
			}
			verified, err := e.VerifySnapshots("")
			if !errors.Is(err, snapshot.ErrCorrupt) || ErrorCode(err) != CodeCorrupt {
				t.Fatalf("VerifySnapshots = %v, want a snapshot corruption", err)
			}
			if !strings.Contains(err.Error(), bad[0]) {
				t.Errorf("VerifySnapshots error %q does not name the first bad snapshot %s", err, bad[0])
			}
			for _, infos := range [][]SnapshotInfo{listed, verified} {
				var gotBad []string
				for _, in := range infos {
					if !in.OK {
						gotBad = append(gotBad, snapsName(in.Project, in.Seq))
						if in.Problem == "" {
							t.Errorf("%+v: bad with no problem given", in)
						}
					}
				}
				if !reflect.DeepEqual(gotBad, bad) {
					t.Errorf("reported bad %v, want %v", gotBad, bad)
				}
			}
		})
	}
}

func snapsName(scope string, seq uint64) string {
	return scope + "@" + strconv.FormatUint(seq, 10)
}

// snapsMalformedKey is a key of p's snapshots with one byte where the
// eight of a seq go.
var snapsMalformedKey = append(snapstore.Prefix("p"), 0x00)

// TestSnapshots_MalformedKeyIsReported: an entry of the snapshots bucket
// whose key is not scope+seq is listed and verified as bad.
func TestSnapshots_MalformedKeyIsReported(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 5)
	snapsHistory(t, e.Engine)
	snapsPut(t, e.Engine, snapsMalformedKey, []byte("junk"))
	infos, err := e.VerifySnapshots("")
	if !errors.Is(err, snapshot.ErrCorrupt) || len(infos) == 0 || infos[0].OK || infos[0].Problem == "" {
		t.Fatalf("VerifySnapshots = %+v, %v; want the malformed entry reported first", infos[:1], err)
	}
	listed, err := e.Snapshots("p")
	if err != nil || listed[0].OK {
		t.Fatalf("Snapshots = %+v, %v; want the malformed entry listed as bad", listed[:1], err)
	}
}

// TestSnapshots_MalformedKeyLeavesReadsCorrect: such an entry never
// breaks a read.
func TestSnapshots_MalformedKeyLeavesReadsCorrect(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 5)
	snapsHistory(t, e.Engine)
	snapsPut(t, e.Engine, snapsMalformedKey, []byte("junk"))
	snapsSameReads(t, e.Engine, snapsReference(t, e.Engine))
}

func TestVerifySnapshots(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 5)
	snapsHistory(t, e.Engine)
	t.Run("OK", func(t *testing.T) {
		infos, err := e.VerifySnapshots("")
		if err != nil || len(infos) < 6 {
			t.Fatalf("VerifySnapshots = %d snapshots, %v", len(infos), err)
		}
		listed, _ := e.Snapshots("")
		if !reflect.DeepEqual(infos, listed) {
			t.Errorf("VerifySnapshots describes the snapshots otherwise than Snapshots:\n%+v\n%+v", infos, listed)
		}
		q, err := e.VerifySnapshots("q")
		if err != nil || len(q) == 0 {
			t.Fatalf("VerifySnapshots(q) = %+v, %v", q, err)
		}
		for _, in := range q {
			if in.Project != "q" {
				t.Errorf("VerifySnapshots(q) lists %+v", in)
			}
		}
	})
	t.Run("UnknownProject", func(t *testing.T) {
		if _, err := e.VerifySnapshots("nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("VerifySnapshots(nope) = %v, want ErrNotFound", err)
		}
	})
}

// TestVerifySnapshots_CatchesAWellFormedLie: a snapshot whose checksums,
// header and chain hash are all right but whose state is not the log's
// passes every check a read makes before decoding; verify replays the
// log and catches it. A lie in a full snapshot also fails the deltas
// made on it (their base is not the state they were made on); a lie in a
// delta that still names the true state hash fails its resolution.
func TestVerifySnapshots_CatchesAWellFormedLie(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"full", "delta"} {
		t.Run(kind, func(t *testing.T) {
			e := snapsOpen(t, 5)
			snapsHistory(t, e.Engine)
			keys, values := snapsStored(t, e.Engine)
			i := len(keys) - 1
			for ; i >= 0 && snapshot.IsDelta(values[i]) != (kind == "delta"); i-- {
			}
			if i < 0 {
				t.Fatalf("no %s snapshot stored", kind)
			}
			lie := lieIn(t, values[i])
			snapsPut(t, e.Engine, keys[i], lie)
			scope, seq, _ := snapstore.ParseKey(keys[i])
			listed, err := e.Snapshots(scope)
			if err != nil {
				t.Fatal(err)
			}
			for _, in := range listed {
				if in.Seq == seq && !in.OK {
					t.Fatalf("Snapshots = %+v: the lie does not pass the checks a read makes", in)
				}
			}
			infos, err := e.VerifySnapshots(scope)
			if !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("VerifySnapshots = %v, want a snapshot corruption", err)
			}
			for _, in := range infos {
				if in.Seq == seq && in.OK {
					t.Fatalf("the lie = %+v, want it reported", in)
				}
				if in.Seq < seq && !in.OK {
					t.Errorf("a good snapshot reported bad: %+v", in)
				}
			}
			if got := e.warned(); len(got) != 0 {
				t.Errorf("warnings before any read: %q", got)
			}
		})
	}
}

// lieIn returns stored snapshot v with the title of a task it holds
// changed, resealed with its header: a full snapshot with the new state's
// hash, a delta with the old one.
func lieIn(t *testing.T, v []byte) []byte {
	t.Helper()
	if !snapshot.IsDelta(v) {
		h, state, err := snapshot.Decode(v)
		if err != nil || len(state.Tasks) == 0 {
			t.Fatalf("Decode = %v, %v", state, err)
		}
		state.Tasks[0].Title = "a title the log never had"
		lie, _, err := snapshot.Encode(h, state)
		if err != nil {
			t.Fatal(err)
		}
		return lie
	}
	h, d, err := snapshot.DecodeDelta(v)
	if err != nil || len(d.Changed.Tasks) == 0 {
		t.Fatalf("DecodeDelta = %+v, %v", d, err)
	}
	d.Changed.Tasks[0].Title = "a title the log never had"
	lie, _, err := snapshot.EncodeDelta(h, d)
	if err != nil {
		t.Fatal(err)
	}
	return lie
}

func TestExportSnapshot(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 5)
	snapsHistory(t, e.Engine)
	head := snapsHead(t, e.Engine)
	export := func(t *testing.T, project string, p Point) ([]byte, SnapshotInfo) {
		t.Helper()
		var buf bytes.Buffer
		info, err := e.ExportSnapshot(&buf, project, p)
		if err != nil {
			t.Fatalf("ExportSnapshot(%s, %v): %v", project, p, err)
		}
		if info.Bytes != buf.Len() || !info.OK {
			t.Fatalf("info %+v for %d bytes", info, buf.Len())
		}
		return buf.Bytes(), info
	}
	t.Run("Head", func(t *testing.T) {
		b, info := export(t, "p", Point{Seq: head})
		h, state, err := snapshot.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		r := snapsRecord(t, e.Engine, head)
		if h.Seq != head || h.Scope != "p" || h.ChainHash != r.Hash || h.ProjectionVersion != projection.Version || info.Seq != head {
			t.Fatalf("header = %+v, want p at the head %d with its hash", h, head)
		}
		want, _ := snapshot.EncodeState(scopeNow(t, e.Engine))
		if got, _ := snapshot.EncodeState(state); !bytes.Equal(got, want) {
			t.Fatal("the exported state is not the current state")
		}
	})
	t.Run("Deterministic", func(t *testing.T) {
		a, _ := export(t, "q", Point{Seq: head - 3})
		b, _ := export(t, "q", Point{Seq: head - 3})
		if !bytes.Equal(a, b) {
			t.Fatal("two exports of one point differ")
		}
	})
	t.Run("EqualsStoredSnapshot", func(t *testing.T) {
		// The state a read folds and the one the engine stores as it
		// writes encode alike.
		// A delta names the state hash of the state it resolves to.
		keys, values := snapsStored(t, e.Engine)
		for i, k := range keys {
			scope, seq, _ := snapstore.ParseKey(k)
			b, info := export(t, scope, Point{Seq: seq})
			if snapshot.IsDelta(values[i]) {
				h, _, err := snapshot.DecodeDelta(values[i])
				if err != nil || !exportHolds(b, values[i]) || info.Kind != "full" {
					t.Errorf("the export of %s@%d (%+v, state hash %x) is not the state its stored delta names (%v)", scope, seq, info, h.StateHash, err)
				}
			} else if !exportHolds(b, values[i]) {
				t.Errorf("the export of %s@%d differs from the stored snapshot", scope, seq)
			}
		}
	})
	t.Run("AtCheckpoint", func(t *testing.T) {
		c, _ := e.Checkpoint("p", "C-1")
		if _, info := export(t, "p", Point{Checkpoint: "C-1"}); info.Seq != c.AtSeq {
			t.Fatalf("export at C-1 is at seq %d, want %d", info.Seq, c.AtSeq)
		}
	})
	t.Run("AtTime", func(t *testing.T) {
		r := snapsRecord(t, e.Engine, 10)
		if _, info := export(t, "p", Point{Time: r.Time}); info.Seq != 10 {
			t.Fatalf("export at the time of seq 10 is at seq %d", info.Seq)
		}
	})
	for _, tt := range []struct {
		name    string
		project string
		p       Point
		want    error
	}{
		{"UnknownProject", "nope", Point{Seq: 1}, ErrNotFound},
		{"PastTheHead", "p", Point{Seq: head + 1}, ErrInvalid},
		{"BeforeTheProject", "q", Point{Seq: 1}, ErrNotFound}, // seq 1 created p
		{"SeqZero", "p", Point{Seq: 0}, ErrNotFound},
		{"UnknownCheckpoint", "p", Point{Checkpoint: "C-9"}, ErrNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := e.ExportSnapshot(&buf, tt.project, tt.p); !errors.Is(err, tt.want) {
				t.Fatalf("ExportSnapshot = %v, want %v", err, tt.want)
			}
			if buf.Len() != 0 {
				t.Fatalf("a refused export wrote %d bytes", buf.Len())
			}
		})
	}
	t.Run("WriterFails", func(t *testing.T) {
		if _, err := e.ExportSnapshot(failingWriter{}, "p", Point{Seq: head}); !errors.Is(err, io.ErrShortWrite) {
			t.Fatalf("ExportSnapshot to a failing writer = %v", err)
		}
	})
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }

func snapsRecord(t *testing.T, e *Engine, seq uint64) *eventlog.Record {
	t.Helper()
	var r *eventlog.Record
	err := e.view(func(tx store.Tx) error {
		var err error
		r, err = tx.Record(seq)
		return err
	})
	if err != nil || r == nil {
		t.Fatalf("record %d: %v, %v", seq, r, err)
	}
	return r
}

func fileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestImportSnapshot(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 5)
	snapsHistory(t, e.Engine)
	head := snapsHead(t, e.Engine)
	exported := func(t *testing.T, project string, seq uint64) []byte {
		t.Helper()
		var buf bytes.Buffer
		if _, err := e.ExportSnapshot(&buf, project, Point{Seq: seq}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	// A seq with no stored snapshot of p.
	stored := map[uint64]bool{}
	for _, in := range mustSnapshots(t, e.Engine, "p") {
		stored[in.Seq] = true
	}
	seq := head - 1
	for stored[seq] {
		seq--
	}
	t.Run("Stores", func(t *testing.T) {
		b := exported(t, "p", seq)
		info, err := e.ImportSnapshot(b)
		if err != nil || info.Project != "p" || info.Seq != seq || !info.OK || info.Bytes != len(b) {
			t.Fatalf("ImportSnapshot = %+v, %v", info, err)
		}
		found := false
		for _, in := range mustSnapshots(t, e.Engine, "p") {
			// Stored as this binary stores a full snapshot (summed: format
			// 5), so its state hash is not the export's (format 1).
			found = found || in.Seq == seq && in.OK && in.Kind == "full"
		}
		if !found {
			t.Fatalf("the imported snapshot at seq %d is not listed", seq)
		}
		if _, err := e.VerifySnapshots("p"); err != nil {
			t.Fatalf("VerifySnapshots after the import: %v", err)
		}
		// Reads use it: a read at seq now starts from it.
		snapsSameReads(t, e.Engine, snapsReference(t, e.Engine))
	})
	t.Run("Idempotent", func(t *testing.T) {
		b := exported(t, "p", seq)
		if _, err := e.ImportSnapshot(b); err != nil {
			t.Fatal(err)
		}
		before := fileBytes(t, e.Path())
		for range 2 {
			if _, err := e.ImportSnapshot(b); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(fileBytes(t, e.Path()), before) {
			t.Fatal("importing a stored snapshot again changed the file")
		}
	})
	t.Run("RepairsADamagedSnapshot", func(t *testing.T) {
		keys, values := snapsStored(t, e.Engine)
		scope, at, _ := snapstore.ParseKey(keys[0])
		snapsPut(t, e.Engine, keys[0], []byte("junk"))
		if _, err := e.VerifySnapshots(scope); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("VerifySnapshots = %v after the damage", err)
		}
		b := exported(t, scope, at)
		if !exportHolds(b, values[0]) {
			t.Fatal("the export is not the snapshot that was damaged")
		}
		if _, err := e.ImportSnapshot(b); err != nil {
			t.Fatal(err)
		}
		if _, err := e.VerifySnapshots(""); err != nil {
			t.Fatalf("VerifySnapshots after the repair: %v", err)
		}
	})

	good := exported(t, "q", head-2)
	h, state, err := snapshot.Decode(good)
	if err != nil {
		t.Fatal(err)
	}
	reencode := func(t *testing.T, h snapshot.Header, s *projection.Scope) []byte {
		t.Helper()
		b, _, err := snapshot.Encode(h, s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	other := snapsOpen(t, -1)
	snapsHistory(t, other.Engine)
	var fromOther bytes.Buffer
	if _, err := other.ExportSnapshot(&fromOther, "q", Point{Seq: head - 2}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		blob func(t *testing.T) []byte
	}{
		{"Garbage", func(*testing.T) []byte { return []byte("hello") }},
		{"Empty", func(*testing.T) []byte { return nil }},
		{"BitFlipped", func(*testing.T) []byte { b := bytes.Clone(good); b[len(b)/3] ^= 1; return b }},
		{"Truncated", func(*testing.T) []byte { return good[:len(good)-1] }},
		{"OtherFoldVersion", func(t *testing.T) []byte {
			h := h
			h.ProjectionVersion++
			return reencode(t, h, state)
		}},
		{"OtherLog", func(*testing.T) []byte { return fromOther.Bytes() }}, // same history, another file: other chain hashes
		{"WrongChainHash", func(t *testing.T) []byte {
			h := h
			h.ChainHash[0] ^= 1
			return reencode(t, h, state)
		}},
		{"PastTheHead", func(t *testing.T) []byte {
			h := h
			h.Seq = head + 1
			return reencode(t, h, state)
		}},
		{"StateNotTheLogs", func(t *testing.T) []byte {
			_, s, _ := snapshot.Decode(good)
			s.Tasks[0].Status = projection.StatusDone
			return reencode(t, h, s)
		}},
		{"StateOfAnotherSeq", func(t *testing.T) []byte {
			_, s, _ := snapshot.Decode(exported(t, "q", head-8))
			return reencode(t, h, s)
		}},
		{"NoProject", func(t *testing.T) []byte { return reencode(t, h, projection.NewMemory().Scope("q")) }},
		{"SeqZero", func(t *testing.T) []byte {
			return reencode(t, snapshot.Header{ProjectionVersion: projection.Version, Scope: "q"}, projection.NewMemory().Scope("q"))
		}},
		{"UnknownProject", func(t *testing.T) []byte {
			h := h
			h.Scope = "zz"
			s := *state
			pr := *s.Project
			pr.Name, s.Project = "zz", &pr
			return reencode(t, h, &s)
		}},
	} {
		t.Run("Refuses"+tt.name, func(t *testing.T) {
			blob := tt.blob(t)
			keysBefore, _ := snapsStored(t, e.Engine)
			before := fileBytes(t, e.Path())
			_, err := e.ImportSnapshot(blob)
			if !errors.Is(err, snapshot.ErrCorrupt) || ErrorCode(err) != CodeCorrupt {
				t.Fatalf("ImportSnapshot = %v, want a snapshot corruption", err)
			}
			if !bytes.Equal(fileBytes(t, e.Path()), before) {
				t.Fatal("a refused import changed the file")
			}
			if keysAfter, _ := snapsStored(t, e.Engine); len(keysAfter) != len(keysBefore) {
				t.Fatal("a refused import stored a snapshot")
			}
		})
	}
	t.Run("RefusesThroughAView", func(t *testing.T) {
		if _, err := e.At("q", Point{Seq: 3}).ImportSnapshot(good); !errors.Is(err, ErrInvalid) {
			t.Fatalf("ImportSnapshot through a view = %v, want ErrInvalid", err)
		}
	})
	t.Run("RefusesReadOnly", func(t *testing.T) {
		ro := snapsOpen(t, 5)
		snapsHistory(t, ro.Engine)
		path := ro.Path()
		var buf bytes.Buffer
		if _, err := ro.ExportSnapshot(&buf, "p", Point{Seq: 4}); err != nil {
			t.Fatal(err)
		}
		ro.Close()
		r, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := r.ImportSnapshot(buf.Bytes()); !errors.Is(err, eventlog.ErrReadOnly) {
			t.Fatalf("ImportSnapshot on a read-only engine = %v, want ErrReadOnly", err)
		}
	})
}

func mustSnapshots(t *testing.T, e *Engine, project string) []SnapshotInfo {
	t.Helper()
	infos, err := e.Snapshots(project)
	if err != nil {
		t.Fatal(err)
	}
	return infos
}

// exportHolds reports whether export (a full snapshot, as ExportSnapshot
// writes it) holds the state that snapshot stored (full or a delta, of
// any format) names: the state hash of the stored one's format, and for
// a full one its body too.
func exportHolds(export, stored []byte) bool {
	he, body, errE := snapshot.Check(export)
	hs, err := snapshot.Frame(stored)
	_, st, derr := snapshot.Decode(export)
	if errE != nil || err != nil || derr != nil || hs.HashState(st) != hs.StateHash || he.Seq != hs.Seq || he.Scope != hs.Scope || he.ChainHash != hs.ChainHash {
		return false
	}
	if hs.IsDelta() {
		return true
	}
	_, sb, err := snapshot.Check(stored)
	return err == nil && bytes.Equal(body, sb)
}
