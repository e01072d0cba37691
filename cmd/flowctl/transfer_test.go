package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// sourceFile is the fixture plus one event made by the CLI itself (with a
// payload encoded by the engine, not by import), seqs 1-7.
func sourceFile(t *testing.T) *flowFile {
	t.Helper()
	f := fixtureFile(t)
	f.mustRun("", "init", "--project", "gamma")
	return f
}

// exportTo writes f's export to dir/name and returns its path.
func exportTo(t *testing.T, f *flowFile, dir, name string, args ...string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writeFile(t, path, []byte(f.mustRun("", append([]string{"export"}, args...)...)))
	return path
}

func TestExport(t *testing.T) {
	t.Parallel()
	f := sourceFile(t)

	t.Run("AllEvents", func(t *testing.T) {
		stdout := f.mustRun("", "export")
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		logged := f.logEvents()
		if len(lines) != len(logged) {
			t.Fatalf("export wrote %d lines, want %d", len(lines), len(logged))
		}
		for i, line := range lines {
			var got struct {
				event
				Raw []byte `json:"raw"`
			}
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("line %d %q: %v", i+1, line, err)
			}
			if got.event.Seq != logged[i].Seq || got.ID != logged[i].ID || got.Hash != logged[i].Hash ||
				string(got.Data) != string(logged[i].Data) {
				t.Errorf("line %d = %+v, want %+v", i+1, got.event, logged[i])
			}
			if len(got.Raw) == 0 {
				t.Errorf("line %d has no raw payload", i+1)
			}
		}
	})

	t.Run("Since", func(t *testing.T) {
		var seqs []uint64
		for _, line := range strings.Split(strings.TrimSuffix(f.mustRun("", "export", "--since", "5"), "\n"), "\n") {
			var ev event
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, ev.Seq)
		}
		if want := []uint64{5, 6, 7}; !slices.Equal(seqs, want) {
			t.Errorf("export --since 5: seqs %v, want %v", seqs, want)
		}
	})

	// OneProject: --project exports that project's events only (it used
	// to be ignored: every project was exported).
	t.Run("OneProject", func(t *testing.T) {
		for _, args := range [][]string{{"--project", "alpha"}, {"--project", "al"}, {"--project", "alpha", "--since", "4"}} {
			var got []uint64
			for _, line := range strings.Split(strings.TrimSuffix(f.mustRun("", append([]string{"export"}, args...)...), "\n"), "\n") {
				var ev event
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatal(err)
				}
				if ev.Project != "alpha" {
					t.Errorf("export %v wrote an event of project %q", args, ev.Project)
				}
				got = append(got, ev.Seq)
			}
			want := seqsOf(f.logEvents(append([]string{"--project", "alpha"}, args[2:]...)...))
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("export %v: seqs %v, want %v (log's)", args, got, want)
			}
		}
		_, stderr, code := f.run("", "export", "--project", "nosuch")
		wantError(t, stderr, code, 3, "nosuch")
	})

	t.Run("OneProjectImportsIntoAnEmptyFile", func(t *testing.T) {
		t.Parallel()
		exported := exportTo(t, f, t.TempDir(), "gamma.jsonl", "--project", "gamma")
		dst := mustInit(t)
		dst.mustRun("", "import", exported)
		if got := dst.mustRun("", "project", "ls"); !strings.Contains(got, "gamma") || strings.Contains(got, "alpha") {
			t.Errorf("project ls after importing gamma's export = %q, want gamma alone", got)
		}
	})

	t.Run("SincePastHead", func(t *testing.T) {
		if stdout := f.mustRun("", "export", "--since", "8"); stdout != "" {
			t.Errorf("export --since 8 = %q, want nothing", stdout)
		}
	})

	t.Run("EmptyFile", func(t *testing.T) {
		t.Parallel()
		if stdout := mustInit(t).mustRun("", "export"); stdout != "" {
			t.Errorf("export of an empty file = %q, want nothing", stdout)
		}
	})
}

// TestImport_RoundTrip: export, then import into an empty file, gives the
// same log: the same seqs, and - since the chain hash covers only what the
// export carries (seq, id, stream, version, type, schema, time, actor,
// session, project, correlation, causation, payload bytes, prev hash) -
// the same hashes. So `log -o json` and `export` are byte-identical.
func TestImport_RoundTrip(t *testing.T) {
	t.Parallel()
	src := sourceFile(t)
	exported := exportTo(t, src, t.TempDir(), "events.jsonl")
	wantLog := src.mustRun("", "log", "-o", "json")
	wantExport := src.mustRun("", "export")

	t.Run("IntoEmptyFile", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		dst := mustInitAt(t, dir, filepath.Join(dir, "other.db"), "--db", "other.db")
		stdout := dst.mustRun("", "import", exported, "--db", "other.db")
		if want := "read 7 events: 7 appended, 0 already present\n"; stdout != want {
			t.Errorf("import printed %q, want %q", stdout, want)
		}
		if got := dst.mustRun("", "log", "-o", "json", "--db", "other.db"); got != wantLog {
			t.Errorf("log -o json after import:\n%s\nwant the source's:\n%s", got, wantLog)
		}
		if got := dst.mustRun("", "export", "--db", "other.db"); got != wantExport {
			t.Errorf("export after import differs from the source's export")
		}
		if got, want := verifyHead(t, &flowFile{t: t, dir: dir, path: dst.path}), verifyHead(t, src); got != want {
			t.Errorf("verify head after import = %s, want the source's %s", got, want)
		}
	})

	t.Run("FromStdin", func(t *testing.T) {
		t.Parallel()
		dst := mustInit(t)
		stdout := dst.mustRun(wantExport, "import", "-", "-o", "json")
		var got struct{ Read, Appended, Skipped int }
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("import -o json printed %q: %v", stdout, err)
		}
		if got.Read != 7 || got.Appended != 7 || got.Skipped != 0 {
			t.Errorf("import -o json = %+v, want read 7, appended 7, skipped 0", got)
		}
		if got := dst.mustRun("", "log", "-o", "json"); got != wantLog {
			t.Errorf("log after import from stdin differs from the source's")
		}
	})

	t.Run("IntoNonEmptyFile", func(t *testing.T) {
		t.Parallel()
		// The target already has its own event at seq 1, later than every
		// event of the source: imported events get new seqs (2-8) and so a
		// new chain, and the time of seq 1, so that times follow seqs; they
		// keep their ids, streams, versions, actors and payloads, and their
		// own time as occurred_at.
		dst := mustInit(t, "--project", "local")
		dst.mustRun("", "import", exported)
		got := dst.logEvents()
		want := decodeEvents(t, wantLog)
		if len(got) != len(want)+1 {
			t.Fatalf("got %d events, want %d", len(got), len(want)+1)
		}
		for i, w := range want {
			g := got[i+1]
			if g.Seq != w.Seq+1 || g.ID != w.ID || g.Stream != w.Stream || g.Version != w.Version || g.Type != w.Type ||
				g.Time != got[0].Time || g.Occurred != w.Time || g.Actor != w.Actor || g.Project != w.Project ||
				!sameDataBut(t, g.Data, w.Data, "occurred_at") {
				t.Errorf("imported %+v, want %+v at seq %d, at %s, occurred at %s", g, w, w.Seq+1, got[0].Time, w.Time)
			}
			if g.Hash == w.Hash {
				t.Errorf("seq %d kept the source's hash though its seq and prev hash changed", g.Seq)
			}
			if g.PrevHash != got[i].Hash {
				t.Errorf("seq %d prev hash does not chain to seq %d", g.Seq, got[i].Seq)
			}
		}
		before := dst.bytes()
		if stdout := dst.mustRun("", "import", exported); stdout != "read 7 events: 0 appended, 7 already present\n" {
			t.Errorf("a second import printed %q, want every event already present (with its occurred_at)", stdout)
		}
		if !bytes.Equal(before, dst.bytes()) {
			t.Errorf("a second import of the same events changed the file's bytes")
		}
	})

	t.Run("TwiceChangesNothing", func(t *testing.T) {
		t.Parallel()
		dst := mustInit(t)
		dst.mustRun("", "import", exported)
		before := dst.bytes()
		stdout := dst.mustRun("", "import", exported)
		if want := "read 7 events: 0 appended, 7 already present\n"; stdout != want {
			t.Errorf("second import printed %q, want %q", stdout, want)
		}
		if got := dst.mustRun("", "log", "-o", "json"); got != wantLog {
			t.Errorf("log after a second import differs from the source's")
		}
		if !bytes.Equal(before, dst.bytes()) {
			t.Errorf("a second import of the same events changed the file's bytes")
		}
	})

	t.Run("IntoTheSourceItself", func(t *testing.T) {
		t.Parallel()
		self := sourceFile(t)
		stdout := self.mustRun(self.mustRun("", "export"), "import", "-")
		if want := "read 7 events: 0 appended, 7 already present\n"; stdout != want {
			t.Errorf("import of a file's own export printed %q, want %q", stdout, want)
		}
	})

	t.Run("DeltaAfterFull", func(t *testing.T) {
		t.Parallel()
		// export --since picks up where an earlier export stopped.
		a := fixtureFile(t)
		b := mustInit(t)
		b.mustRun(a.mustRun("", "export"), "import", "-")
		a.mustRun("", "init", "--project", "delta")
		stdout := b.mustRun(a.mustRun("", "export", "--since", "5"), "import", "-")
		if want := "read 3 events: 1 appended, 2 already present\n"; stdout != want {
			t.Errorf("import of the delta printed %q, want %q", stdout, want)
		}
		if got, want := b.mustRun("", "log", "-o", "json"), a.mustRun("", "log", "-o", "json"); got != want {
			t.Errorf("after the delta, the logs differ:\n%s\nwant\n%s", got, want)
		}
	})
}

// sameDataBut reports whether two event payloads as JSON are equal but
// for key, which got may have and want must not.
func sameDataBut(t *testing.T, got, want json.RawMessage, key string) bool {
	t.Helper()
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("data %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("data %s: %v", want, err)
	}
	if _, ok := w[key]; ok {
		return false
	}
	delete(g, key)
	return reflect.DeepEqual(g, w)
}

// importLine builds one line of an import file.
func importLine(id, stream string, version uint64, typ string) string {
	return fmt.Sprintf(`{"id":%q,"stream":%q,"version":%d,"type":%q,"schema":1,"time":"2026-02-01T00:00:00Z","actor":"x","data":{"k":1}}`,
		id, stream, version, typ)
}

const (
	newID1 = "019c1a2b-0000-7000-8000-0000000000a1"
	newID2 = "019c1a2b-0000-7000-8000-0000000000a2"
	// fixtureID1 is the id of the fixture's project/alpha@1.
	fixtureID1 = "019b7a4e-a400-7000-8000-000000000001"
)

// TestImport_BadInput: every refused import exits with the code of the
// table, prints one line, and leaves the file exactly as it was - even
// when the lines before the bad one were fine (one transaction).
func TestImport_BadInput(t *testing.T) {
	t.Parallel()
	good := importLine(newID1, "task/alpha/T-2", 1, "test.note") // a type this binary does not know: kept, not folded
	// A line may be 68 levels deep: event data shows a context of 64
	// levels 4 levels down (eventview.Depth). Data of 68 makes 69.
	deep := strings.Repeat("[", 68) + strings.Repeat("]", 68)
	tests := []struct {
		name  string
		input string
		code  int
		facts []string
	}{
		{"MalformedJSON", good + "\n{\"id\": \n", 2, []string{"line 2"}},
		{"NotAnObject", good + "\n[1,2,3]\n", 2, []string{"line 2"}},
		{"InvalidUTF8", good + "\n" + strings.Replace(importLine(newID2, "s/x", 1, "x.y"), `"actor":"x"`, "\"actor\":\"\xff\xfe\"", 1) + "\n", 2, []string{"line 2", "UTF-8"}},
		{"MissingStream", strings.Replace(good, `"stream":"task/alpha/T-2",`, "", 1) + "\n", 2, []string{"line 1", "stream"}},
		{"MissingType", strings.Replace(good, `"type":"test.note",`, "", 1) + "\n", 2, []string{"line 1", "type"}},
		{"VersionZero", importLine(newID1, "s/x", 0, "x.y") + "\n", 2, []string{"line 1", "version"}},
		{"MissingTime", strings.Replace(good, `"time":"2026-02-01T00:00:00Z",`, "", 1) + "\n", 2, []string{"line 1", "time"}},
		{"BadID", importLine("not-a-uuid", "s/x", 1, "x.y") + "\n", 2, []string{"line 1", "not-a-uuid"}},
		{"ZeroID", importLine("00000000-0000-0000-0000-000000000000", "s/x", 1, "x.y") + "\n", 2, []string{"line 1", "id"}},
		{"PayloadTooLarge", strings.Replace(good, `{"k":1}`, `{"k":"`+strings.Repeat("x", 1<<20)+`"}`, 1) + "\n", 2, []string{"line 1", "payload"}},
		{"LineTooLong", good + "\n" + `{"pad":"` + strings.Repeat("x", 5<<20) + `"}` + "\n", 2, []string{"line 2"}},
		{"VersionSkipsAhead", good + "\n" + importLine(newID2, "task/alpha/T-2", 3, "task.updated") + "\n", 4, []string{"line 2", "task/alpha/T-2", "version"}},
		{"NewStreamNotAtOne", importLine(newID1, "task/alpha/T-9", 2, "task.updated") + "\n", 4, []string{"line 1", "task/alpha/T-9"}},
		{"VersionAlreadyTaken", good + "\n" + importLine(newID2, "task/alpha/T-1", 2, "task.updated") + "\n", 4, []string{"line 2", "task/alpha/T-1"}},
		{"IDReusedForOtherContent", importLine(fixtureID1, "project/alpha", 1, "project.renamed") + "\n", 4, []string{"line 1", fixtureID1}},
		{"TimeAfter2262", strings.Replace(good, "2026-02-01", "3000-01-01", 1) + "\n", 2, []string{"line 1", "time"}},
		{"TimeBefore1678", strings.Replace(good, "2026-02-01", "1600-01-01", 1) + "\n", 2, []string{"line 1", "time"}},
		{"DuplicateKeyInEnvelope", strings.Replace(good, `"stream":"task/alpha/T-2",`, `"stream":"task/alpha/T-2","stream":"task/beta/T-2",`, 1) + "\n", 2, []string{"line 1", "stream"}},
		{"DuplicateKeyInData", strings.Replace(good, `{"k":1}`, `{"k":1,"k":2}`, 1) + "\n", 2, []string{"line 1", "k"}},
		{"DataTooDeep", strings.Replace(good, `{"k":1}`, deep, 1) + "\n", 2, []string{"line 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := fixtureFile(t)
			before := f.bytes()
			stdout, stderr, code := f.run(tt.input, "import", "-")
			wantError(t, stderr, code, tt.code, tt.facts...)
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !bytes.Equal(before, f.bytes()) {
				t.Errorf("a refused import changed the file")
			}
		})
	}

	t.Run("JSONErrorObject", func(t *testing.T) {
		t.Parallel()
		f := fixtureFile(t)
		_, stderr, code := f.run("{\n", "import", "-", "-o", "json")
		e := wantJSONError(t, stderr, code, 2, "invalid")
		if !strings.Contains(e.Error.Message, "line 1") {
			t.Errorf("message %q does not name line 1", e.Error.Message)
		}
	})

	t.Run("MissingFile", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t)
		before := f.bytes()
		stdout, stderr, code := f.run("", "import", "no-such-export.jsonl")
		wantError(t, stderr, code, 3, "no-such-export.jsonl")
		if stdout != "" {
			t.Errorf("stdout = %q, want nothing", stdout)
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Errorf("an import of a missing file changed the file")
		}
	})
}

// TestImport_Edges covers inputs that are accepted.
func TestImport_Edges(t *testing.T) {
	t.Parallel()

	t.Run("BlankLinesAndCRLF", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t)
		input := "\n" + importLine(newID1, "s/x", 1, "x.y") + "\r\n\n  \n" + importLine(newID2, "s/x", 2, "x.y") + "\n"
		if stdout := f.mustRun(input, "import", "-"); stdout != "read 2 events: 2 appended, 0 already present\n" {
			t.Errorf("import printed %q", stdout)
		}
	})

	t.Run("SameEventTwiceInOneFile", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t)
		line := importLine(newID1, "s/x", 1, "x.y") + "\n"
		if stdout := f.mustRun(line+line, "import", "-"); stdout != "read 2 events: 1 appended, 1 already present\n" {
			t.Errorf("import printed %q", stdout)
		}
	})

	t.Run("DataWithoutRaw", func(t *testing.T) {
		t.Parallel()
		// Hand-written events carry only "data"; import encodes it.
		f := mustInit(t)
		line := `{"id":"` + newID1 + `","stream":"s/x","version":1,"type":"x.y","time":"2026-02-01T00:00:00Z",` +
			`"data":{"b":[1,2.5,"three",null,true],"a":{"nested":18446744073709551615},"c":-7}}` + "\n"
		f.mustRun(line, "import", "-")
		evs := f.logEvents()
		if len(evs) != 1 {
			t.Fatalf("log = %+v, want one event", evs)
		}
		var got, want any
		if err := json.Unmarshal(evs[0].Data, &got); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal([]byte(`{"a":{"nested":18446744073709551615},"b":[1,2.5,"three",null,true],"c":-7}`), &want)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("data = %s, want the imported object", evs[0].Data)
		}
	})

	t.Run("EmptyInput", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t, "--project", "p")
		before := f.bytes()
		if stdout := f.mustRun("", "import", "-"); stdout != "read 0 events: 0 appended, 0 already present\n" {
			t.Errorf("import of nothing printed %q", stdout)
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Errorf("an import of no events changed the file's bytes")
		}
	})
}

// TestImport_CreatesTheFile: a restore from an export needs no init first;
// a refused import into a path with no file leaves no file behind.
func TestImport_CreatesTheFile(t *testing.T) {
	t.Parallel()
	src := mustInit(t, "--project", "demo")
	src.mustRun("", "task", "add", "one")
	export := src.mustRun("", "export")
	head := strings.TrimSpace(src.mustRun("", "verify", "-o", "json"))

	for _, c := range []struct {
		name string
		args []string
		file string // relative to the directory
	}{
		{"Default", nil, filepath.Join(flow.DefaultDir, flow.DefaultFile)},
		{"DB", []string{"--db", "sub/dir/x.db"}, "sub/dir/x.db"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			stdout, stderr, code := runCLI(t, dir, export, append(c.args, "import", "-")...)
			if code != 0 || !strings.Contains(stdout, "2 appended") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			f := &flowFile{t: t, dir: dir, path: filepath.Join(dir, c.file)}
			if got := strings.TrimSpace(f.mustRun("", "--db", f.path, "verify", "-o", "json")); got != head {
				t.Errorf("verify after import = %s, want %s", got, head)
			}
		})
		t.Run(c.name+"/Refused", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, _, code := runCLI(t, dir, "{\"stream\":1}\n", append(c.args, "import", "-")...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != 0 {
				t.Errorf("a refused import left %v (%v)", entries, err)
			}
		})
	}
}

// TestImport_UndoTakesBackOnlyItsOwn: a refused import removes what it
// made, never a directory it found or a file another process has written
// meanwhile.
func TestImport_UndoTakesBackOnlyItsOwn(t *testing.T) {
	t.Parallel()
	t.Run("ExistingDirectoryKept", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "sub", "keep.txt"), []byte("mine"))
		if _, _, code := runCLI(t, dir, "{\"stream\":1}\n", "--db", "sub/new/x.db", "import", "-"); code != 2 {
			t.Fatalf("exit %d, want 2", code)
		}
		if _, err := os.Stat(filepath.Join(dir, "sub", "keep.txt")); err != nil {
			t.Errorf("the directory the import found lost its file: %v", err)
		}
		if _, err := os.Stat(filepath.Join(dir, "sub", "new")); !os.IsNotExist(err) {
			t.Errorf("the directory the import made is still there (%v)", err)
		}
	})
	t.Run("FileWrittenMeanwhileKept", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "a", "flow.db")
		made, err := makeFile(path)
		if err != nil || made.file != path || len(made.dirs) != 1 {
			t.Fatalf("makeFile: %+v, %v", made, err)
		}
		// Another process initializes the file it finds and writes to it.
		if _, stderr, code := runCLI(t, dir, "", "--db", path, "init", "--project", "theirs"); code != 0 {
			t.Fatalf("init: exit %d, %s", code, stderr)
		}
		made.undo()
		if _, err := os.Stat(path); err != nil {
			t.Errorf("undo removed a file that holds another process's events: %v", err)
		}
	})
	t.Run("EmptyFileRemoved", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "a", "b", "flow.db")
		made, err := makeFile(path)
		if err != nil {
			t.Fatal(err)
		}
		made.undo()
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("undo left %v", entries)
		}
	})
}
