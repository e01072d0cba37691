package reliability

// Corruption suite (issue 6 item 4, DESIGN.md §12): a flipped byte in any
// record is found by Verify with the record's seq; a record rewritten with
// a recomputed CRC (and hash) is caught by the hash chain; random page
// overwrites, random bytes and an empty file make `flowctl verify` exit 7
// with one error line (and its hint), never panic or hang.
//
// FLOWCTL_CORRUPT_SEEDS sets the number of page-overwrite seeds (default
// 150) for a longer soak.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	bolt "go.etcd.io/bbolt"
)

// corruptRecords is the number of records of the flip test's file.
const corruptRecords = 1000

// corruptCLITimeout bounds one flowctl run; past it the run is a hang.
const corruptCLITimeout = 20 * time.Second

// corruptBuildCLI builds cmd/flowctl with `go build` into a temporary
// directory and returns the binary's path.
func corruptBuildCLI(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "flowctl")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/flowctl")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/flowctl: %v\n%s", err, out)
	}
	return bin
}

// corruptResult is one flowctl run.
type corruptResult struct {
	stdout, stderr string
	code           int
}

// corruptRun runs the flowctl binary in dir with a timeout; a run past the
// timeout fails the test as a hang.
func corruptRun(t testing.TB, bin, dir string, args ...string) corruptResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), corruptCLITimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"FLOW_ACTOR=tester", "PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("flowctl %v: no answer after %v (hang); stderr %q", args, corruptCLITimeout, errOut.String())
	}
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("flowctl %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return corruptResult{out.String(), errOut.String(), code}
}

// corruptCrashed reports whether stderr shows a Go runtime crash or an
// unrecovered panic (a recovered one reported as corruption is fine).
func corruptCrashed(stderr string) bool {
	for _, line := range strings.Split(stderr, "\n") {
		for _, p := range []string{"panic: ", "fatal error: ", "unexpected fault address", "goroutine ", "[signal "} {
			if strings.HasPrefix(line, p) {
				return true
			}
		}
	}
	return false
}

// corruptOneLine reports whether s is one error: a non-empty line, and
// at most a second line with its hint.
func corruptOneLine(s string) bool {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[0] != "" && (len(lines) == 1 || len(lines) == 2 && strings.HasPrefix(lines[1], "hint: "))
}

// corruptBuildLog writes a log of n records in one transaction (so that no
// stale copy of a record lingers on a freed page) and returns its path.
func corruptBuildLog(t testing.TB, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log.db")
	l, err := eventlog.Open(path, eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = l.Update(func(tx *eventlog.Tx) error {
		for i := 1; i <= n; i++ {
			ev := eventlog.Event{
				Type:    "test.marked",
				Actor:   "tester",
				Project: "p" + strconv.Itoa(i%3),
				Data:    []byte(fmt.Sprintf("payload-marker-%06d", i)),
			}
			if _, err := tx.Append("s/"+strconv.Itoa(i%17), eventlog.Any, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// corruptRecordOffsets returns, for each seq 1..n, the file offset and
// length of the record's stored bytes, found by reading each value through
// bbolt read-only and locating it (exactly once) in the file.
func corruptRecordOffsets(t testing.TB, path string, n int) (offs []int64, lens []int) {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	offs, lens = make([]int64, n+1), make([]int, n+1)
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("log"))
		if b == nil {
			return errors.New("no log bucket")
		}
		for seq := 1; seq <= n; seq++ {
			v := b.Get(binary.BigEndian.AppendUint64(nil, uint64(seq)))
			if v == nil {
				return fmt.Errorf("seq %d: no record", seq)
			}
			i := bytes.Index(file, v)
			if i < 0 || bytes.Contains(file[i+1:], v) {
				return fmt.Errorf("seq %d: record found %d times in the file, want once", seq, bytes.Count(file, v))
			}
			offs[seq], lens[seq] = int64(i), len(v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return offs, lens
}

// corruptVerify opens path read-only and runs Verify.
func corruptVerify(path string) error {
	l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer l.Close()
	_, err = l.Verify()
	return err
}

// corruptWantSeq fails unless err is a *CorruptionError for seq.
func corruptWantSeq(t testing.TB, what string, err error, seq uint64) {
	t.Helper()
	var ce *eventlog.CorruptionError
	if !errors.As(err, &ce) {
		t.Fatalf("%s: Verify returned %v, want a *CorruptionError at seq %d", what, err, seq)
	}
	if ce.Seq != seq {
		t.Fatalf("%s: Verify names seq %d, want %d (%v)", what, ce.Seq, seq, err)
	}
}

func TestVerifyNamesSeqOfFlippedByteInEachOf1000Records(t *testing.T) {
	path := corruptBuildLog(t, corruptRecords)
	offs, lens := corruptRecordOffsets(t, path, corruptRecords)
	if err := corruptVerify(path); err != nil {
		t.Fatalf("clean file: %v", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(6, 4))
	start := time.Now()
	for seq := 1; seq <= corruptRecords; seq++ {
		at := offs[seq] + int64(rng.IntN(lens[seq]))
		var orig [1]byte
		if _, err := f.ReadAt(orig[:], at); err != nil {
			t.Fatal(err)
		}
		bad := orig[0] ^ byte(1+rng.IntN(255))
		if _, err := f.WriteAt([]byte{bad}, at); err != nil {
			t.Fatal(err)
		}
		err := corruptVerify(path)
		corruptWantSeq(t, fmt.Sprintf("seq %d, byte %d of %d flipped %02x->%02x", seq, at-offs[seq], lens[seq], orig[0], bad), err, uint64(seq))
		if _, err := f.WriteAt(orig[:], at); err != nil { // restore for the next record
			t.Fatal(err)
		}
	}
	t.Logf("%d records, one flipped byte each, all detected with the right seq in %v", corruptRecords, time.Since(start))
	if err := corruptVerify(path); err != nil {
		t.Fatalf("restored file: %v", err)
	}
}

// corruptRewrite changes the actor "tester" to "hacker" in the record of
// seq, at offs[seq] (length lens[seq]), then recomputes the CRC and, with
// rehash, the record's own hash: a forger who knows the format (file
// format 2: the CRC covers the seq, 8 bytes big-endian, then the record;
// the hash is over the previous record's hash and the format-1 bytes,
// an array of 15 with the seq first and the previous hash last).
func corruptRewrite(t testing.TB, path string, seq int, offs []int64, lens []int, rehash bool) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	read := func(seq int) []byte {
		rec := make([]byte, lens[seq])
		if _, err := f.ReadAt(rec, offs[seq]); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	rec, n := read(seq), lens[seq]
	i := bytes.Index(rec, []byte("\xa6tester"))
	if i < 0 {
		t.Fatalf("actor not found in record")
	}
	copy(rec[i+1:], "hacker")
	env := rec[:n-4]
	const hashField = 34 // bin8 header and 32 bytes, always last
	if rehash {
		prev := make([]byte, 32)
		if seq > 1 {
			p := read(seq - 1)
			prev = p[len(p)-4-32 : len(p)-4]
		}
		body := env[:len(env)-hashField]
		h := sha256.New()
		h.Write(prev)
		h.Write([]byte{0x9f, byte(seq)}) // seq < 128: a positive fixint
		h.Write(body[1:])
		h.Write([]byte{0xc4, 0x20})
		h.Write(prev)
		copy(env[len(env)-32:], h.Sum(nil))
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	crc := crc32.Update(crc32.Checksum(binary.BigEndian.AppendUint64(nil, uint64(seq)), castagnoli), castagnoli, env)
	binary.BigEndian.PutUint32(rec[n-4:], crc)
	if _, err := f.WriteAt(rec, offs[seq]); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyCatchesRecordRewrittenWithRecomputedCRCByHashChain(t *testing.T) {
	const n = 50
	for _, tc := range []struct {
		seq    int
		rehash bool
		want   uint64 // seq Verify must name
		reason string
	}{
		{1, false, 1, "hash does not match"},
		{25, false, 25, "hash does not match"},
		{n, false, n, "hash does not match"},
		// The record's own hash recomputed too: the next record's prev
		// hash no longer matches, or, for the last, meta's head.
		{1, true, 2, "hash chain"},
		{25, true, 26, "hash chain"},
		{n, true, n, "meta head"},
	} {
		t.Run(fmt.Sprintf("seq%d/rehash=%v", tc.seq, tc.rehash), func(t *testing.T) {
			path := corruptBuildLog(t, n)
			offs, lens := corruptRecordOffsets(t, path, n)
			corruptRewrite(t, path, tc.seq, offs, lens, tc.rehash)
			err := corruptVerify(path)
			corruptWantSeq(t, "rewritten record", err, tc.want)
			if !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("Verify: %v, want the reason to say %q", err, tc.reason)
			}
		})
	}
}

// corruptSeeds is the number of page-overwrite seeds, FLOWCTL_CORRUPT_SEEDS
// or 150.
func corruptSeeds(t testing.TB) int {
	if s := os.Getenv("FLOWCTL_CORRUPT_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("FLOWCTL_CORRUPT_SEEDS=%q: want a positive number", s)
		}
		return n
	}
	return 150
}

// corruptPageTypes returns the bbolt page type of every page of path
// ("meta", "leaf", "branch", "freelist", "free", ...).
func corruptPageTypes(t testing.TB, path string) []string {
	t.Helper()
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true, PreLoadFreelist: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var types []string
	err = db.View(func(tx *bolt.Tx) error {
		for id := 0; ; id++ {
			p, err := tx.Page(id)
			if err != nil {
				return err
			}
			if p == nil {
				return nil
			}
			types = append(types, p.Type)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return types
}

// corruptFlowFile makes a flow file with the CLI: a project, tasks,
// context merges and steps, enough for a few dozen pages.
func corruptFlowFile(t testing.TB, bin string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "flow.db")
	mustOK := func(args ...string) {
		t.Helper()
		r := corruptRun(t, bin, dir, append(args, "--db", path)...)
		if r.code != 0 {
			t.Fatalf("flowctl %v: exit %d: %s", args, r.code, r.stderr)
		}
	}
	mustOK("init", "--project", "corrupt")
	for i := 1; i <= 40; i++ {
		mustOK("task", "add", fmt.Sprintf("task %d %s", i, strings.Repeat("x", 200)))
		mustOK("ctx", "merge", fmt.Sprintf("T-%d", i), fmt.Sprintf(`{"k%d":"%s"}`, i, strings.Repeat("v", 300)))
	}
	return dir, path
}

func TestVerifyCLIOnRandomPageOverwritesExits7NeverPanicsOrHangs(t *testing.T) {
	bin := corruptBuildCLI(t)
	dir, path := corruptFlowFile(t, bin)
	if r := corruptRun(t, bin, dir, "verify", "--db", path); r.code != 0 {
		t.Fatalf("clean file: verify exit %d: %s", r.code, r.stderr)
	}
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	types := corruptPageTypes(t, path)
	pages := len(orig) / page
	if pages < 8 {
		t.Fatalf("file has %d pages, want a bigger one", pages)
	}
	seeds := corruptSeeds(t)
	work := filepath.Join(t.TempDir(), "flow.db")
	counts := map[string]int{}
	start := time.Now()
	for seed := 1; seed <= seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		id := rng.IntN(pages)
		buf := bytes.Clone(orig)
		for i := id * page; i < (id+1)*page; i++ {
			buf[i] = byte(rng.Uint32())
		}
		if err := os.WriteFile(work, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		typ := "past the high water mark"
		if id < len(types) {
			typ = types[id]
		}
		r := corruptRun(t, bin, dir, "verify", "--db", work)
		what := fmt.Sprintf("seed %d, page %d (%s) of %d overwritten: flowctl verify", seed, id, typ, pages)
		switch {
		case corruptCrashed(r.stderr):
			t.Fatalf("%s crashed: exit %d, stderr:\n%s", what, r.code, r.stderr)
		case r.code == 7:
			if !corruptOneLine(r.stderr) {
				t.Fatalf("%s: exit 7 with stderr %q, want one line", what, r.stderr)
			}
		case r.code == 0:
			// Fine only for a page nothing uses, or one of bbolt's two
			// meta pages (it falls back to the other one).
			if typ != "free" && typ != "meta" && id < len(types) {
				t.Fatalf("%s: exit 0, the damage to a %s page went undetected", what, typ)
			}
		default:
			t.Fatalf("%s: exit %d, want 7 (or 0 for a free page); stderr %q", what, r.code, r.stderr)
		}
		counts[fmt.Sprintf("%s/exit %d", typ, r.code)]++
	}
	t.Logf("%d seeds over %d pages in %v: %v", seeds, pages, time.Since(start), counts)
}

func TestVerifyCLIRefusesRandomBytesAndEmptyFileInOneLine(t *testing.T) {
	bin := corruptBuildCLI(t)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	for name, content := range map[string][]byte{
		"empty":       nil,
		"random-64k":  random,
		"random-100b": random[:100],
		"random-4k":   random[:4096],
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".db")
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"verify"}, {"task", "ls"}, {"log"}} {
				r := corruptRun(t, bin, dir, append(args, "--db", path)...)
				if r.code != 7 || corruptCrashed(r.stderr) || !corruptOneLine(r.stderr) {
					t.Fatalf("flowctl %v on %s: exit %d, stderr %q; want exit 7 and one line", args, name, r.code, r.stderr)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(after, content) {
				t.Fatalf("%s changed by the refused commands (err %v)", name, err)
			}
		})
	}
}
