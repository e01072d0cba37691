package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The power-loss stand-in: flowctl writes to a file on a loop-mounted ext4
// image; right after a writer is SIGKILLed, the image file is copied. The
// copy holds what reached the block device — what fsync made durable —
// and not what still sat in the mounted file system's page cache. The
// copy is then mounted (ext4 replays its journal) and checked.

// plImageSize is the size of each ext4 image.
const plImageSize = 16 << 20

// plCheck skips the test where the machine cannot loop-mount (not root,
// no loop devices, no mkfs.ext4): an OS capability, not a missing feature.
func plCheck(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to loop-mount an ext4 image")
	}
	for _, tool := range []string{"mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	dir := t.TempDir()
	if err := plMount(t, plImage(t, dir), filepath.Join(dir, "m")); err != nil {
		t.Skipf("cannot loop-mount an ext4 image here: %v", err)
	}
}

// plImage makes an empty ext4 image in dir.
func plImage(t *testing.T, dir string) string {
	t.Helper()
	img := filepath.Join(dir, "img.ext4")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, plImageSize); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	return img
}

// plMount loop-mounts img at dir and unmounts it on cleanup (a cycle
// unmounts its own as it ends: a run of 100 cycles then holds two mounts
// at a time, not 200, and a run killed mid-way leaves no more behind).
func plMount(t *testing.T, img, dir string) error {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("mount: %v: %s", err, out)
	}
	t.Cleanup(func() { plUnmount(dir) })
	return nil
}

// plUnmount unmounts dir; one already unmounted is no error.
func plUnmount(dir string) { _ = exec.Command("umount", dir).Run() }

// plRun runs bin with args in dir and returns its exit code (-1 when
// killed). killAfter > 0 sends SIGKILL that long after the start.
func plRun(t *testing.T, bin, dir string, killAfter time.Duration, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"FLOW_ACTOR=tester", "PATH=" + os.Getenv("PATH")}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if killAfter > 0 {
		timer := time.AfterFunc(killAfter, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	deadline := time.AfterFunc(commandDeadline, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
	defer deadline.Stop()
	_ = cmd.Wait()
	return out.String(), cmd.ProcessState.ExitCode()
}

// plCopy copies the image file as it is on the host right now.
func plCopy(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
}

// plCycle writes through bin on a fresh image, kills a writer mid-write,
// copies the image, and returns what of the acknowledged work the copy
// lost (checked with the real flowctl binary).
func plCycle(t *testing.T, bin string, rng *rand.Rand) []string {
	dir := t.TempDir()
	img, mnt := plImage(t, dir), filepath.Join(dir, "m")
	if err := plMount(t, img, mnt); err != nil {
		t.Fatal(err)
	}
	defer plUnmount(mnt)
	var acked []string
	if _, code := plRun(t, bin, mnt, 0, "init", "--project", "p", "-q"); code == 0 {
		acked = append(acked, "(the file)")
	}
	for j := range 3 + rng.IntN(6) {
		title := fmt.Sprintf("t%d", j)
		if _, code := plRun(t, bin, mnt, 0, "task", "add", title, "--project", "p", "-q"); code == 0 {
			acked = append(acked, title)
		}
	}
	plRun(t, bin, mnt, time.Duration(rng.IntN(3000))*time.Microsecond, "task", "add", "in flight", "--project", "p", "-q")
	cp := filepath.Join(dir, "copy.ext4")
	plCopy(t, img, cp)
	after := filepath.Join(dir, "after")
	if err := plMount(t, cp, after); err != nil {
		t.Fatal(err)
	}
	defer plUnmount(after)
	db := filepath.Join(after, ".flow", "flow.db")
	if _, code := plRun(t, flowctlBin, after, 0, "verify", "--db", db, "-q"); code != 0 {
		return acked // the copy has no usable file: everything acknowledged is lost
	}
	out, code := plRun(t, flowctlBin, after, 0, "task", "ls", "--db", db, "--project", "p", "-o", "json")
	if code != 0 {
		return acked
	}
	var tasks []struct{ Title string }
	if err := json.Unmarshal([]byte(out), &tasks); err != nil {
		t.Fatalf("task ls -o json: %v: %s", err, out)
	}
	present := map[string]bool{"(the file)": true}
	for _, tk := range tasks {
		present[tk.Title] = true
	}
	var lost []string
	for _, a := range acked {
		if !present[a] {
			lost = append(lost, a)
		}
	}
	return lost
}

func TestPowerLoss_AcknowledgedWritesSurviveAnImageCopy(t *testing.T) {
	plCheck(t)
	cycles := envInt(t, "FLOW_POWERLOSS_CYCLES", 100)
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	t.Logf("seed %d, %d cycles", seed, cycles)
	for i := range cycles {
		if lost := plCycle(t, flowctlBin, rng); len(lost) > 0 {
			t.Fatalf("cycle %d: the image copied after SIGKILL lost acknowledged writes: %s", i, strings.Join(lost, ", "))
		}
	}
}

// TestPowerLoss_WithoutFsyncLosesData shows the test above can fail: the
// same harness against a build with fsync turned off (build tag
// flowctl_nosync) loses acknowledged writes.
func TestPowerLoss_WithoutFsyncLosesData(t *testing.T) {
	plCheck(t)
	bin := filepath.Join(t.TempDir(), "flowctl-nosync")
	build := exec.Command("go", "build", "-tags", "flowctl_nosync", "-o", bin, "github.com/flowctl/flowctl/cmd/flowctl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building without fsync: %v: %s", err, out)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		if lost := plCycle(t, bin, rng); len(lost) > 0 {
			t.Logf("cycle %d: a build without fsync lost %s, as it must", i, strings.Join(lost, ", "))
			return
		}
	}
	t.Fatal("a build without fsync lost nothing in 20 cycles: the power-loss test could not tell")
}
