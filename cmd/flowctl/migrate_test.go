package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrate: a file into a new database and the database into a new
// file end at the source's head hash with the same export bytes; a
// target that holds events is refused (exit 4) and left as it was; the
// source itself is refused (exit 2); the password is in nothing printed.
func TestMigrate(t *testing.T) {
	dsn, pw := pgURL(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	var printed strings.Builder
	cli := func(wantCode int, args ...string) string {
		t.Helper()
		stdout, stderr, code := runCLI(t, dir, "", args...)
		printed.WriteString(stdout + stderr)
		if code != wantCode {
			t.Fatalf("flowctl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, stdout, stderr)
		}
		return stdout
	}
	cli(0, "--db", src, "init", "--project", "web")
	cli(0, "--db", src, "task", "add", "write the parser")
	cli(0, "--db", src, "task", "add", "test it", "--dep", "T-1")
	cli(0, "--db", src, "note", "add", "the grammar is LL(1)")
	cli(0, "--db", src, "task", "start", "T-1")
	cli(0, "--db", src, "project", "new", "ops")
	cli(0, "--db", src, "--project", "ops", "task", "add", "rotate the keys")
	export := cli(0, "--db", src, "export")
	head := verifiedHead(t, cli(0, "--db", src, "verify", "-o", "json"))

	var res migrateResult
	if err := json.Unmarshal([]byte(cli(0, "--db", src, "migrate", "--to", dsn, "-o", "json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Head != head || res.Events != 7 || strings.Contains(res.To, pw) || res.From != src {
		t.Errorf("migrate to the database: %+v, want head %s, 7 events", res, head)
	}
	if got := cli(0, "--db", dsn, "export"); got != export {
		t.Errorf("the database exports\n%s\nthe file\n%s", got, export)
	}
	cli(0, "--db", dsn, "verify", "--expect-head", head)

	back := filepath.Join(dir, "sub", "back.db")
	out := cli(0, "migrate", "--from", dsn, "--to", back)
	if !strings.Contains(out, "migrated 7 events from postgres://") || !strings.Contains(out, "verified: head "+head) {
		t.Errorf("migrate to a file printed %q", out)
	}
	if got := cli(0, "--db", back, "export"); got != export {
		t.Errorf("the file migrated back exports\n%s\nthe source\n%s", got, export)
	}

	// ErrExists
	{
		cli(0, "--db", back, "--project", "web", "task", "add", "one more")
		before := cli(0, "--db", back, "export")
		_, stderr, code := runCLI(t, dir, "", "--db", src, "migrate", "--to", back)
		if code != 4 || !strings.Contains(stderr, "holds 8 events") {
			t.Errorf("migrate into a file with events: exit %d, %s", code, stderr)
		}
		if after := cli(0, "--db", back, "export"); after != before {
			t.Error("a refused migrate changed the target")
		}
		_, stderr, code = runCLI(t, dir, "", "--db", back, "migrate", "--to", dsn)
		printed.WriteString(stderr)
		if code != 4 || !strings.Contains(stderr, "holds 7 events") {
			t.Errorf("migrate into a database with events: exit %d, %s", code, stderr)
		}
	}
	cli(2, "--db", src, "migrate", "--to", src)
	cli(2, "--db", src, "migrate")
	cli(3, "migrate", "--from", filepath.Join(dir, "none.db"), "--to", filepath.Join(dir, "new.db"))
	if strings.Contains(printed.String(), pw) {
		t.Errorf("flowctl printed the password:\n%s", printed.String())
	}
}

// TestMigrate_Progress: without a terminal, migrate's progress is lines
// "migrate: N/M events" on stderr, the last at M; -q prints none.
func TestMigrate_Progress(t *testing.T) {
	dsn, pw := pgURL(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	runCLI(t, dir, "", "--db", src, "init", "--project", "web")
	runCLI(t, dir, "", "--db", src, "task", "add", "one")
	_, stderr, code := runCLI(t, dir, "", "--db", src, "migrate", "--to", dsn)
	if code != 0 || !strings.HasSuffix(stderr, "migrate: 2/2 events\n") || strings.Contains(stderr, pw) {
		t.Errorf("migrate: exit %d, stderr %q", code, stderr)
	}
	other, _ := pgURL(t)
	if _, stderr, _ := runCLI(t, dir, "", "--db", src, "-q", "migrate", "--to", other); stderr != "" {
		t.Errorf("migrate -q printed %q", stderr)
	}
}

// verifiedHead is the HASH@SEQ of verify's JSON.
func verifiedHead(t *testing.T, out string) string {
	t.Helper()
	var v struct {
		HeadSeq  uint64 `json:"head_seq"`
		HeadHash string `json:"head_hash"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v.HeadSeq)
	return v.HeadHash + "@" + string(b)
}
