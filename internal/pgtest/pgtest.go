// Package pgtest gives tests a PostgreSQL server to run against: the one
// FLOWCTL_PG_URL names, or a throwaway cluster of Debian's postgresql
// package (initdb and pg_ctl as the postgres user, on a temporary
// directory and a free port).
//
// The first test that calls URL or DSN starts the cluster; the package's
// TestMain calls Main, which stops it after the tests. Tests call DSN for
// a store of their own (a schema, dropped when the test ends). Without a
// server the tests skip, unless the environment sets CI: then they fail.
// When FLOWCTL_PG_MARKER names a file, DSN appends the test's name to it:
// CI checks that the PostgreSQL tests ran.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the variable holding the server's URL (a database any
// test may create schemas in).
const EnvURL = "FLOWCTL_PG_URL"

// EnvMarker names the file DSN records the tests that ran in.
const EnvMarker = "FLOWCTL_PG_MARKER"

var (
	startOnce sync.Once
	started   *Cluster // the cluster URL started, stopped by Main
	why       string   // why there is no server, for the skip message
)

// Main runs m, then stops the cluster a test started (URL). It returns
// m.Run's code, for os.Exit. A package whose tests call URL or DSN calls
// it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if started != nil {
		if err := started.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	return code
}

// server returns FLOWCTL_PG_URL, after starting a cluster and setting it
// to the cluster's URL (which child processes of the tests then inherit)
// when it was unset; "" when there is none.
func server() string {
	startOnce.Do(func() {
		if os.Getenv(EnvURL) != "" {
			return
		}
		c, err := Start()
		if err != nil {
			why = err.Error()
			return
		}
		started = c
		os.Setenv(EnvURL, c.URL)
	})
	return os.Getenv(EnvURL)
}

// Cluster is a throwaway PostgreSQL cluster.
type Cluster struct {
	URL string // postgres://postgres@127.0.0.1:PORT/postgres
	dir string
	bin string
}

// Start initializes a cluster in a temporary directory and starts it on
// a free port of 127.0.0.1, with trust authentication: it is only for
// tests. It must run as root (initdb and pg_ctl run as postgres).
func Start() (*Cluster, error) {
	bin := binDir()
	if bin == "" {
		return nil, fmt.Errorf("no PostgreSQL server (/usr/lib/postgresql/*/bin/initdb; apt-get install postgresql)")
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("not root: cannot run initdb as the postgres user (set %s)", EnvURL)
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, bin: bin}
	if err := c.start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start() error {
	if out, err := exec.Command("chown", "postgres:postgres", c.dir).CombinedOutput(); err != nil {
		return fmt.Errorf("chown %s: %v: %s", c.dir, err, out)
	}
	data := filepath.Join(c.dir, "data")
	if err := c.asPostgres("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200", port, c.dir)
	if err := c.asPostgres("pg_ctl", "-D", data, "-o", opts, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("%v\n%s", err, log)
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	return nil
}

// Stop stops the cluster and removes its directory.
func (c *Cluster) Stop() error {
	err := c.asPostgres("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	if rmErr := os.RemoveAll(c.dir); err == nil {
		err = rmErr
	}
	return err
}

func (c *Cluster) asPostgres(tool string, args ...string) error {
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, tool)}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", tool, err, out)
	}
	return nil
}

// binDir returns the newest /usr/lib/postgresql/N/bin with initdb.
func binDir() string {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		return ""
	}
	sort.Strings(found)
	return filepath.Dir(found[len(found)-1])
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// URL returns the server's URL, or skips t (fails it when CI is set)
// without one. It records t in FLOWCTL_PG_MARKER's file.
func URL(t testing.TB) string {
	t.Helper()
	u := server()
	if u == "" {
		msg := "no PostgreSQL: " + why
		if why == "" {
			msg = "no PostgreSQL: " + EnvURL + " is not set"
		}
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if m := os.Getenv(EnvMarker); m != "" {
		if f, err := os.OpenFile(m, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, t.Name())
			f.Close()
		}
	}
	return u
}

// DSN returns the URL of a new, empty schema of the server (nothing is
// created yet: the store's Create makes it), dropped when t ends.
func DSN(t testing.TB) string {
	t.Helper()
	base := URL(t)
	var b [6]byte
	rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	t.Cleanup(func() { drop(t, base, schema) })
	return WithSchema(base, schema)
}

// WithSchema returns base with search_path set to schema.
func WithSchema(base, schema string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func drop(t testing.TB, base, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Errorf("pgtest: dropping schema %s: %v", schema, err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil && !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("pgtest: dropping schema %s: %v", schema, err)
	}
}
