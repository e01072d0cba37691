package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/mcpserver"
	bolt "go.etcd.io/bbolt"
)

// damageFixture is a file with a record of every projection kind: plan
// P-1; tasks T-1 (done), T-2 (todo, waits for T-1), T-3 (claimed), T-4
// (todo, with the pending approval A-1); exec X-1; checkpoint C-1.
func damageFixture(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "p")
	for _, args := range [][]string{
		{"plan", "new", "first"},
		{"task", "add", "one"},
		{"task", "add", "two", "--dep", "T-1"},
		{"task", "add", "three"},
		{"task", "add", "four"},
		{"task", "start", "T-1"},
		{"task", "done", "T-1"},
		{"task", "claim", "T-3"},
		{"approval", "request", "--task", "T-4", "--message", "may I?"},
		{"exec", "record", `{"command":"go test","success":true}`},
		{"checkpoint", "--label", "c"},
	} {
		f.mustRun("", args...)
	}
	return f
}

// flipRecord flips the middle byte of the value stored under the first
// key of bucket that starts with prefix, opening the bbolt file directly.
func flipRecord(t *testing.T, path, bucket, prefix string) {
	t.Helper()
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			t.Fatalf("no bucket %s", bucket)
		}
		k, v := b.Cursor().Seek([]byte(prefix))
		if !bytes.HasPrefix(k, []byte(prefix)) {
			t.Fatalf("no key %q in %s", prefix, bucket)
		}
		if len(v) == 0 {
			t.Fatalf("%s %q: an empty value, which no checksum covers", bucket, k)
		}
		v = bytes.Clone(v)
		v[len(v)/2] ^= 0x01
		return b.Put(bytes.Clone(k), v)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestProjectionDamage_ExitCorrupt: a flipped byte in a projection record
// of any kind makes the commands that read it exit 7 with one line that
// names the record and says to run 'flowctl rebuild', in text and JSON,
// and print nothing on stdout; verify names the record too, and a rebuild
// repairs the file.
func TestProjectionDamage_ExitCorrupt(t *testing.T) {
	fixture := damageFixture(t)
	for _, tt := range []struct {
		name, bucket, prefix string
		reads                [][]string
	}{
		{"Project", "proj_project", "p", [][]string{{"task", "ls"}, {"status"}, {"ready"}, {"approval", "ls"}, {"task", "show", "T-1"}}},
		{"Task", "proj_task", "p/T-1", [][]string{{"task", "ls"}, {"task", "show", "T-1"}, {"ready", "--explain"}}},
		{"TodoTask", "proj_task", "p/T-2", [][]string{{"ready"}, {"status"}}},
		{"Plan", "proj_plan", "p/P-1", [][]string{{"plan", "ls"}, {"plan", "show", "P-1"}}},
		{"Approval", "proj_approval", "p/A-1", [][]string{{"approval", "ls"}, {"approval", "show", "A-1"}, {"status"}}},
		{"Exec", "proj_exec", "p/X-1", [][]string{{"exec", "ls"}, {"exec", "show", "X-1"}}},
		{"Checkpoint", "proj_checkpoint", "p/C-1", [][]string{{"checkpoint", "ls"}}},
		{"SummaryTodoList", "proj_summary", "sproj_task\x00p\x00todo\x00", [][]string{{"ready"}, {"status"}}},
		{"SummaryTaskCount", "proj_summary", "nproj_task\x00p\x00done", [][]string{{"status"}}},
		{"SummaryDepStatus", "proj_summary", "rproj_task\x00p/T-1", [][]string{{"ready"}, {"status"}}},
		{"SummaryClaim", "proj_summary", "lp\x00", [][]string{{"status"}}},
		{"SummaryPendingApproval", "proj_summary", "sproj_approval\x00p\x00pending\x00", [][]string{{"status"}}},
		{"SummaryPlanCount", "proj_summary", "nproj_plan\x00p\x00", [][]string{{"status"}}},
		{"SummaryExecCount", "proj_summary", "nproj_exec\x00p\x00", [][]string{{"status"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := copyFlowFile(t, fixture)
			flipRecord(t, f.path, tt.bucket, tt.prefix)
			for _, args := range tt.reads {
				stdout, stderr, code := f.run("", args...)
				wantError(t, stderr, code, 7, tt.bucket, "flowctl rebuild")
				if stdout != "" {
					t.Errorf("%v: stdout %q, want nothing", args, stdout)
				}
				stdout, stderr, code = f.run("", append(args, "-o", "json")...)
				if e := wantJSONError(t, stderr, code, 7, "corrupt"); !strings.Contains(e.Error.Hint, "flowctl rebuild") || stdout != "" {
					t.Errorf("%v -o json: hint %q, stdout %q; want the rebuild hint and nothing on stdout", args, e.Error.Hint, stdout)
				}
			}
			_, stderr, code := f.run("", "verify")
			wantError(t, stderr, code, 7, tt.bucket)
			f.mustRun("", "rebuild")
			for _, args := range tt.reads {
				f.mustRun("", args...)
			}
		})
	}
}

// copyFlowFile copies the file of src into a new directory, where the
// commands of the copy find it; the copy is verified on cleanup.
func copyFlowFile(t *testing.T, src *flowFile) *flowFile {
	t.Helper()
	dir := t.TempDir()
	rel, err := filepath.Rel(src.dir, src.path)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, src.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &flowFile{t: t, dir: dir, path: path}
	t.Cleanup(f.mustVerify)
	return f
}

// TestProjectionDamage_MCPHint: the MCP server's tool error of a damaged
// projection record carries the code corrupt and the rebuild hint too.
func TestProjectionDamage_MCPHint(t *testing.T) {
	te := mcpserver.Config{Classify: mcpClassify}.ToolError(fmt.Errorf("reading: %w", flow.ErrDamagedProjection))
	if te.Code != flow.CodeCorrupt || !strings.Contains(te.Hint, "flowctl rebuild") {
		t.Fatalf("tool error %+v, want code corrupt and the rebuild hint", te)
	}
}
