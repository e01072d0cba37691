package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/internal/pgtest"
)

// pgURL returns the URL of a new PostgreSQL store for t, and the password
// it holds: the server's own, or one added to it (the throwaway cluster
// trusts local connections, so any password is accepted), so that the
// tests can look for it in everything flowctl prints.
func pgURL(t *testing.T) (dsn, password string) {
	t.Helper()
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	password, ok := u.User.Password()
	if !ok {
		password = "pw-Never-Printed-7"
		u.User = url.UserPassword(u.User.Username(), password)
	}
	return u.String(), password
}

// TestPostgres_CLI: init, task add, status, log and verify on a
// PostgreSQL database named by --db, and by FLOW_DB; the password is in
// nothing flowctl prints, and nothing is written to the working
// directory.
func TestPostgres_CLI(t *testing.T) {
	dsn, pw := pgURL(t)
	dir := t.TempDir()
	var printed strings.Builder
	cli := func(wantCode int, args ...string) string {
		t.Helper()
		stdout, stderr, code := runCLIEnv(t, dir, map[string]string{"FLOW_DB": dsn}, "", args...)
		printed.WriteString(stdout + stderr)
		if code != wantCode {
			t.Fatalf("flowctl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, stdout, stderr)
		}
		return stdout
	}
	if out := cli(3, "status"); out != "" {
		t.Errorf("status before init printed %q", out)
	}
	if out := cli(0, "--db", dsn, "init", "--project", "web"); !strings.Contains(out, "Initialized empty flowctl database in postgres://") {
		t.Errorf("init printed %q", out)
	}
	if out := cli(0, "init", "--project", "web", "-o", "json"); !strings.Contains(out, `"created":false`) {
		t.Errorf("init again printed %q", out)
	}
	cli(0, "task", "add", "write the schema")
	cli(0, "--db", dsn, "task", "add", "run the suite", "--dep", "T-1")
	var status struct {
		HeadSeq uint64 `json:"head_seq"`
		Tasks   struct{ Total, Todo int }
		Ready   []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(cli(0, "status", "-o", "json")), &status); err != nil {
		t.Fatal(err)
	}
	if status.HeadSeq != 3 || status.Tasks.Total != 2 || len(status.Ready) != 1 || status.Ready[0].ID != "T-1" {
		t.Errorf("status = %+v, want head 3, 2 tasks, T-1 ready", status)
	}
	log := cli(0, "log", "-o", "jsonl")
	if lines := strings.Split(strings.TrimSpace(log), "\n"); len(lines) != 3 || !strings.Contains(lines[2], `"task.created"`) {
		t.Errorf("log printed %q", log)
	}
	cli(0, "--db", dsn, "task", "start", "T-1")
	cli(0, "task", "done", "T-1")
	if out := cli(0, "ready"); !strings.Contains(out, "T-2") {
		t.Errorf("ready after T-1 is done printed %q", out)
	}
	head := cli(0, "verify", "-o", "json")
	cli(2, "project", "switch", "web")

	// Moving: an export imported into a file, and the file's export into a
	// new database, end at the same head hash.
	file := filepath.Join(t.TempDir(), "flow.db")
	export := cli(0, "export")
	stdout, stderr, code := runCLI(t, dir, export, "--db", file, "import", "-")
	if code != 0 {
		t.Fatalf("import into a file: exit %d: %s%s", code, stdout, stderr)
	}
	if stdout, _, _ := runCLI(t, dir, "", "--db", file, "verify", "-o", "json"); stdout != head {
		t.Errorf("the file verifies as %s, the database as %s", stdout, head)
	}
	fromFile, _, _ := runCLI(t, dir, "", "--db", file, "export")
	other, _ := pgURL(t)
	stdout, stderr, code = runCLIEnv(t, dir, map[string]string{"FLOW_DB": other}, fromFile, "import", "-")
	printed.WriteString(stdout + stderr)
	if code != 0 {
		t.Fatalf("import into a database: exit %d: %s%s", code, stdout, stderr)
	}
	if got := cli(0, "--db", other, "verify", "-o", "json"); got != head {
		t.Errorf("the copy verifies as %s, the original as %s", got, head)
	}

	// A rebuild on the database folds the log again and re-makes the
	// snapshots: the answers stay.
	cli(0, "checkpoint", "--label", "before the rebuild")
	before := cli(0, "status", "--at", "C-1", "-o", "json")
	cli(0, "rebuild")
	if after := cli(0, "status", "--at", "C-1", "-o", "json"); after != before {
		t.Errorf("status --at C-1 after a rebuild:\n%s\nbefore it:\n%s", after, before)
	}

	cli(3, "--db", strings.Replace(dsn, "/postgres?", "/no_such_database?", 1), "status")
	cli(2, "upgrade")
	cli(2, "compact")
	if out := cli(0, "quickstart"); !strings.Contains(out, "$ flowctl init --project quickstart --db 'postgres://") {
		t.Errorf("quickstart printed %q", out)
	}
	if strings.Contains(printed.String(), pw) {
		t.Errorf("flowctl printed the password:\n%s", printed.String())
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the working directory holds %v (%v), want nothing", entries, err)
	}
}
