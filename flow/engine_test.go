package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/store"
)

func TestEngine_CreateProject(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := mustOpen(t)
		p, err := e.CreateProject(NewProject{Name: "website", Description: "the new site"})
		if err != nil || p.Seq != 1 || p.Version != 1 || p.Name != "website" || p.CreatedBy != "tester" {
			t.Fatalf("CreateProject = %+v, %v", p, err)
		}
		evs := collect(t, e, Filter{})
		if len(evs) != 1 {
			t.Fatalf("got %d events, want 1", len(evs))
		}
		ev := evs[0]
		if ev.Stream != "project/website" || ev.Type != "project.created" || ev.Actor != "tester" || ev.Session != "s1" || ev.Project != "website" {
			t.Errorf("event = %+v", ev)
		}
		if got, want := string(ev.Data), `{"description":"the new site","name":"website"}`; got != want {
			t.Errorf("data = %s, want %s", got, want)
		}
		if ok, err := e.ProjectExists("website"); !ok || err != nil {
			t.Errorf("ProjectExists = %v, %v", ok, err)
		}
	})
	t.Run("ErrExists", func(t *testing.T) {
		e := mustOpen(t)
		if _, err := e.CreateProject(NewProject{Name: "a"}); err != nil {
			t.Fatal(err)
		}
		_, err := e.CreateProject(NewProject{Name: "a"})
		if !errors.Is(err, ErrExists) || ErrorCode(err) != CodeConflict {
			t.Fatalf("second CreateProject: %v (code %s), want ErrExists/conflict", err, ErrorCode(err))
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := mustOpen(t)
		for _, name := range []string{"", "-x", "a b", "ä", strings.Repeat("x", 65), "a/b"} {
			if _, err := e.CreateProject(NewProject{Name: name}); !errors.Is(err, ErrInvalid) {
				t.Errorf("CreateProject(%q) = %v, want ErrInvalid", name, err)
			}
		}
		if evs := collect(t, e, Filter{}); len(evs) != 0 {
			t.Errorf("invalid names appended %d events", len(evs))
		}
	})
}

func TestLocate(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := Locate(sub); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Locate = %v, want ErrNotFound", err)
		}
	})
	t.Run("FoundInParent", func(t *testing.T) {
		want := filepath.Join(root, DefaultDir, DefaultFile)
		e, err := Open(want, Options{Create: true, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		got, err := Locate(sub)
		if err != nil || got != want {
			t.Fatalf("Locate = %q, %v; want %q", got, err, want)
		}
	})
}

// fill appends n project.created events, one project each.
func fill(tb testing.TB, e *Engine, n int) {
	tb.Helper()
	for i := range n {
		if _, err := e.CreateProject(NewProject{Name: fmt.Sprintf("p%d", i)}); err != nil {
			tb.Fatal(err)
		}
	}
}

func TestEngine_Events(t *testing.T) {
	e := mustOpen(t)
	fill(t, e, 10)
	all := collect(t, e, Filter{})
	tests := []struct {
		name string
		f    Filter
		want []uint64
	}{
		{"All", Filter{}, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"SinceUntilSeq", Filter{SinceSeq: 3, UntilSeq: 5}, []uint64{3, 4, 5}},
		{"LimitKeepsNewest", Filter{Limit: 3}, []uint64{8, 9, 10}},
		{"LimitOverCount", Filter{Limit: 50}, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"LimitEqualsCount", Filter{Limit: 10}, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"LimitWithUntil", Filter{UntilSeq: 6, Limit: 2}, []uint64{5, 6}},
		{"LimitWithSinceAfter", Filter{SinceSeq: 9, Limit: 5}, []uint64{9, 10}},
		{"LimitWithSinceBefore", Filter{SinceSeq: 2, UntilSeq: 7, Limit: 3}, []uint64{5, 6, 7}},
		{"LimitWithFilter", Filter{Type: "project.*", UntilSeq: 4, Limit: 2}, []uint64{3, 4}},
		{"Stream", Filter{Stream: "project/p4"}, []uint64{5}},
		{"Project", Filter{Project: "p7"}, []uint64{8}},
		{"TypeExact", Filter{Type: "project.created", UntilSeq: 2}, []uint64{1, 2}},
		{"TypePrefix", Filter{Type: "project.*", SinceSeq: 9}, []uint64{9, 10}},
		{"TypeNoMatch", Filter{Type: "task.*"}, []uint64{}},
		{"Actor", Filter{Actor: "nobody"}, []uint64{}},
		{"SinceTime", Filter{Since: all[6].Time}, []uint64{7, 8, 9, 10}},
		{"UntilTime", Filter{Until: all[1].Time}, []uint64{1, 2}},
		{"UntilPastHead", Filter{SinceSeq: 10, UntilSeq: 99}, []uint64{10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := seqs(collect(t, e, tt.f)); !slices.Equal(got, tt.want) {
				t.Errorf("seqs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEngine_EventsPagesAcrossTransactions(t *testing.T) {
	e := mustOpen(t)
	const n = 2*pageSize + 17
	err := e.update(func(tx store.Tx) error {
		var idx logidx.Writer // what the engine's writer would list
		for i := range n {
			ev, err := e.newEvent("test.event", 1, "big", map[string]int{"i": i})
			if err != nil {
				return err
			}
			res, err := tx.Append("test/stream", eventlog.Any, ev)
			if err != nil {
				return err
			}
			idx.Add(res.Seqs[0], &ev)
		}
		return idx.Flush(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Filter{{}, {Stream: "test/stream"}, {Project: "big"}} {
		got := seqs(collect(t, e, f))
		if len(got) != n || got[0] != 1 || got[n-1] != n || !slices.IsSorted(got) {
			t.Errorf("filter %+v: %d events, first %d last %d", f, len(got), got[0], got[len(got)-1])
		}
	}
	if got := seqs(collect(t, e, Filter{Stream: "test/stream", SinceSeq: pageSize + 5, Limit: 2})); !slices.Equal(got, []uint64{n - 1, n}) {
		t.Errorf("stream since+limit = %v", got)
	}
}

func TestOpen_Driver(t *testing.T) {
	t.Run("ErrNoDriver", func(t *testing.T) {
		_, err := Open("postgres://flow@localhost/flow", Options{})
		if !errors.Is(err, store.ErrNoDriver) || !strings.Contains(err.Error(), "postgres://") || ErrorCode(err) != CodeInvalid {
			t.Fatalf("Open(postgres://...) = %v (code %s), want ErrNoDriver naming postgres://", err, ErrorCode(err))
		}
	})
	t.Run("ErrNotExist", func(t *testing.T) {
		_, err := Open(filepath.Join(t.TempDir(), "none.db"), Options{})
		if !errors.Is(err, store.ErrNotExist) {
			t.Fatalf("Open = %v, want store.ErrNotExist", err)
		}
	})
}

func TestNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", DefaultFile)
	st, err := store.Open(path, store.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(st, Options{Actor: "tester", Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateProject(NewProject{Name: "website"}); err != nil {
		t.Fatal(err)
	}
	if rep, err := e.Verify(); err != nil || rep.HeadSeq != 1 || rep.Projections != "ok" {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	// Close closed st: the file opens again, and holds the project.
	e, err = Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if ok, err := e.ProjectExists("website"); !ok || err != nil {
		t.Fatalf("ProjectExists = %v, %v", ok, err)
	}
}

func TestEngine_ReadOnlyReleasesBetweenPages(t *testing.T) {
	e := mustOpen(t)
	fill(t, e, 3)
	path := e.Path()
	e.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	// While the reader's callback runs, a writer must be able to take the
	// lock: the read-only engine has released the file.
	err = ro.Events(Filter{}, func(ev Event) error {
		w, err := Open(path, Options{LockTimeout: 200e6})
		if err != nil {
			return fmt.Errorf("writer blocked by reader at seq %d: %w", ev.Seq, err)
		}
		return w.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.acquire(); err != nil { // reopen for the cleanup's Verify
		t.Fatal(err)
	}
}

func TestHead(t *testing.T) {
	t.Run("ParseOK", func(t *testing.T) {
		h, err := ParseHead("ABCDEF0123@42")
		if err != nil || h.Seq != 42 || h.Hash != "abcdef0123" {
			t.Fatalf("ParseHead = %+v, %v", h, err)
		}
	})
	t.Run("ParseErrInvalid", func(t *testing.T) {
		for _, s := range []string{"", "abc@1", "abcdef01", "abcdef01@", "abcdef01@0", "abcdef0g@1", "abcdef01@-1", strings.Repeat("a", 65) + "@1"} {
			if _, err := ParseHead(s); !errors.Is(err, ErrInvalid) {
				t.Errorf("ParseHead(%q) = %v, want ErrInvalid", s, err)
			}
		}
	})
	e := mustOpen(t)
	fill(t, e, 3)
	rep, err := e.Verify()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("CheckOK", func(t *testing.T) {
		for _, h := range []Head{{3, rep.HeadHash}, {3, rep.HeadHash[:8]}} {
			if err := e.CheckHead(h); err != nil {
				t.Errorf("CheckHead(%v) = %v", h, err)
			}
		}
	})
	t.Run("CheckErrCorrupt", func(t *testing.T) {
		for _, h := range []Head{{2, rep.HeadHash}, {4, rep.HeadHash}} {
			var ce *eventlog.CorruptionError
			if err := e.CheckHead(h); !errors.As(err, &ce) || ce.Seq != h.Seq {
				t.Errorf("CheckHead(%v) = %v, want corruption at seq %d", h, err, h.Seq)
			}
		}
	})
}

func TestEngine_ExportProject(t *testing.T) {
	e := mustOpen(t)
	fill(t, e, 5) // p0..p4, one event each
	for range 3 {
		if _, err := e.AddTask(NewTask{Project: "p2", Title: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	n, err := e.ExportProject(&out, "p2", 0)
	if err != nil || n != 4 {
		t.Fatalf("ExportProject(p2) = %d, %v; want its 4 events", n, err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Project != "p2" || len(ev.Raw) == 0 {
			t.Errorf("line %q: %+v, %v; want an event of p2 with its raw payload", line, ev, err)
		}
	}
	if n, err := e.ExportProject(io.Discard, "p2", 7); err != nil || n != 2 {
		t.Errorf("ExportProject(p2, since 7) = %d, %v; want 2", n, err)
	}
}

func TestEngine_ExportImport(t *testing.T) {
	src := mustOpen(t)
	fill(t, src, 5)
	var exported bytes.Buffer
	if n, err := src.Export(&exported, 0); err != nil || n != 5 {
		t.Fatalf("Export = %d, %v", n, err)
	}
	t.Run("IntoEmptyReproducesTheLog", func(t *testing.T) {
		dst := mustOpen(t)
		res, err := dst.Import(bytes.NewReader(exported.Bytes()))
		if err != nil || res != (ImportResult{Read: 5, Appended: 5}) {
			t.Fatalf("Import = %+v, %v", res, err)
		}
		var again bytes.Buffer
		if _, err := dst.Export(&again, 0); err != nil {
			t.Fatal(err)
		}
		if again.String() != exported.String() {
			t.Errorf("export of the import differs:\n%s\nwant\n%s", again.String(), exported.String())
		}
	})
	t.Run("TwiceChangesNothing", func(t *testing.T) {
		dst := mustOpen(t)
		if _, err := dst.Import(bytes.NewReader(exported.Bytes())); err != nil {
			t.Fatal(err)
		}
		res, err := dst.Import(bytes.NewReader(exported.Bytes()))
		if err != nil || res != (ImportResult{Read: 5, Skipped: 5}) {
			t.Fatalf("second Import = %+v, %v", res, err)
		}
		if n := len(collect(t, dst, Filter{})); n != 5 {
			t.Errorf("%d events after two imports, want 5", n)
		}
	})
	t.Run("DataWithoutRaw", func(t *testing.T) {
		dst := mustOpen(t)
		line := `{"id":"0190f3a0-0000-7000-8000-000000000001","stream":"s/1","version":1,"type":"x.y","schema":1,"time":"2026-11-01T10:00:00Z","actor":"a","data":{"b":[1,2.5,"x"],"a":18446744073709551615}}`
		for range 2 { // the same data encodes to the same bytes: the second import is a no-op
			if _, err := dst.Import(strings.NewReader(line)); err != nil {
				t.Fatal(err)
			}
		}
		evs := collect(t, dst, Filter{})
		if len(evs) != 1 || string(evs[0].Data) != `{"a":18446744073709551615,"b":[1,2.5,"x"]}` {
			t.Fatalf("events = %+v", evs)
		}
	})
	t.Run("AllOrNothing", func(t *testing.T) {
		dst := mustOpen(t)
		lines := strings.Split(strings.TrimSpace(exported.String()), "\n")
		broken := strings.Join(lines[:3], "\n") + "\n" + strings.Replace(lines[3], `"version":1`, `"version":2`, 1)
		_, err := dst.Import(strings.NewReader(broken))
		if ErrorCode(err) != CodeConflict || !strings.Contains(err.Error(), "line 4") {
			t.Fatalf("Import = %v, want a conflict on line 4", err)
		}
		if n := len(collect(t, dst, Filter{})); n != 0 {
			t.Errorf("%d events kept from a failed import, want 0", n)
		}
	})
	t.Run("MisplacedEvent", func(t *testing.T) {
		// A known event on a stream the commands never put it on would make
		// reads of one entity at a point (its own stream) disagree with the
		// project's state: refused, and nothing of the import is kept.
		dst := mustOpen(t)
		lines := strings.Split(strings.TrimSpace(exported.String()), "\n")
		project := `{"id":"0190f3a0-0000-7000-8000-000000000008","stream":"project/q","version":1,"type":"project.created","schema":1,"time":"2026-11-01T10:00:00Z","actor":"a","project":"q","data":{"name":"q"}}`
		moved := `{"id":"0190f3a0-0000-7000-8000-000000000009","stream":"task/q/T-2","version":1,"type":"task.created","schema":1,"time":"2026-11-01T10:00:00Z","actor":"a","project":"q","data":{"id":"T-1","title":"t"}}`
		_, err := dst.Import(strings.NewReader(lines[0] + "\n" + project + "\n" + moved))
		if ErrorCode(err) != CodeInvalid || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "task/q/T-1") {
			t.Fatalf("Import = %v, want invalid input on line 3 naming task/q/T-1", err)
		}
		if n := len(collect(t, dst, Filter{})); n != 0 {
			t.Errorf("%d events kept from a refused import, want 0", n)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		dst := mustOpen(t)
		bad := []string{
			`not json`,
			`[1,2]`,
			`{"stream":"s","version":1,"type":"t","time":"2026-11-01T10:00:00Z"}`,
			`{"id":"0190f3a0-0000-7000-8000-000000000001","version":1,"type":"t","time":"2026-11-01T10:00:00Z"}`,
			`{"id":"0190f3a0-0000-7000-8000-000000000001","stream":"s","type":"t","time":"2026-11-01T10:00:00Z"}`,
			`{"id":"0190f3a0-0000-7000-8000-000000000001","stream":"s","version":1,"time":"2026-11-01T10:00:00Z"}`,
			`{"id":"0190f3a0-0000-7000-8000-000000000001","stream":"s","version":1,"type":"t"}`,
			`{"id":"nope","stream":"s","version":1,"type":"t","time":"2026-11-01T10:00:00Z"}`,
			`{"id":"0190f3a0-0000-7000-8000-000000000001","stream":"s","version":1,"type":"t","time":"2026-11-01T10:00:00Z","causation":"x"}`,
			"{\"id\":\"0190f3a0-0000-7000-8000-000000000001\",\"stream\":\"s\xff\",\"version\":1,\"type\":\"t\",\"time\":\"2026-11-01T10:00:00Z\"}",
			`{"id":"0190f3a0-0000-7000-8000-000000000001","stream":"s","version":1,"type":"t","time":"2026-11-01T10:00:00Z","raw":"!!"}`,
		}
		for _, line := range bad {
			if _, err := dst.Import(strings.NewReader(line)); ErrorCode(err) != CodeInvalid {
				t.Errorf("Import(%.60q) = %v, want invalid", line, err)
			}
		}
	})
}

func TestErrorCode(t *testing.T) {
	tests := []struct {
		err  error
		want Code
	}{
		{nil, CodeOK},
		{errors.New("boom"), CodeInternal},
		{fmt.Errorf("x: %w", ErrNotFound), CodeNotFound},
		{fmt.Errorf("x: %w", os.ErrNotExist), CodeNotFound},
		{eventlog.ErrNotExist, CodeNotFound},
		{ErrExists, CodeConflict},
		{&eventlog.VersionConflict{}, CodeConflict},
		{ErrInvalid, CodeInvalid},
		{eventlog.ErrTooLarge, CodeInvalid},
		{fmt.Errorf("x: %w", eventlog.ErrBusy), CodeBusy},
		{&eventlog.CorruptionError{Seq: 3}, CodeCorrupt},
		{eventlog.ErrNewerFormat, CodeCorrupt},
		{fmt.Errorf("x: %w", store.ErrNoDriver), CodeInvalid},
	}
	for _, tt := range tests {
		if got := ErrorCode(tt.err); got != tt.want {
			t.Errorf("ErrorCode(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}
