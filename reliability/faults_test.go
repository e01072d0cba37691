package reliability

// Resource faults (issue 6 item 6): a full disk and a read-only file
// system. Writes fail with a clear one-line error and leave no partial
// state; reads still work. Both need mount(2) (root, as in CI); without
// it they skip, naming the missing capability.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// faultMountTmpfs mounts a tmpfs of the given size (e.g. "1m") on a fresh
// directory and unmounts it on cleanup. It skips the test when the OS does
// not let this process mount.
func faultMountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs not permitted here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// faultMustOK runs flowctl and fails the test unless it exits 0.
func faultMustOK(t *testing.T, bin, dir string, args ...string) corruptResult {
	t.Helper()
	r := corruptRun(t, bin, dir, args...)
	if r.code != 0 {
		t.Fatalf("flowctl %v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	return r
}

// faultWriteFailed fails the test unless r is a clean refusal: nonzero,
// not a crash, one line on stderr.
func faultWriteFailed(t *testing.T, what string, r corruptResult) {
	t.Helper()
	if r.code == 0 || corruptCrashed(r.stderr) || !corruptOneLine(r.stderr) {
		t.Fatalf("%s: exit %d, stderr %q; want a nonzero exit and a one-line error", what, r.code, r.stderr)
	}
}

func TestFullDiskFailsWriteInOneLineAndKeepsEveryAcknowledgedEvent(t *testing.T) {
	bin := corruptBuildCLI(t)
	mnt := faultMountTmpfs(t, "1m")
	db := filepath.Join(mnt, "flow.db")
	faultMustOK(t, bin, mnt, "init", "--project", "full", "--db", db)
	faultMustOK(t, bin, mnt, "task", "add", "holder", "--db", db)
	var before struct {
		HeadSeq uint64 `json:"head_seq"`
	}
	if err := json.Unmarshal([]byte(faultMustOK(t, bin, mnt, "verify", "-o", "json", "--db", db).stdout), &before); err != nil {
		t.Fatal(err)
	}
	headSeq := before.HeadSeq
	pad := strings.Repeat("x", 16<<10)
	var acked []string // context keys whose merge exited 0
	var failed *corruptResult
	for i := 1; i <= 400 && failed == nil; i++ {
		key := fmt.Sprintf("k%03d", i)
		r := corruptRun(t, bin, mnt, "ctx", "merge", "T-1", fmt.Sprintf(`{"%s":"%s"}`, key, pad), "--db", db)
		if r.code == 0 {
			acked = append(acked, key)
			continue
		}
		failed = &r
	}
	if failed == nil {
		t.Fatalf("400 merges of 16 KiB fit in a 1 MiB tmpfs: the disk never filled")
	}
	faultWriteFailed(t, "ctx merge on a full disk", *failed)
	t.Logf("disk full after %d acknowledged merges: exit %d, %s", len(acked), failed.code, strings.TrimSpace(failed.stderr))
	// A few more tries: each must either succeed (then it counts) or fail cleanly.
	for i := 0; i < 3; i++ {
		key := fmt.Sprintf("late%d", i)
		r := corruptRun(t, bin, mnt, "ctx", "merge", "T-1", fmt.Sprintf(`{"%s":"%s"}`, key, pad), "--db", db)
		if r.code == 0 {
			acked = append(acked, key)
		} else {
			faultWriteFailed(t, "ctx merge on a full disk, again", r)
		}
	}
	// compact needs room for a copy: on the full disk it must fail in one
	// line and leave the file as it was, with no copy beside it.
	full, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	faultWriteFailed(t, "compact on a full disk", corruptRun(t, bin, mnt, "compact", "--db", db))
	if after, _ := os.ReadFile(db); !bytes.Equal(after, full) {
		t.Fatal("a failed compact changed the file")
	}
	// Beside the log: only the selection init --project wrote (current).
	if entries, _ := os.ReadDir(mnt); len(entries) != 2 || entries[0].Name() != "current" {
		t.Fatalf("a failed compact left files beside the log: %v", entries)
	}
	r := faultMustOK(t, bin, mnt, "verify", "--db", db)
	// Before the merges the file held headSeq events; each acknowledged
	// merge adds exactly one, a refused one none.
	var rep struct {
		HeadSeq uint64 `json:"head_seq"`
	}
	if err := json.Unmarshal([]byte(faultMustOK(t, bin, mnt, "verify", "-o", "json", "--db", db).stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if want := headSeq + uint64(len(acked)); rep.HeadSeq != want {
		t.Fatalf("after the full disk the log holds %d events, want %d (%d before + %d acknowledged merges): partial state", rep.HeadSeq, want, headSeq, len(acked))
	}
	ctx := faultMustOK(t, bin, mnt, "ctx", "get", "T-1", "-o", "json", "--db", db).stdout
	for _, k := range acked {
		if !strings.Contains(ctx, `"`+k+`"`) {
			t.Fatalf("acknowledged merge %s is missing from the context after the disk filled", k)
		}
	}
	if strings.Contains(ctx, fmt.Sprintf(`"k%03d"`, len(acked)+1)) {
		t.Fatalf("the refused merge k%03d is in the context (partial state)", len(acked)+1)
	}
	t.Logf("verify after the full disk: %s", strings.TrimSpace(r.stdout))
}

func TestReadOnlyFilesystemRefusesWritesAndServesReads(t *testing.T) {
	bin := corruptBuildCLI(t)
	mnt := faultMountTmpfs(t, "4m")
	db := filepath.Join(mnt, "flow.db")
	faultMustOK(t, bin, mnt, "init", "--project", "ro", "--db", db)
	faultMustOK(t, bin, mnt, "task", "add", "written before", "--db", db)
	faultMustOK(t, bin, mnt, "ctx", "merge", "T-1", `{"branch":"ro"}`, "--db", db)
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Skipf("remount read-only not permitted here: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("mount", "-o", "remount,rw", mnt).Run() })

	for _, args := range [][]string{
		{"task", "add", "written after"},
		{"ctx", "merge", "T-1", `{"branch":"after"}`},
		{"task", "start", "T-1"},
	} {
		r := corruptRun(t, bin, mnt, append(args, "--db", db)...)
		faultWriteFailed(t, fmt.Sprintf("flowctl %v on a read-only file system", args), r)
		if !strings.Contains(strings.ToLower(r.stderr), "read-only") {
			t.Errorf("flowctl %v: error %q does not say the file system is read-only", args, r.stderr)
		}
	}
	ls := faultMustOK(t, bin, mnt, "task", "ls", "--db", db)
	if !strings.Contains(ls.stdout, "written before") || strings.Contains(ls.stdout, "written after") {
		t.Fatalf("task ls on a read-only file system: %q", ls.stdout)
	}
	if r := faultMustOK(t, bin, mnt, "log", "--db", db); !strings.Contains(r.stdout, "task") {
		t.Fatalf("log on a read-only file system: %q", r.stdout)
	}
	faultMustOK(t, bin, mnt, "verify", "--db", db)
	if r := faultMustOK(t, bin, mnt, "ctx", "get", "T-1", "--db", db); !strings.Contains(r.stdout, "ro") {
		t.Fatalf("ctx get on a read-only file system: %q", r.stdout)
	}
	after, err := os.ReadFile(db)
	if err != nil || string(after) != string(before) {
		t.Fatalf("the file changed on a read-only file system (err %v)", err)
	}
}
