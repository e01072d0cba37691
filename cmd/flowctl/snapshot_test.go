package main

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/snapshot"
)

// snapshotFixture is a flow file with projects p and q, tasks in both,
// and snapshots stored every 3 events of a project (written through an
// engine opened with that interval; the CLI's is 1000).
func snapshotFixture(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "p")
	f.mustRun("", "project", "new", "q")
	eng, err := flow.Open(f.path, flow.Options{Actor: "tester", NoSync: true, SnapshotEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for i := range 8 {
		for _, p := range []string{"p", "q"} {
			if _, err := eng.AddTask(flow.NewTask{Project: p, Title: "task " + strconv.Itoa(i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

// snapshotDeltaFixture is a flow file with project p: ten tasks, then
// small changes to one of them, snapshots every 3 events, so that most
// snapshots are deltas.
func snapshotDeltaFixture(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "p")
	eng, err := flow.Open(f.path, flow.Options{Actor: "tester", NoSync: true, SnapshotEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	for i := range 10 {
		if _, err := eng.AddTask(flow.NewTask{Project: "p", Title: "task " + strconv.Itoa(i), Description: strings.Repeat("words ", 20)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 {
		if _, err := eng.MergeContext(flow.ContextPatch{Project: "p", ID: "T-1", Patch: `{"n":` + strconv.Itoa(i) + `}`}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// snapshotInfos runs args with -o json and decodes the array it prints.
func snapshotInfos(t *testing.T, f *flowFile, args ...string) []flow.SnapshotInfo {
	t.Helper()
	var infos []flow.SnapshotInfo
	if err := json.Unmarshal([]byte(f.mustRun("", append(args, "-o", "json")...)), &infos); err != nil {
		t.Fatal(err)
	}
	return infos
}

// snapshotDamage writes value over p's stored snapshot at seq, through
// the log's own API, as damage from outside would.
func snapshotDamage(t *testing.T, f *flowFile, project string, seq uint64, value []byte) {
	t.Helper()
	key := binary.BigEndian.AppendUint16(nil, uint16(len(project)))
	key = binary.BigEndian.AppendUint64(append(key, project...), seq)
	l, err := eventlog.Open(f.path, eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Update(func(tx *eventlog.Tx) error { return tx.Put("snapshots", key, value) }); err != nil {
		t.Fatal(err)
	}
}

// snapshotUnchanged fails the test if the flow file's bytes changed
// since before.
func snapshotUnchanged(t *testing.T, f *flowFile, before []byte, what string) {
	t.Helper()
	if !bytes.Equal(f.bytes(), before) {
		t.Errorf("%s changed the flow file", what)
	}
}

func TestSnapshotLs(t *testing.T) {
	t.Parallel()
	f := snapshotFixture(t)
	before := f.bytes()
	t.Run("Text", func(t *testing.T) {
		stdout, stderr, code := f.run("", "snapshot", "ls", "--project", "p")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "PROJECT") {
			t.Fatalf("stdout = %q, want a table of several snapshots", stdout)
		}
		if head := strings.Fields(lines[0]); len(head) < 3 || head[2] != "KIND" {
			t.Fatalf("header %q: want a KIND column third", lines[0])
		}
		for _, l := range lines[1:] {
			if fields := strings.Fields(l); fields[0] != "p" || fields[len(fields)-1] != "ok" {
				t.Errorf("row %q: want a good snapshot of p", l)
			}
		}
	})
	t.Run("Kinds", func(t *testing.T) {
		t.Parallel()
		d := snapshotDeltaFixture(t)
		stdout := d.mustRun("", "snapshot", "ls", "--project", "p")
		kinds := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
			kind, _, _ := strings.Cut(strings.Fields(l)[2], "@")
			kinds[kind] = true
		}
		if !kinds["full"] || !kinds["delta"] || len(kinds) != 2 {
			t.Errorf("kinds %v in %q: want full and delta@BASE rows", kinds, stdout)
		}
		if out := d.mustRun("", "snapshot", "verify", "--project", "p"); strings.Contains(out, "BAD") || !strings.Contains(out, "delta@") || !strings.Contains(out, "snapshots verified") {
			t.Errorf("verify = %q: want every snapshot ok, deltas named", out)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		p := snapshotInfos(t, f, "snapshot", "ls", "--project", "p")
		all := snapshotInfos(t, f, "snapshot", "ls", "--all")
		if len(p) < 2 || len(all) <= len(p) {
			t.Fatalf("%d snapshots of p, %d in all: want several of each project", len(p), len(all))
		}
		for _, in := range all {
			if !in.OK || in.Bytes == 0 || len(in.StateHash) != 64 || len(in.ChainHash) != 64 || in.Seq == 0 {
				t.Errorf("snapshot %+v: want a healthy, described one", in)
			}
			if full := in.Kind == "full" && in.Base == 0 && in.Chain == 0; !full && (in.Kind != "delta" || in.Base == 0 || in.Base >= in.Seq || in.Chain < 1) {
				t.Errorf("snapshot %+v: want full, or a delta on an earlier base", in)
			}
		}
	})
	t.Run("JSONL", func(t *testing.T) {
		stdout := f.mustRun("", "snapshot", "ls", "--project", "q", "-o", "jsonl")
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var in flow.SnapshotInfo
			if err := json.Unmarshal([]byte(l), &in); err != nil || in.Project != "q" {
				t.Errorf("line %q: %v", l, err)
			}
		}
	})
	t.Run("Empty", func(t *testing.T) {
		t.Parallel()
		e := mustInit(t, "--project", "p")
		if got := e.mustRun("", "snapshot", "ls", "-o", "json"); strings.TrimSpace(got) != "[]" {
			t.Errorf("ls -o json of a file without snapshots = %q, want []", got)
		}
		if got := e.mustRun("", "snapshot", "ls"); got != "no snapshots\n" {
			t.Errorf("ls = %q", got)
		}
	})
	t.Run("UnknownProject", func(t *testing.T) {
		_, stderr, code := f.run("", "snapshot", "ls", "--project", "nope")
		wantError(t, stderr, code, 3, "nope")
	})
	t.Run("NoProjectSelected", func(t *testing.T) {
		if err := os.Remove(filepath.Join(filepath.Dir(f.path), "current")); err != nil { // init --project p selected p
			t.Fatal(err)
		}
		_, stderr, code := f.run("", "snapshot", "ls")
		wantError(t, stderr, code, 2)
	})
	snapshotUnchanged(t, f, before, "snapshot ls")
}

func TestSnapshotExport(t *testing.T) {
	t.Parallel()
	f := snapshotFixture(t)
	before := f.bytes()
	evs := f.logEvents()
	head := evs[len(evs)-1]
	out := t.TempDir()
	decode := func(t *testing.T, path string) snapshot.Header {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		h, _, err := snapshot.Decode(b)
		if err != nil {
			t.Fatalf("the exported file does not decode: %v", err)
		}
		return h
	}
	t.Run("Head", func(t *testing.T) {
		path := filepath.Join(out, "head.snap")
		stdout, stderr, code := f.run("", "snapshot", "export", path, "--project", "p")
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Exported the snapshot of p at seq "+strconv.FormatUint(head.Seq, 10)) {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		h := decode(t, path)
		if h.Seq != head.Seq || h.Scope != "p" || hexOf(h.ChainHash) != head.Hash {
			t.Errorf("header %+v: want p at the head %d, hash %s", h, head.Seq, head.Hash)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		path := filepath.Join(out, "json.snap")
		var res struct {
			flow.SnapshotInfo
			File string `json:"file"`
		}
		if err := json.Unmarshal([]byte(f.mustRun("", "snapshot", "export", path, "--project", "p", "--at", "5", "-o", "json")), &res); err != nil {
			t.Fatal(err)
		}
		h := decode(t, path)
		if res.Seq != 5 || h.Seq != 5 || res.File != path || res.StateHash != hexOf(h.StateHash) || !res.OK {
			t.Errorf("export -o json = %+v, header %+v", res, h)
		}
	})
	t.Run("AtTime", func(t *testing.T) {
		path := filepath.Join(out, "time.snap")
		f.mustRun("", "snapshot", "export", path, "--project", "q", "--at", evs[6].Time)
		if h := decode(t, path); h.Seq != evs[6].Seq {
			t.Errorf("export at the time of seq %d is at seq %d", evs[6].Seq, h.Seq)
		}
	})
	t.Run("Stdout", func(t *testing.T) {
		path := filepath.Join(out, "file.snap")
		f.mustRun("", "snapshot", "export", path, "--project", "q", "--at", "9")
		stdout, stderr, code := f.run("", "snapshot", "export", "-", "--project", "q", "--at", "9")
		want, _ := os.ReadFile(path)
		if code != 0 || stderr != "" || stdout != string(want) {
			t.Fatalf("export - : exit %d, stderr %q, %d bytes on stdout, want the %d of the file", code, stderr, len(stdout), len(want))
		}
	})
	t.Run("ReplacesAFileAtomically", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "s.snap")
		if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		f.mustRun("", "snapshot", "export", path, "--project", "p")
		decode(t, path)
		fi, _ := os.Stat(path)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want the replaced file's 0600 kept", fi.Mode().Perm())
		}
		snapshotOnlyFiles(t, dir, "s.snap")
	})
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"PastTheHead", []string{"--project", "p", "--at", "9999"}, 2},
		{"BadPoint", []string{"--project", "p", "--at", "yesterday"}, 2},
		{"UnknownCheckpoint", []string{"--project", "p", "--at", "C-7"}, 3},
		{"BeforeTheProject", []string{"--project", "q", "--at", "1"}, 3},
		{"UnknownProject", []string{"--project", "nope"}, 3},
	} {
		t.Run("Refuses"+tt.name, func(t *testing.T) {
			dir := t.TempDir()
			_, stderr, code := f.run("", append([]string{"snapshot", "export", filepath.Join(dir, "x.snap")}, tt.args...)...)
			wantError(t, stderr, code, tt.code)
			snapshotOnlyFiles(t, dir)
		})
	}
	t.Run("RefusesADirectory", func(t *testing.T) {
		dir := t.TempDir()
		_, stderr, code := f.run("", "snapshot", "export", dir, "--project", "p")
		wantError(t, stderr, code, 2, "directory")
		snapshotOnlyFiles(t, dir)
	})
	t.Run("RefusesAMissingDirectory", func(t *testing.T) {
		dir := t.TempDir()
		_, stderr, code := f.run("", "snapshot", "export", filepath.Join(dir, "no", "x.snap"), "--project", "p")
		wantError(t, stderr, code, 3)
		snapshotOnlyFiles(t, dir)
	})
	t.Run("NoFileArgument", func(t *testing.T) {
		_, stderr, code := f.run("", "snapshot", "export", "--project", "p")
		wantError(t, stderr, code, 2)
	})
	snapshotUnchanged(t, f, before, "snapshot export")
}

func hexOf(h [32]byte) string { return hex.EncodeToString(h[:]) }

// snapshotOnlyFiles fails unless dir holds exactly names: no temporary
// file left behind, nothing written by a refused command.
func snapshotOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

func TestSnapshotImport(t *testing.T) {
	t.Parallel()
	f := snapshotFixture(t)
	dir := t.TempDir()
	// A seq of p with no stored snapshot.
	stored := map[uint64]bool{}
	for _, in := range snapshotInfos(t, f, "snapshot", "ls", "--project", "p") {
		stored[in.Seq] = true
	}
	seq := uint64(4)
	for stored[seq] {
		seq++
	}
	good := filepath.Join(dir, "good.snap")
	f.mustRun("", "snapshot", "export", good, "--project", "p", "--at", strconv.FormatUint(seq, 10))
	goodBytes, _ := os.ReadFile(good)

	t.Run("Stores", func(t *testing.T) {
		stdout, stderr, code := f.run("", "snapshot", "import", good)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Imported the snapshot of p at seq "+strconv.FormatUint(seq, 10)) {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		found := false
		for _, in := range snapshotInfos(t, f, "snapshot", "ls", "--project", "p") {
			found = found || in.Seq == seq && in.OK
		}
		if !found {
			t.Fatalf("the imported snapshot at seq %d is not listed", seq)
		}
	})
	t.Run("AgainChangesNothing", func(t *testing.T) {
		before := f.bytes()
		f.mustRun("", "snapshot", "import", good)
		f.mustRun(string(goodBytes), "snapshot", "import", "-")
		snapshotUnchanged(t, f, before, "importing a stored snapshot again")
	})
	t.Run("JSON", func(t *testing.T) {
		var res struct {
			flow.SnapshotInfo
			File string `json:"file"`
		}
		if err := json.Unmarshal([]byte(f.mustRun("", "snapshot", "import", good, "-o", "json")), &res); err != nil {
			t.Fatal(err)
		}
		if res.Project != "p" || res.Seq != seq || res.File != good || !res.OK {
			t.Errorf("import -o json = %+v", res)
		}
	})

	other := snapshotFixture(t) // the same commands, another log
	fromOther := filepath.Join(dir, "other.snap")
	other.mustRun("", "snapshot", "export", fromOther, "--project", "p", "--at", strconv.FormatUint(seq, 10))
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	flipped := bytes.Clone(goodBytes)
	flipped[len(flipped)/2] ^= 0x20
	for _, tt := range []struct {
		name  string
		args  []string
		stdin string
		code  int
	}{
		{"BitFlipped", []string{write("flipped.snap", flipped)}, "", 7},
		{"Truncated", []string{write("short.snap", goodBytes[:len(goodBytes)-3])}, "", 7},
		{"Empty", []string{write("empty.snap", nil)}, "", 7},
		{"NotASnapshot", []string{fixturePath(t)}, "", 7},
		{"OfAnotherLog", []string{fromOther}, "", 7},
		{"CorruptOnStdin", []string{"-"}, string(flipped), 7},
		{"MissingFile", []string{filepath.Join(dir, "missing.snap")}, "", 3},
		{"ADirectory", []string{dir}, "", 2},
		{"NoArgument", nil, "", 2},
	} {
		t.Run("Refuses"+tt.name, func(t *testing.T) {
			before := f.bytes()
			_, stderr, code := f.run(tt.stdin, append([]string{"snapshot", "import"}, tt.args...)...)
			wantError(t, stderr, code, tt.code)
			snapshotUnchanged(t, f, before, "a refused import")
		})
	}
	t.Run("RefusesCorruptJSONError", func(t *testing.T) {
		_, stderr, code := f.run("", "snapshot", "import", filepath.Join(dir, "flipped.snap"), "--json")
		wantJSONError(t, stderr, code, 7, "corrupt")
	})
}

func TestSnapshotVerify(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		f := snapshotFixture(t)
		before := f.bytes()
		stdout, stderr, code := f.run("", "snapshot", "verify", "--project", "p")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		n := len(snapshotInfos(t, f, "snapshot", "ls", "--project", "p"))
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != n+1 || !strings.HasPrefix(lines[n], "ok: ") {
			t.Fatalf("stdout = %q: want a line per snapshot (%d) and a summary", stdout, n)
		}
		for _, l := range lines[:n] {
			if !strings.HasPrefix(l, "ok ") || !strings.Contains(l, " p@") {
				t.Errorf("line %q: want a good snapshot of p", l)
			}
		}
		all := snapshotInfos(t, f, "snapshot", "verify", "--all")
		if len(all) <= n {
			t.Errorf("verify --all lists %d snapshots, p alone has %d", len(all), n)
		}
		snapshotUnchanged(t, f, before, "snapshot verify")
	})
	t.Run("BadSnapshot", func(t *testing.T) {
		t.Parallel()
		f := snapshotFixture(t)
		infos := snapshotInfos(t, f, "snapshot", "ls", "--project", "q")
		bad := infos[len(infos)/2]
		snapshotDamage(t, f, "q", bad.Seq, []byte("junk"))
		name := "q@" + strconv.FormatUint(bad.Seq, 10)
		before := f.bytes()

		stdout, stderr, code := f.run("", "snapshot", "verify", "--project", "q")
		wantError(t, stderr, code, 7, name)
		if !strings.Contains(stdout, "BAD  "+name) || strings.Count(stdout, "\n") != len(infos) {
			t.Errorf("stdout = %q: want every snapshot listed, %s as bad", stdout, name)
		}
		stdout, stderr, code = f.run("", "snapshot", "verify", "--all", "-o", "json")
		wantJSONError(t, stderr, code, 7, "corrupt")
		var got []flow.SnapshotInfo
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		nbad := 0
		for _, in := range got {
			if !in.OK {
				nbad++
				if in.Project != "q" || in.Seq != bad.Seq || in.Problem == "" {
					t.Errorf("reported bad: %+v, want %s", in, name)
				}
			}
		}
		if nbad != 1 {
			t.Errorf("%d bad snapshots reported, want 1", nbad)
		}
		// verify counts it (derived data: exit 0) and says so.
		stdout, stderr, code = f.run("", "verify")
		if code != 0 || !strings.Contains(stdout, "1 of "+strconv.Itoa(len(got))+" snapshots are bad") {
			t.Errorf("verify: exit %d, stdout %q, stderr %q; want 0 and the bad snapshot counted", code, stdout, stderr)
		}
		var rep struct {
			Snapshots    int `json:"snapshots"`
			BadSnapshots int `json:"bad_snapshots"`
		}
		if err := json.Unmarshal([]byte(f.mustRun("", "verify", "-o", "json")), &rep); err != nil || rep.Snapshots != len(got) || rep.BadSnapshots != 1 {
			t.Errorf("verify -o json = %+v, %v; want %d snapshots, 1 bad", rep, err, len(got))
		}
		// p's snapshots are fine.
		if _, stderr, code := f.run("", "snapshot", "verify", "--project", "p"); code != 0 {
			t.Errorf("verify of p: exit %d, stderr %q", code, stderr)
		}
		// ls marks it too.
		if out := f.mustRun("", "snapshot", "ls", "--project", "q"); !strings.Contains(out, "BAD") {
			t.Errorf("ls = %q: want the bad snapshot marked", out)
		}
		snapshotUnchanged(t, f, before, "verify and ls of a bad snapshot")

		// Export at its seq (built from the log) and import it: repaired.
		path := filepath.Join(t.TempDir(), "fix.snap")
		f.mustRun("", "snapshot", "export", path, "--project", "q", "--at", strconv.FormatUint(bad.Seq, 10))
		f.mustRun("", "snapshot", "import", path)
		if _, stderr, code := f.run("", "snapshot", "verify", "--all"); code != 0 {
			t.Errorf("verify after the repair: exit %d, stderr %q", code, stderr)
		}
	})
}
