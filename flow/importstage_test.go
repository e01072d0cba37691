package flow

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/eventview"
	"pgregory.net/rapid"
)

// TestParseLineAsSlow: the reflection-free read of an export line gives
// what encoding/json's gives, and hands every other line to it.
func TestParseLineAsSlow(t *testing.T) {
	const base = `{"seq":7,"id":"01941f29-83d0-70d7-a003-35d1bdb04af0","stream":"task/p/T-1","version":3,"type":"note.added","schema":1,` +
		`"time":"2025-01-01T00:00:02.5+01:00"%s,"actor":"agent","session":"s","project":"p"%s,"data":{"a":[1,{"b":"}]\""}],"c":null},` +
		`"raw":"gaFhAQ==","prev_hash":"00","hash":"11"}`
	lines := []string{
		lineOf(base, "", ""),
		lineOf(base, `,"occurred_at":"2024-01-01T00:00:00Z"`, `,"correlation":"01941F29-83D0-70D7-A003-35D1BDB04AF1","causation":"01941f29-83d0-70d7-a003-35d1bdb04af2"`),
		lineOf(base, "", `,"correlation":""`),
		strings.Replace(lineOf(base, "", ""), `"actor":"agent"`, `"actor":"a\u00e9\"b"`, 1),
		strings.Replace(lineOf(base, "", ""), `"actor":"agent"`, `"Actor":"agent"`, 1),
		strings.Replace(lineOf(base, "", ""), `"actor":"agent"`, `"actor":null`, 1),
		strings.Replace(lineOf(base, "", ""), `"extra":1,`, ``, 1) + "",
		strings.Replace(lineOf(base, "", ""), `"seq":7`, `"seq":7,"extra":[1,2]`, 1),
		strings.Replace(lineOf(base, "", ""), `"raw":"gaFhAQ==",`, ``, 1),
		strings.Replace(lineOf(base, "", ""), `"data":{`, `"data": {`, 1),
		strings.Replace(lineOf(base, "", ""), `"data":{"a":[1,{"b":"}]\""}],"c":null}`, `"data":12.5e3`, 1),
		strings.Replace(lineOf(base, "", ""), `"version":3`, `"version":3.0`, 1),
		strings.Replace(lineOf(base, "", ""), `"schema":1`, `"schema":4294967296`, 1),
		strings.Replace(lineOf(base, "", ""), `"time":"2025-01-01T00:00:02.5+01:00"`, `"time":"2025-01-01 00:00:02Z"`, 1),
		strings.Replace(lineOf(base, "", ""), `"raw":"gaFhAQ=="`, `"raw":"gaFhAQ="`, 1),
		strings.Replace(lineOf(base, "", ""), `"id":"01941f29-83d0-70d7-a003-35d1bdb04af0"`, `"id":"01941f2983d070d7a00335d1bdb04af0"`, 1),
		strings.Replace(lineOf(base, "", ""), `"id":"01941f29-83d0-70d7-a003-35d1bdb04af0"`, `"id":"01941f29-83d0-70d7-a003-35d1bdb04afg"`, 1),
		strings.Replace(lineOf(base, "", ""), `"version":3`, `"version":0`, 1),
		strings.Replace(lineOf(base, "", ""), `"seq":7`, `"seq":-7`, 1),
		strings.Replace(lineOf(base, "", ""), `"stream":"task/p/T-1"`, `"stream":""`, 1),
		strings.Replace(lineOf(base, "", ""), `"version":3`, `"version":03`, 1),
		strings.Replace(lineOf(base, "", ""), `"actor":"agent"`, "\"actor\":\"ag\tent\"", 1),
		strings.Replace(lineOf(base, "", ""), `"actor":"agent"`, "\"actor\":\"ag\xffent\"", 1),
		strings.Replace(lineOf(base, "", ""), `"actor":"agent"`, "\"actor\":\"agé\u2028nt\"", 1),
		strings.Replace(lineOf(base, "", ""), `"hash":"11"`, "\"hash\":\"1\x01\"", 1),
		strings.Replace(lineOf(base, "", ""), `"c":null`, `"c":nul`, 1),
		strings.Replace(lineOf(base, "", ""), `"c":null`, `"c":null,"c":1`, 1),
		strings.Replace(lineOf(base, "", ""), `"c":null`, `"c":[1,]`, 1),
		strings.Replace(lineOf(base, "", ""), `"c":null`, `"c":01`, 1),
		strings.Replace(lineOf(base, "", ""), `"c":null`, `"c":"\x"`, 1),
		strings.Replace(lineOf(base, "", ""), `"c":null`, `"c":`+strings.Repeat("[", MaxJSONDepth+eventview.Depth-2)+strings.Repeat("]", MaxJSONDepth+eventview.Depth-2), 1),
		strings.Replace(lineOf(base, "", ""), `"c":null`, `"c":`+strings.Repeat("[", MaxJSONDepth+eventview.Depth-3)+strings.Repeat("]", MaxJSONDepth+eventview.Depth-3), 1),
		strings.Replace(lineOf(base, "", ""), `"data":{"a":[1,{"b":"}]\""}],"c":null}`, `"data":tru`, 1),
		`{"seq":1}`,
		`{}`,
		`[]`,
	}
	for i, line := range lines[:3] {
		if !eventview.ParseLine([]byte(line), new(eventview.Line)) {
			t.Errorf("line %d is not read by eventview.ParseLine", i)
		}
	}
	for _, line := range lines {
		var in importReader
		got, gotErr := in.parseLine([]byte(line))
		want, wantErr := parseImportLine([]byte(line))
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v, %v\nwant %+v, %v", line, got, gotErr, want, wantErr)
		}
	}
}

func lineOf(format string, args ...string) string {
	for _, a := range args {
		format = strings.Replace(format, "%s", a, 1)
	}
	return format
}

// TestImport_BulkRefusals: an import into an empty file (AppendBulk, the
// fold at the end) refuses what an Append and a fold per event refuse: a
// version its stream is not at, naming its line, and an event on a
// stream its type does not belong on, naming its id, found by the fold;
// the file is left as it was, with no copy beside it.
func TestImport_BulkRefusals(t *testing.T) {
	src := mustOpen(t)
	randomHistory(t, src, 5, 60)
	lines := strings.SplitAfter(string(exportOf(t, src)), "\n")
	lines = lines[:len(lines)-1]
	mid := len(lines) * 2 / 3
	version := strings.Count(strings.Join(lines, ""), `"stream":"project/p0"`) + 1
	misplaced := fmt.Sprintf(`{"id":"01941f29-83d0-70d7-a003-35d1bdb04af0","stream":"project/p0","version":%d,"type":"task.created","schema":1,`+
		`"time":"2030-01-01T00:00:00Z","actor":"a","project":"p0","data":{"id":"T-99","title":"x"}}`+"\n", version)
	for name, c := range map[string]struct {
		in   []string
		want string
	}{
		"Version":   {slices.Concat(lines[:mid], []string{strings.Replace(lines[mid], `"version":`, `"version":9`, 1)}, lines[mid+1:]), fmt.Sprintf("line %d", mid+1)},
		"Misplaced": {append(slices.Clone(lines), misplaced), "01941f29-83d0-70d7-a003-35d1bdb04af0"},
		// The folder refuses it while later batches append: the import
		// stops them, and names its line.
		"MisplacedEarly": {slices.Concat(lines[:mid], []string{strings.Replace(misplaced, fmt.Sprintf(`"version":%d`, version), fmt.Sprintf(`"version":%d`, versionAfter(strings.Join(lines[:mid], ""), "project/p0")), 1)}, restOf(lines[mid:], "project/p0")),
			fmt.Sprintf("line %d: event 01941f29-83d0-70d7-a003-35d1bdb04af0", mid+1)},
	} {
		t.Run(name, func(t *testing.T) {
			dst := mustOpen(t)
			want, err := os.ReadFile(dst.Path())
			if err != nil {
				t.Fatal(err)
			}
			_, err = dst.importWith(strings.NewReader(strings.Join(c.in, "")), smallBatches)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("import = %v, want an error naming %s", err, c.want)
			}
			if got, err := os.ReadFile(dst.Path()); err != nil || !bytes.Equal(got, want) {
				t.Errorf("the file changed (%v)", err)
			}
			if left := stagedCopies(t, dst.Path()); len(left) > 0 {
				t.Errorf("copies left beside the file: %v", left)
			}
			if strings.HasPrefix(name, "Misplaced") && ErrorCode(err) != CodeInvalid {
				t.Errorf("import = %v, want ErrInvalid", err)
			}
		})
	}
}

// TestImport_BulkUnknownTypes: a bulk import keeps events of types this
// binary does not know, of a project or of none, without folding them,
// and warns of them once per type, as an import event by event does.
func TestImport_BulkUnknownTypes(t *testing.T) {
	src := mustOpen(t)
	randomHistory(t, src, 2, 20)
	lines := string(exportOf(t, src))
	for i, stream := range []string{"x/one", "x/two", "task/p0/T-1"} {
		project := ""
		if i == 2 {
			project = `,"project":"p0"`
		}
		lines += fmt.Sprintf(`{"id":"01941f29-83d0-70d7-a003-35d1bdb04af%d","stream":%q,"version":%d,"type":"test.unknown","schema":1,`+
			`"time":"2030-01-01T00:00:00Z","actor":"a"%s,"data":null}`+"\n", i, stream, versionAfter(lines, stream), project)
	}
	path := filepath.Join(t.TempDir(), "flow.db")
	var warned []string
	dst, err := Open(path, Options{Create: true, NoSync: true, Warn: func(m string) { warned = append(warned, m) }})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	res, err := dst.importWith(strings.NewReader(lines), smallBatches)
	if n := strings.Count(lines, "\n"); err != nil || res.Appended != n {
		t.Fatalf("import = %+v, %v; want %d appended", res, err, n)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "kept 3 events of type test.unknown") {
		t.Errorf("warnings %q, want one of 3 events of test.unknown", warned)
	}
	if v, err := dst.Verify(); err != nil || v.Projections != "ok" {
		t.Errorf("Verify = %+v, %v", v, err)
	}
}

// versionAfter is the next version of stream in an export.
func versionAfter(lines, stream string) int {
	return strings.Count(lines, fmt.Sprintf(`"stream":%q`, stream)) + 1
}

// restOf is lines without the events of stream, which an event put
// before them would leave a version behind.
func restOf(lines []string, stream string) []string {
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return strings.Contains(l, fmt.Sprintf(`"stream":%q`, stream)) })
}

// TestParseLine_Property: for any line made of an export's by editing a
// few bytes (a byte changed, inserted or removed, a key's value swapped
// for another's, space added), the one-pass read gives what
// encoding/json's gives, error for error; and it takes every line an
// export writes.
func TestParseLine_Property(t *testing.T) {
	src := mustOpen(t)
	randomHistory(t, src, 11, 80)
	var lines []string
	for _, l := range strings.Split(string(exportOf(t, src)), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	for i, l := range lines {
		var in importReader
		var ie importEvent
		if !in.fastLine([]byte(l), &ie) {
			t.Fatalf("line %d of the export is not read the fast way: %s", i+1, l)
		}
	}
	alphabet := []byte(" \t\r\n\\\"{}[],:0123456789-+.eEtrufalsn=/aAzZ\x00\x1f\x7f\xc3\xa9\xff")
	rapid.Check(t, func(rt *rapid.T) {
		b := []byte(rapid.SampledFrom(lines).Draw(rt, "line"))
		for range rapid.IntRange(0, 3).Draw(rt, "edits") {
			at := rapid.IntRange(0, len(b)).Draw(rt, "at")
			c := rapid.SampledFrom(alphabet).Draw(rt, "byte")
			switch rapid.IntRange(0, 2).Draw(rt, "edit") {
			case 0:
				if at < len(b) {
					b[at] = c
				}
			case 1:
				b = slices.Insert(b, at, c)
			case 2:
				if at < len(b) {
					b = slices.Delete(b, at, at+1)
				}
			}
		}
		var in importReader
		got, gotErr := in.parseLine(b)
		want, wantErr := parseImportLine(b)
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
			rt.Fatalf("%q:\n got %+v, %v\nwant %+v, %v", b, got, gotErr, want, wantErr)
		}
	})
}

// TestSyncBehind: the syncer of a staged import syncs when kicked, takes
// any number of kicks, and stops whether or not it could open the file.
func TestSyncBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".none"} {
		s := syncBehind(p)
		for range 5 {
			s.kick()
		}
		s.stop()
	}
	if got := (importAt{line: 3}).String() + " " + (importAt{seq: 7}).String(); got != "line 3 seq 7" {
		t.Errorf("importAt = %q", got)
	}
}
