package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/pgtest"
	"github.com/flowctl/flowctl/pgstore"
	"github.com/jackc/pgx/v5"
)

// mustCreate opens a new store for writing; it is closed when t ends.
func mustCreate(t *testing.T) (store.Store, string) {
	t.Helper()
	dsn := pgtest.DSN(t)
	st, err := pgstore.Driver{}.Open(dsn, store.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dsn
}

// mustConnect connects to dsn for the test's own SQL.
func mustConnect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func appendEvent(t *testing.T, st store.Store, stream string) {
	t.Helper()
	err := st.Update(func(tx store.Tx) error {
		_, err := tx.Append(stream, store.Any, store.Event{Type: "t.a", Project: "p", Data: []byte("x")})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEvents_AppendOnly: the server itself refuses to change or remove a
// stored event, whoever asks.
func TestEvents_AppendOnly(t *testing.T) {
	st, dsn := mustCreate(t)
	appendEvent(t, st, "s")
	conn := mustConnect(t, dsn)
	for _, q := range []string{
		`UPDATE flow_events SET data = 'y' WHERE seq = 1`,
		`DELETE FROM flow_events WHERE seq = 1`,
		`TRUNCATE flow_events`,
	} {
		if _, err := conn.Exec(context.Background(), q); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s = %v, want the append-only trigger's error", q, err)
		}
	}
	if _, err := st.(store.Verifier).Verify(); err != nil {
		t.Errorf("Verify after the refused changes: %v", err)
	}
}

// TestOpen_ErrNewerFormat: a schema migrated past this binary's is
// refused, for writing and for reading.
func TestOpen_ErrNewerFormat(t *testing.T) {
	st, dsn := mustCreate(t)
	st.Close()
	conn := mustConnect(t, dsn)
	if _, err := conn.Exec(context.Background(), `INSERT INTO schema_migrations (version) VALUES (999)`); err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		st, err := pgstore.Driver{}.Open(dsn, store.Options{ReadOnly: ro})
		if !errors.Is(err, store.ErrNewerFormat) {
			if err == nil {
				st.Close()
			}
			t.Errorf("Open(ReadOnly=%v) of a schema at version 999 = %v, want ErrNewerFormat", ro, err)
		}
	}
}

// TestOpen_Migrations: Create records each migration once, also when
// run again.
func TestOpen_Migrations(t *testing.T) {
	st, dsn := mustCreate(t)
	st.Close()
	again, err := pgstore.Driver{}.Open(dsn, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	var n, top int
	if err := mustConnect(t, dsn).QueryRow(context.Background(), `SELECT count(*), max(version) FROM schema_migrations`).Scan(&n, &top); err != nil {
		t.Fatal(err)
	}
	if n != top || n < 1 {
		t.Errorf("schema_migrations holds %d rows up to version %d, want one per version", n, top)
	}
}

// TestUpdate_ErrBusy: a writer that cannot take the head row within the
// timeout fails with ErrBusy and appends nothing.
func TestUpdate_ErrBusy(t *testing.T) {
	st, dsn := mustCreate(t)
	appendEvent(t, st, "s")
	ctx := context.Background()
	holder, err := mustConnect(t, dsn).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, `SELECT seq FROM flow_head FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	other, err := pgstore.Driver{}.Open(dsn, store.Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Update(func(tx store.Tx) error {
		_, err := tx.Append("s", store.Any, store.Event{Type: "t.b"})
		return err
	}); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("Update while another transaction holds the head = %v, want ErrBusy", err)
	}
	holder.Rollback(ctx)
	appendEvent(t, other, "s")
}

// TestSecrets: the password of the URL is in no error, whatever fails,
// and Redact masks it.
func TestSecrets(t *testing.T) {
	const pw = "pa55-w0rd-secret"
	base := pgtest.URL(t)
	cases := map[string]string{
		"refused":   "postgres://flow:" + pw + "@127.0.0.1:1/flow?connect_timeout=5",
		"no db":     strings.Replace(withPassword(t, base, pw), "/postgres?", "/no_such_db?", 1),
		"no role":   strings.Replace(withPassword(t, base, pw), "postgres:"+pw+"@", "nobody:"+pw+"@", 1),
		"param":     "postgres://flow@127.0.0.1:1/flow?password=" + pw,
		"bad url":   "postgres://flow:" + pw + "@127.0.0.1:bad%zz/flow",
		"bad param": "postgres://flow:" + pw + "@127.0.0.1/flow?sslmode=nonsense",
	}
	for name, dsn := range cases {
		if strings.Contains(pgstore.Redact(dsn), pw) {
			t.Errorf("%s: Redact(%q) = %q", name, dsn, pgstore.Redact(dsn))
		}
		st, err := pgstore.Driver{}.Open(dsn, store.Options{Timeout: time.Second})
		if err == nil {
			st.Close()
			t.Errorf("%s: Open(%s) succeeded", name, pgstore.Redact(dsn))
			continue
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("%s: the error holds the password: %v", name, err)
		}
	}
}

func withPassword(t *testing.T, base, pw string) string {
	t.Helper()
	if !strings.HasPrefix(base, "postgres://postgres@") {
		t.Skip("FLOWCTL_PG_URL is not pgtest's own cluster's form")
	}
	return strings.Replace(base, "postgres://postgres@", "postgres://postgres:"+pw+"@", 1)
}

// TestEmptyData: a nil payload and an empty one hash differently (msgpack
// nil and bin8 0), so the store keeps them apart.
func TestEmptyData(t *testing.T) {
	st, _ := mustCreate(t)
	err := st.Update(func(tx store.Tx) error {
		if _, err := tx.Append("s", store.Any, store.Event{Type: "t.nil"}); err != nil {
			return err
		}
		_, err := tx.Append("s", store.Any, store.Event{Type: "t.empty", Data: []byte{}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.View(func(tx store.Tx) error {
		for seq, wantNil := range map[uint64]bool{1: true, 2: false} {
			r, err := tx.Record(seq)
			if err != nil {
				return err
			}
			if (r.Data == nil) != wantNil || len(r.Data) != 0 {
				t.Errorf("seq %d: data %#v, want nil: %v", seq, r.Data, wantNil)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.(store.Verifier).Verify(); err != nil {
		t.Fatal(err)
	}
}
