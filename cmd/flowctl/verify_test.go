package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"testing"
)

// verifyHead runs verify and returns the HASH@SEQ it printed.
func verifyHead(t testing.TB, f *flowFile) string {
	t.Helper()
	stdout := f.mustRun("", "verify", "--db", f.path)
	for _, line := range strings.Split(stdout, "\n") {
		if head, ok := strings.CutPrefix(line, "head "); ok {
			return head
		}
	}
	t.Fatalf("verify printed no head line:\n%s", stdout)
	return ""
}

func TestVerify(t *testing.T) {
	t.Parallel()
	f := fixtureFile(t)
	evs := f.logEvents()
	last := evs[len(evs)-1]

	t.Run("PrintsHead", func(t *testing.T) {
		stdout, stderr, code := f.run("", "verify")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		want := fmt.Sprintf("ok: 6 events in 4 streams, 2 projects\nhead %s@6\n", last.Hash)
		if stdout != want {
			t.Errorf("stdout = %q, want %q", stdout, want)
		}
	})

	t.Run("JSON", func(t *testing.T) {
		var got verifyResult
		if err := json.Unmarshal([]byte(f.mustRun("", "verify", "-o", "json")), &got); err != nil {
			t.Fatal(err)
		}
		if !got.OK || got.HeadSeq != 6 || got.HeadHash != last.Hash || got.Streams != 4 || got.Projects != 2 {
			t.Errorf("verify -o json = %+v, want ok, head %s@6, 4 streams, 2 projects", got, last.Hash)
		}
	})

	t.Run("EmptyFile", func(t *testing.T) {
		t.Parallel()
		e := mustInit(t)
		if got, want := verifyHead(t, e), strings.Repeat("0", 64)+"@0"; got != want {
			t.Errorf("head of an empty file = %s, want %s", got, want)
		}
	})

	head := verifyHead(t, f)
	for _, tt := range []struct{ name, expect string }{
		{"ExpectPrintedHead", head},
		{"ExpectHashPrefix", last.Hash[:8] + "@6"},
		{"ExpectUpperCaseHash", strings.ToUpper(last.Hash) + "@6"},
		{"ExpectEarlierPoint", evs[2].Hash + "@3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := f.run("", "verify", "--expect-head", tt.expect)
			if code != 0 {
				t.Fatalf("--expect-head %s: exit %d, stderr %q", tt.expect, code, stderr)
			}
			if !strings.Contains(stdout, "expected head "+tt.expect+" is still in the log") {
				t.Errorf("stdout = %q, want it to confirm the expected head", stdout)
			}
		})
	}

	for _, tt := range []struct{ name, expect, fact string }{
		{"WrongHash", strings.Repeat("0", 64) + "@6", "seq 6"},
		{"WrongHashPrefix", "deadbeef@6", "seq 6"},
		{"HashOfAnotherSeq", last.Hash + "@5", "seq 5"},
		{"SeqPastHead", last.Hash + "@7", "seq 7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := f.run("", "verify", "--expect-head", tt.expect)
			wantError(t, stderr, code, 7, tt.fact)
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing on failure", stdout)
			}
		})
	}

	t.Run("WrongHeadJSON", func(t *testing.T) {
		_, stderr, code := f.run("", "verify", "-o", "json", "--expect-head", "deadbeef@6")
		wantJSONError(t, stderr, code, 7, "corrupt")
	})

	for _, bad := range []string{"nonsense", "@6", last.Hash, last.Hash + "@", last.Hash + "@0", last.Hash + "@x",
		"abc@6", "zzzzzzzz@6", last.Hash + "00@6", last.Hash[:8] + "@-1"} {
		t.Run("Malformed/"+bad, func(t *testing.T) {
			_, stderr, code := f.run("", "verify", "--expect-head", bad)
			wantError(t, stderr, code, 2, fmt.Sprintf("%q", bad))
		})
	}

	t.Run("MalformedWithoutFile", func(t *testing.T) {
		// A malformed value is reported before the file is looked for.
		_, stderr, code := runCLI(t, t.TempDir(), "", "verify", "--expect-head", "nonsense")
		wantError(t, stderr, code, 2, "nonsense")
	})
}

// TestVerify_HeadSurvivesAppends: a noted head stays provable as the log grows.
func TestVerify_HeadSurvivesAppends(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "one")
	head := verifyHead(t, f)
	f.mustRun("", "init", "--project", "two")
	f.mustRun("", "init", "--project", "three")
	if _, stderr, code := f.run("", "verify", "--expect-head", head); code != 0 {
		t.Errorf("--expect-head %s after two more appends: exit %d, stderr %q", head, code, stderr)
	}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordCRC is the CRC32C a format-2 record env stored under seq ends with.
func recordCRC(seq uint64, env []byte) uint32 {
	return crc32.Update(crc32.Checksum(binary.BigEndian.AppendUint64(nil, seq), castagnoli), castagnoli, env)
}

// damagedFile makes a file of three projects and returns it with the log
// entries of its events; the middle one (seq 2) is the one to damage.
func damagedFile(t *testing.T) (*flowFile, []event) {
	t.Helper()
	f := mustInit(t, "--project", "first")
	f.mustRun("", "init", "--project", "target-7f3a91")
	f.mustRun("", "init", "--project", "third")
	evs := f.logEvents()
	if len(evs) != 3 || evs[1].Project != "target-7f3a91" {
		t.Fatalf("log = %+v, want 3 events with target-7f3a91 at seq 2", evs)
	}
	f.markCorrupted()
	return f, evs
}

// records finds the stored bytes of ev in the file: every copy (bbolt is
// copy-on-write, so freed pages may hold older copies of the page). A
// record (file format 2) is a msgpack array of 13 (0x9d), the id as bin8
// of 16 bytes, ..., the hash as bin8 of 32 bytes, then a 4-byte CRC32C
// of the seq (8 bytes big-endian) and the array (recordCRC).
func records(t *testing.T, file []byte, ev event) [][2]int {
	t.Helper()
	if ev.Seq > 127 {
		t.Fatalf("seq %d is not a msgpack positive fixint", ev.Seq)
	}
	id, err := hex.DecodeString(strings.ReplaceAll(ev.ID, "-", ""))
	if err != nil {
		t.Fatal(err)
	}
	hash, err := hex.DecodeString(ev.Hash)
	if err != nil {
		t.Fatal(err)
	}
	head := append([]byte{0x9d, 0xc4, 0x10}, id...)
	tail := append([]byte{0xc4, 0x20}, hash...)
	var out [][2]int
	for off := 0; ; {
		i := bytes.Index(file[off:], head)
		if i < 0 {
			break
		}
		start := off + i
		j := bytes.Index(file[start:], tail)
		if j < 0 || j > 4096 {
			t.Fatalf("record of seq %d at offset %d has no hash field after it", ev.Seq, start)
		}
		end := start + j + len(tail) + 4
		out = append(out, [2]int{start, end})
		off = end
	}
	if len(out) == 0 {
		t.Fatalf("record of seq %d not found in the file", ev.Seq)
	}
	return out
}

// payloadOffset returns where, inside rec, the project name stored in the
// payload {"name": NAME} starts.
func payloadOffset(t *testing.T, rec []byte, name string) int {
	t.Helper()
	return strOffset(t, rec, "\xa4name", name)
}

// strOffset returns where, inside rec, the msgpack string s (a fixstr)
// that follows the bytes before starts.
func strOffset(t *testing.T, rec []byte, before, s string) int {
	t.Helper()
	pattern := append([]byte(before), byte(0xa0|len(s)))
	pattern = append(pattern, s...)
	i := bytes.Index(rec, pattern)
	if i < 0 {
		t.Fatalf("%q not found in its record", s)
	}
	return i + len(pattern) - len(s)
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantCorruptAt checks that verify refuses the file with exit 7, naming
// seq and the reason, and so do log and export, which check every record
// they read, if readsFail.
func wantCorruptAt(t *testing.T, f *flowFile, seq uint64, reason string, readsFail bool) {
	t.Helper()
	_, stderr, code := f.run("", "verify")
	wantError(t, stderr, code, 7, fmt.Sprintf("seq %d", seq), reason)
	_, stderr, code = f.run("", "verify", "-o", "json")
	wantJSONError(t, stderr, code, 7, "corrupt")
	if !readsFail {
		return
	}
	_, stderr, code = f.run("", "log")
	wantError(t, stderr, code, 7, fmt.Sprintf("seq %d", seq))
	_, stderr, code = f.run("", "export")
	wantError(t, stderr, code, 7, fmt.Sprintf("seq %d", seq))
}

func TestVerify_Corruption(t *testing.T) {
	t.Parallel()

	t.Run("FlippedByteNamesSeq", func(t *testing.T) {
		t.Parallel()
		f, evs := damagedFile(t)
		b := f.bytes()
		for _, r := range records(t, b, evs[1]) {
			i := r[0] + payloadOffset(t, b[r[0]:r[1]], "target-7f3a91")
			b[i] ^= 0x01
		}
		writeFile(t, f.path, b)
		wantCorruptAt(t, f, 2, "checksum", true)
	})

	t.Run("RewrittenRecordWithRecomputedCRC", func(t *testing.T) {
		t.Parallel()
		f, evs := damagedFile(t)
		b := f.bytes()
		for _, r := range records(t, b, evs[1]) {
			rec := b[r[0]:r[1]]
			rec[payloadOffset(t, rec, "target-7f3a91")] = 'T'
			env := rec[:len(rec)-4]
			binary.BigEndian.PutUint32(rec[len(rec)-4:], recordCRC(2, env))
		}
		writeFile(t, f.path, b)
		wantCorruptAt(t, f, 2, "hash", true)
	})

	t.Run("RewrittenRecordWithRecomputedHashBreaksChain", func(t *testing.T) {
		t.Parallel()
		f, evs := damagedFile(t)
		prev, err := hex.DecodeString(evs[0].Hash)
		if err != nil {
			t.Fatal(err)
		}
		b := f.bytes()
		for _, r := range records(t, b, evs[1]) {
			// The actor is covered by the chain hash but not by the content
			// hash of the id index, so only the chain can tell.
			rec := b[r[0]:r[1]]
			rec[strOffset(t, rec, "", "tester")] = 'T'
			env := rec[:len(rec)-4]
			body := env[:len(env)-34]
			// The hash is over the format-1 bytes: an array of 15 (0x9f),
			// the seq, the fields, the prev hash as bin8 of 32.
			v1 := append(append(append([]byte{}, prev...), 0x9f, 2), body[1:]...)
			sum := sha256.Sum256(append(append(v1, 0xc4, 0x20), prev...))
			copy(env[len(env)-32:], sum[:])
			binary.BigEndian.PutUint32(rec[len(rec)-4:], recordCRC(2, env))
		}
		writeFile(t, f.path, b)
		// Seq 2 is now self-consistent, so reads up to it serve it; verify,
		// and a read of seq 3, whose hash is over seq 2's (file format 2:
		// the record does not store it), find that the chain is broken.
		wantCorruptAt(t, f, 3, "chain", false)
		if evs := f.logEvents("--until", "2"); evs[1].Actor != "Tester" {
			t.Errorf("seq 2 actor = %q, want the rewritten Tester", evs[1].Actor)
		}
		_, stderr, code := f.run("", "log")
		wantError(t, stderr, code, 7, "seq 3", "chain")
	})

	t.Run("TruncatedFile", func(t *testing.T) {
		t.Parallel()
		// Cut the file after bbolt's two meta pages and one more: the live
		// pages are gone. This runs in a child process, since reading a page
		// that bbolt maps past the end of the file can kill the process.
		f, _ := damagedFile(t)
		b := f.bytes()
		pages := 3 * os.Getpagesize()
		if len(b) <= pages {
			t.Fatalf("file is %d bytes, too small to truncate to %d", len(b), pages)
		}
		writeFile(t, f.path, b[:pages])
		r := startChildren(t, f.dir, [][]string{{"verify"}})[0]
		if r.err != nil {
			t.Fatal(r.err)
		}
		if strings.Contains(r.stderr, "SIGBUS") || strings.Contains(r.stderr, "fatal error") {
			t.Fatalf("verify of a truncated file crashed (exit %d): %s", r.code, firstLine(r.stderr))
		}
		wantError(t, r.stderr, r.code, 7)
	})

	t.Run("EmptyFile", func(t *testing.T) {
		t.Parallel()
		f, _ := damagedFile(t)
		writeFile(t, f.path, nil)
		_, stderr, code := f.run("", "verify")
		wantError(t, stderr, code, 7, "empty")
	})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
