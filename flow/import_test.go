package flow

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// smallBatches makes an import of more than 3 events a staged one, in
// transactions of 3 events: what a file over importBatch events does.
var smallBatches = importLimits{line: maxImportLine, batch: 3, batchBytes: 1 << 20}

// randomHistory fills e with n commands of random kinds over three
// projects: tasks, moves, context merges and notes.
func randomHistory(tb testing.TB, e *Engine, seed uint64, n int) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	tasks := map[string]int{}
	for i := range n {
		p := fmt.Sprintf("p%d", rng.IntN(3))
		if _, err := e.Project(p); err != nil {
			if _, err := e.CreateProject(NewProject{Name: p}); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		id := fmt.Sprintf("T-%d", rng.IntN(tasks[p]+1))
		var err error
		switch k := rng.IntN(4); {
		case k == 0 || tasks[p] == 0:
			if _, err := e.AddTask(NewTask{Project: p, Title: fmt.Sprintf("task %d \"q\" é", i)}); err != nil {
				tb.Fatal(err)
			}
			tasks[p]++
			continue
		case k == 1:
			_, err = e.MoveTask(Move{Project: p, ID: id, To: []string{"doing", "blocked", "todo"}[rng.IntN(3)]})
		case k == 2:
			_, err = e.MergeContext(ContextPatch{Project: p, ID: id, Patch: fmt.Sprintf(`{"k%d": [%d, {"x": "y"}]}`, i%5, i)})
		default:
			_, err = e.AddNote(NewNote{Project: p, Task: id, Text: fmt.Sprintf("note %d\nline 2", i)})
		}
		if err != nil && ErrorCode(err) != CodeNotFound && ErrorCode(err) != CodeConflict && ErrorCode(err) != CodeInvalid {
			tb.Fatal(err)
		}
	}
}

func exportOf(tb testing.TB, e *Engine) []byte {
	tb.Helper()
	var out bytes.Buffer
	if _, err := e.Export(&out, 0); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// TestImport_Staged: an import of many transactions (a copy of the file
// renamed over it) reproduces random histories exactly: the same export,
// the same head (CheckHead of the source's), projections equal to a
// replay (Verify, on cleanup too).
func TestImport_Staged(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("Seed", seed), func(t *testing.T) {
			src := mustOpen(t)
			randomHistory(t, src, seed, 60)
			exported := exportOf(t, src)
			head, err := src.Verify()
			if err != nil {
				t.Fatal(err)
			}
			dst := mustOpen(t)
			res, err := dst.importWith(bytes.NewReader(exported), smallBatches)
			if n := bytes.Count(exported, []byte("\n")); err != nil || res != (ImportResult{Read: n, Appended: n}) {
				t.Fatalf("import = %+v, %v; want %d appended", res, err, n)
			}
			if got := exportOf(t, dst); !bytes.Equal(got, exported) {
				t.Errorf("the export of the import differs from the source's")
			}
			if err := dst.CheckHead(Head{Seq: head.HeadSeq, Hash: head.HeadHash}); err != nil {
				t.Errorf("CheckHead(source's head): %v", err)
			}
			if v, err := dst.Verify(); err != nil || v.Projections != "ok" {
				t.Errorf("Verify = %+v, %v", v, err)
			}
			again, err := dst.importWith(bytes.NewReader(exported), smallBatches)
			if err != nil || again.Skipped != again.Read || again.Appended != 0 {
				t.Errorf("second import = %+v, %v; want every event already present", again, err)
			}
			if left := stagedCopies(t, dst.Path()); len(left) > 0 {
				t.Errorf("copies left beside the file: %v", left)
			}
		})
	}
}

// TestImport_StagedOntoEvents: a staged import into a file with events of
// its own appends after them, and the file's earlier events stay.
func TestImport_StagedOntoEvents(t *testing.T) {
	src := mustOpen(t)
	randomHistory(t, src, 7, 30)
	dst := mustOpen(t)
	if _, err := dst.CreateProject(NewProject{Name: "mine"}); err != nil {
		t.Fatal(err)
	}
	var only bytes.Buffer
	if _, err := src.ExportProject(&only, "p2", 0); err != nil {
		t.Fatal(err)
	}
	before := collect(t, dst, Filter{})
	res, err := dst.importWith(bytes.NewReader(only.Bytes()), smallBatches)
	if err != nil || res.Appended != bytes.Count(only.Bytes(), []byte("\n")) {
		t.Fatalf("import = %+v, %v", res, err)
	}
	after := collect(t, dst, Filter{})
	if len(after) != len(before)+res.Appended || after[len(before)-1].Hash != before[len(before)-1].Hash {
		t.Errorf("%d events after, %d before + %d imported; the file's own must stay first", len(after), len(before), res.Appended)
	}
}

// TestImport_StagedBadLineLeavesFile: a bad line after several committed
// transactions of the copy leaves the file byte for byte as it was, and
// no copy beside it.
func TestImport_StagedBadLineLeavesFile(t *testing.T) {
	src := mustOpen(t)
	randomHistory(t, src, 3, 60)
	lines := strings.SplitAfter(string(exportOf(t, src)), "\n")
	bad := map[string]string{
		"Syntax":   "not json\n",
		"Conflict": strings.Replace(lines[len(lines)-2], `"version":`, `"version":9`, 1),
		"TooLong":  `{"x":"` + strings.Repeat("y", 5000) + `"}` + "\n",
	}
	for name, line := range bad {
		t.Run(name, func(t *testing.T) {
			dst := mustOpen(t)
			if _, err := dst.CreateProject(NewProject{Name: "mine"}); err != nil {
				t.Fatal(err)
			}
			path := dst.Path()
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			mid := len(lines) * 2 / 3
			in := strings.Join(slices.Concat(lines[:mid], []string{line}, lines[mid:]), "")
			lim := smallBatches
			lim.line = 4096
			_, err = dst.importWith(strings.NewReader(in), lim)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("line %d", mid+1)) {
				t.Fatalf("import = %v, want an error on line %d", err, mid+1)
			}
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
				t.Errorf("the file changed (%v)", err)
			}
			if left := stagedCopies(t, path); len(left) > 0 {
				t.Errorf("copies left beside the file: %v", left)
			}
			if n := len(collect(t, dst, Filter{})); n != 1 {
				t.Errorf("%d events, want the file's 1", n)
			}
		})
	}
}

// stagedCopies lists the files beside path that an import staged.
func stagedCopies(tb testing.TB, path string) []string {
	tb.Helper()
	m, err := filepath.Glob(path + stageSuffix + "*")
	if err != nil {
		tb.Fatal(err)
	}
	return m
}
