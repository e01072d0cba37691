package pgstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	_ store.Driver   = Driver{}
	_ store.Store    = (*Store)(nil)
	_ store.Verifier = (*Store)(nil)
	_ store.Tx       = (*Tx)(nil)
)

// The URL schemes this driver opens, as libpq accepts them.
func init() {
	store.Register("postgres", Driver{})
	store.Register("postgresql", Driver{})
}

// Driver is the store.Driver of PostgreSQL databases: a data source name
// is a libpq URL (postgres://user@host:port/db?sslmode=...); PG*
// variables and PGPASSFILE fill in what it leaves out, as for psql. The
// store lives in the first schema of the connection's search_path
// (public by default; ?search_path=NAME picks another).
type Driver struct{}

// defaultTimeout bounds lock waits and the connection when Options.Timeout
// is 0.
const defaultTimeout = 5 * time.Second

// Open connects to the database dsn names and checks its schema: a
// database without one is store.ErrNotExist unless o.Create, which
// creates it (the migrations of schema.go); one whose schema is newer
// than this binary's is store.ErrNewerFormat. Errors never hold the
// password.
func (Driver) Open(dsn string, o store.Options) (store.Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", store.ErrInvalid, Redact(dsn), scrubText(err.Error(), dsn))
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = max(timeout, 2*time.Second)
	}
	if o.NoSync {
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "flowctl"
	}
	cfg.MaxConns = 4
	s := &Store{
		dsn:      dsn,
		redacted: Redact(dsn),
		secrets:  passwords(dsn),
		readOnly: o.ReadOnly,
		timeout:  timeout,
		now:      o.Now,
		progress: o.Progress,
	}
	if pw := cfg.ConnConfig.Password; pw != "" {
		s.secrets = append(s.secrets, pw)
	}
	if s.now == nil {
		s.now = time.Now
	}
	countTrips(&cfg.ConnConfig.Config, &s.tripCount)
	if !strings.Contains(dsn, "default_query_exec_mode") {
		// One round trip a statement: the default caches prepared
		// statements, which costs a command (a new connection) a second
		// round trip for each statement it runs first.
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	ctx := context.Background()
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, s.wrap(err)
	}
	if err := s.checkSchema(ctx, o.Create && !o.ReadOnly); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// checkSchema makes sure the schema is there and not newer than the
// binary's, applying the missing migrations when the store is writable
// and create is set or the schema is older.
func (s *Store) checkSchema(ctx context.Context, create bool) error {
	var have *int32
	var current *string
	var exists bool
	// One round trip: the version is read only where the table exists,
	// by a query that PostgreSQL plans only then (query_to_xml).
	err := s.pool.QueryRow(ctx, `SELECT current_schema(), to_regclass('schema_migrations') IS NOT NULL,
		CASE WHEN to_regclass('schema_migrations') IS NOT NULL THEN (xpath('/row/v/text()',
			query_to_xml('SELECT coalesce(max(version), 0) AS v FROM schema_migrations', false, true, '')))[1]::text::integer END`).
		Scan(&current, &exists, &have)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "3D000" { // invalid_catalog_name: no such database
			return fmt.Errorf("%w: %s: %s", store.ErrNotExist, s.redacted, pgErr.Message)
		}
		return s.wrap(err)
	}
	switch {
	case have != nil && int(*have) > schemaVersion:
		return fmt.Errorf("%w: %s has schema version %d, this binary knows %d", store.ErrNewerFormat, s.redacted, *have, schemaVersion)
	case have != nil && int(*have) == schemaVersion:
		return nil
	case have == nil && !create:
		return fmt.Errorf("%w: %s has no flowctl schema (run flowctl init)", store.ErrNotExist, s.redacted)
	case s.readOnly:
		return nil // an older schema is read as it is
	}
	return s.migrate(ctx, current == nil)
}

// migrate applies the migrations the database lacks, in one transaction
// under an advisory lock, so that two processes creating one store at
// once apply each once. noSchema: the search_path names no schema that
// exists; its first one is created.
func (s *Store) migrate(ctx context.Context, noSchema bool) error {
	return s.wrap(pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if noSchema {
			var path string
			if err := tx.QueryRow(ctx, `SHOW search_path`).Scan(&path); err != nil {
				return err
			}
			name := firstSchema(path)
			if name == "" {
				return fmt.Errorf("%w: the search_path %q names no schema to create the store in", store.ErrInvalid, path)
			}
			if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{name}.Sanitize()); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('flowctl schema ' || current_schema()))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, createMigrations); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
			return err
		}
		if have > schemaVersion {
			return fmt.Errorf("%w: %s has schema version %d, this binary knows %d", store.ErrNewerFormat, s.redacted, have, schemaVersion)
		}
		for v := have + 1; v <= schemaVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("schema migration %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, v); err != nil {
				return err
			}
		}
		return nil
	}))
}

// firstSchema returns the first schema a search_path names, "$user"
// left out.
func firstSchema(path string) string {
	for _, p := range strings.Split(path, ",") {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, `"`) && strings.HasSuffix(p, `"`) && len(p) >= 2 {
			p = strings.ReplaceAll(p[1:len(p)-1], `""`, `"`)
		}
		if p != "" && p != "$user" {
			return p
		}
	}
	return ""
}

// Redact returns dsn with its password replaced by "xxxxx": the form of
// a data source name fit for output, errors and logs.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		// Not a URL that parses: mask what lies between the user's name
		// and the host, the password of a URL.
		scheme, rest, _ := strings.Cut(dsn, "://")
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if user, _, ok := strings.Cut(rest[:at], ":"); ok {
				rest = user + ":xxxxx" + rest[at:]
			}
		}
		if strings.Contains(rest, "password=") {
			return scheme + "://(a URL that does not parse)"
		}
		return scheme + "://" + rest
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// scrubText removes the password of dsn from text.
func scrubText(text, dsn string) string {
	for _, pw := range passwords(dsn) {
		text = strings.ReplaceAll(text, pw, "xxxxx")
	}
	return text
}

// passwords returns what in dsn may be a password: the user's, as the URL
// or the raw text holds it, and a password parameter.
func passwords(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			out = append(out, pw)
		}
		if pw := u.Query().Get("password"); pw != "" {
			out = append(out, pw)
		}
	}
	_, rest, _ := strings.Cut(dsn, "://")
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		if _, pw, ok := strings.Cut(rest[:at], ":"); ok && pw != "" {
			out = append(out, pw)
		}
	}
	if _, after, ok := strings.Cut(dsn, "password="); ok {
		if pw, _, _ := strings.Cut(after, "&"); pw != "" {
			out = append(out, pw)
		}
	}
	return out
}
