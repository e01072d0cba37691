package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/internal/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// readmeRoleSQL is the README's SQL block that makes flowctl's role.
func readmeRoleSQL(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(m[1], "CREATE ROLE flow_app") {
			return m[1]
		}
	}
	t.Fatal("README.md has no sql block with CREATE ROLE flow_app")
	return ""
}

// TestPostgres_Role: the role the README's SQL makes (run as written, on
// the store's schema, under a name of the test's own) runs task add,
// status and verify, and PostgreSQL refuses it an UPDATE, DELETE or
// TRUNCATE of flow_events.
func TestPostgres_Role(t *testing.T) {
	dsn := pgtest.DSN(t)
	dir := t.TempDir()
	run := func(db string, args ...string) {
		t.Helper()
		stdout, stderr, code := runCLIEnv(t, dir, map[string]string{"FLOW_DB": db}, "", args...)
		if code != 0 {
			t.Fatalf("flowctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	run(dsn, "init", "--project", "web")
	run(dsn, "task", "add", "made by the owner")

	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	var b [4]byte
	rand.Read(b[:])
	role := "flow_app_" + hex.EncodeToString(b[:])
	sql := strings.ReplaceAll(readmeRoleSQL(t), "flow_app", role)
	sql = strings.ReplaceAll(sql, "SCHEMA public", "SCHEMA "+pgx.Identifier{schema}.Sanitize())
	ctx := context.Background()
	owner, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	t.Cleanup(func() {
		// Before pgtest drops the schema: the role's grants go with it.
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(ctx)
		for _, q := range []string{"DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	if _, err := owner.Exec(ctx, sql); err != nil {
		t.Fatalf("the README's SQL: %v\n%s", err, sql)
	}

	u.User = url.UserPassword(role, "change me")
	as := u.String()
	run(as, "task", "add", "made by the role", "--dep", "T-1")
	run(as, "task", "start", "T-1")
	run(as, "status")
	run(as, "verify")
	run(as, "export")

	c, err := pgx.Connect(ctx, as)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, q := range []string{`UPDATE flow_events SET actor = 'mallory'`, `DELETE FROM flow_events`, `TRUNCATE flow_events`} {
		_, err := c.Exec(ctx, q)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" { // insufficient_privilege
			t.Errorf("%s as the role: %v, want permission denied", q, err)
		}
	}
}
