package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var _ store.Notifier = Driver{}

// notifyChannel is the channel every append notifies at its commit, with
// the payload "SEQ SCHEMA": the head seq the append left and the schema
// of its store (one database may hold several; a listener takes only its
// own schema's).
const notifyChannel = "flow_events"

// notifySQL is the statement an append queues after its rows: PostgreSQL
// delivers the notification when the transaction commits, never if it
// rolls back.
const notifySQL = `SELECT pg_notify('` + notifyChannel + `', $1::bigint::text || ' ' || coalesce(current_schema(), ''))`

// silent makes appends notify nobody: a test's way to a commit that only
// the fallback poll can find (export_test.go).
var silent atomic.Bool

// queueNotify queues notifySQL for the head seq into b.
func queueNotify(b *pgx.Batch, seq uint64) {
	if !silent.Load() {
		b.Queue(notifySQL, int64(seq)) // delivered at commit
	}
}

// Listen is store.Notifier's: a connection of its own, outside any
// Store's pool, that has run LISTEN flow_events when Listen returns. The
// listener takes the notifications of the schema the URL's search_path
// gives, as Open does. A connection that drops is made again at the next
// Wait, which then returns at once: what was notified meanwhile is lost.
func (Driver) Listen(dsn string, o store.Options) (store.Listener, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", store.ErrInvalid, Redact(dsn), scrubText(err.Error(), dsn))
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = max(timeout, 2*time.Second)
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "flowctl"
	}
	// A Store without a pool, for its wrap: the password out of errors.
	s := &Store{dsn: dsn, redacted: Redact(dsn), secrets: passwords(dsn), timeout: timeout}
	if cfg.Password != "" {
		s.secrets = append(s.secrets, cfg.Password)
	}
	l := &listener{cfg: cfg, s: s}
	if err := l.connect(context.Background()); err != nil {
		return nil, err
	}
	return l, nil
}

// listener is a store.Listener on one connection.
type listener struct {
	cfg      *pgx.ConnConfig
	s        *Store
	conn     *pgx.Conn // nil once it dropped, until the next Wait connects
	schema   string    // current_schema() of the connection
	notified uint64    // the highest head notified for the schema
}

// connect connects and listens.
func (l *listener) connect(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return l.s.wrap(err)
	}
	var schema *string
	if err = conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err == nil {
		_, err = conn.Exec(ctx, "LISTEN "+notifyChannel)
	}
	if err != nil {
		conn.Close(context.Background())
		return l.s.wrap(err)
	}
	l.conn, l.schema = conn, ""
	if schema != nil {
		l.schema = *schema
	}
	return nil
}

// Wait is store.Listener's.
func (l *listener) Wait(ctx context.Context, after uint64) error {
	for l.notified <= after {
		if l.conn == nil {
			if err := l.connect(ctx); err != nil {
				<-ctx.Done() // the caller's poll fallback, then another try
				return ctx.Err()
			}
			return nil
		}
		n, err := l.conn.WaitForNotification(ctx)
		if l.conn.IsClosed() {
			l.drop()
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			l.drop() // connect again at once
			continue
		}
		l.take(n)
	}
	return nil
}

// take notes a notification of the listener's schema.
func (l *listener) take(n *pgconn.Notification) {
	if n == nil || n.Channel != notifyChannel {
		return
	}
	seq, schema, ok := strings.Cut(n.Payload, " ")
	if !ok || schema != l.schema {
		return
	}
	if s, err := strconv.ParseUint(seq, 10, 64); err == nil && s > l.notified {
		l.notified = s
	}
}

// drop closes a connection that failed.
func (l *listener) drop() {
	if l.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		l.conn.Close(ctx)
		cancel()
		l.conn = nil
	}
}

// Close is store.Listener's.
func (l *listener) Close() error {
	l.drop()
	return nil
}
