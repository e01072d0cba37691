package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

func TestCompact(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := mustInit(t, "--project", "p")
		eng, err := flow.Open(f.path, flow.Options{Actor: "bulk", NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range 300 {
			// Random hex: the projections compress a repeated text to nothing.
			desc := make([]byte, 1000)
			for j := range desc {
				desc[j] = byte(rng.Uint32())
			}
			_, err := eng.AddTask(flow.NewTask{Project: "p", Title: fmt.Sprint("task ", i), Description: hex.EncodeToString(desc)})
			if err != nil {
				t.Fatal(err)
			}
		}
		for range 2 { // each frees the pages of the projections before it
			if _, err := eng.Rebuild(); err != nil {
				t.Fatal(err)
			}
		}
		if err := eng.Close(); err != nil {
			t.Fatal(err)
		}
		export := f.mustRun("", "export")
		tasks := f.mustRun("", "task", "ls", "-o", "json")
		before := fileSize(t, f.path)

		out := f.mustRun("", "compact", "-o", "json")
		var rep struct {
			Path        string `json:"path"`
			BeforeBytes int64  `json:"before_bytes"`
			AfterBytes  int64  `json:"after_bytes"`
			HeadSeq     uint64 `json:"head_seq"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("compact -o json: %v in %q", err, out)
		}
		after := fileSize(t, f.path)
		if rep.BeforeBytes != before || rep.AfterBytes != after || after >= before || rep.HeadSeq == 0 || rep.Path != f.path {
			t.Fatalf("compact reported %+v; the file went from %d to %d bytes", rep, before, after)
		}
		if got := f.mustRun("", "export"); got != export {
			t.Error("export differs after compact")
		}
		if got := f.mustRun("", "task", "ls", "-o", "json"); got != tasks {
			t.Error("task ls differs after compact")
		}
		entries, _ := os.ReadDir(filepath.Dir(f.path))
		for _, e := range entries {
			if e.Name() != filepath.Base(f.path) && e.Name() != "current" {
				t.Errorf("compact left %s beside the file", e.Name())
			}
		}
		f.mustRun("", "task", "add", "after compact")
		if text := f.mustRun("", "compact"); !strings.Contains(text, "compacted") || !strings.Contains(text, "verified") {
			t.Errorf("compact said %q", text)
		}
	})

	t.Run("ErrBusy", func(t *testing.T) {
		f := mustInit(t, "--project", "p")
		f.mustRun("", "task", "add", "one")
		eng, err := flow.Open(f.path, flow.Options{Actor: "holder", NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close()
		if _, err := eng.Task("p", "T-1"); err != nil { // the engine holds the file now
			t.Fatal(err)
		}
		before := f.bytes()
		_, stderr, code := f.run("", "compact", "--lock-timeout", "100ms")
		wantError(t, stderr, code, 5, "locked")
		if string(f.bytes()) != string(before) {
			t.Fatal("a refused compact changed the file")
		}
	})

	t.Run("ErrNotExist", func(t *testing.T) {
		dir := t.TempDir()
		_, stderr, code := runCLI(t, dir, "", "compact", "--db", filepath.Join(dir, "none.db"))
		wantError(t, stderr, code, 3, "flowctl init")
	})
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
