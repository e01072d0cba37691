package pgstore

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/pgtest"
)

// unsetenv unsets name for the test, restoring it after.
func unsetenv(t *testing.T, name string) {
	t.Setenv(name, "") // restores the old value when t ends
	os.Unsetenv(name)
}

// TestLibpqEnv: what a libpq user sets works as for psql: the PG*
// variables fill in what the URL leaves out, a password missing from the
// URL and PGPASSWORD comes from PGPASSFILE (and is scrubbed from errors
// like the URL's), and sslmode is honoured. (The throwaway cluster
// trusts local connections, so that the password's use by the server is
// libpq's business, tested by pgx; this tests that it reaches the
// connection's config.)
func TestLibpqEnv(t *testing.T) {
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	// The URL names its server by host and port, or (CI's cluster) by a
	// socket directory in the host parameter.
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = u.Query().Get("host")
	}
	schema := u.Query().Get("search_path")
	for _, v := range []string{"PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSWORD", "PGPASSFILE", "PGSSLMODE", "PGSERVICE"} {
		unsetenv(t, v)
	}
	st, err := Driver{}.Open(dsn, store.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	t.Run("PassFile", func(t *testing.T) {
		const pw = "pw-From-Passfile-3"
		file := filepath.Join(t.TempDir(), "pgpass")
		// Any host and port: libpq and pgx match a socket as localhost.
		line := strings.Join([]string{"*", "*", "*", u.User.Username(), pw}, ":") + "\n"
		if err := os.WriteFile(file, []byte("# flowctl\n"+line), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PGPASSFILE", file)
		st, err := Driver{}.Open(dsn, store.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		s := st.(*Store)
		if !slices.Contains(s.secrets, pw) {
			t.Errorf("the passfile's password is not among the secrets scrubbed from errors (%d)", len(s.secrets))
		}
		err = s.wrap(&os.PathError{Op: "dial", Path: "with " + pw, Err: os.ErrDeadlineExceeded})
		if strings.Contains(err.Error(), pw) {
			t.Errorf("an error kept the passfile's password: %v", err)
		}
	})
	t.Run("PGVars", func(t *testing.T) {
		t.Setenv("PGHOST", host)
		if port != "" {
			t.Setenv("PGPORT", port)
		}
		t.Setenv("PGUSER", u.User.Username())
		t.Setenv("PGDATABASE", strings.TrimPrefix(u.Path, "/"))
		t.Setenv("PGSSLMODE", "disable")
		st, err := Driver{}.Open("postgres:///?search_path="+url.QueryEscape(schema), store.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Update(func(tx store.Tx) error {
			_, err := tx.Append("s", store.Any, store.Event{Type: "t.env"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("SSLModeRequire", func(t *testing.T) {
		const pw = "pw-In-The-Url-5"
		v := *u
		v.User = url.UserPassword(u.User.Username(), pw)
		q := v.Query()
		q.Set("sslmode", "require")
		v.RawQuery = q.Encode()
		st, err := Driver{}.Open(v.String(), store.Options{NoSync: true})
		if err == nil { // the cluster has no certificate: a server with one may accept
			st.Close()
			t.Skip("the server accepts SSL")
		}
		if !strings.Contains(strings.ToLower(err.Error()), "ssl") || strings.Contains(err.Error(), pw) {
			t.Errorf("sslmode=require on a server without SSL: %v, want it named, without the password", err)
		}
	})
}
