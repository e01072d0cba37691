package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", pure Go
)

// The SQLite baseline: the same records as the event log, one row each,
// with the two uniqueness checks the log makes (stream version, event id)
// as unique indexes. The log also keeps a per-project index and a stream
// head table that this schema has no equivalent of.
const sqliteSchema = `
CREATE TABLE events (
	seq         INTEGER PRIMARY KEY,
	id          BLOB NOT NULL,
	stream      TEXT NOT NULL,
	version     INTEGER NOT NULL,
	type        TEXT NOT NULL,
	schema      INTEGER NOT NULL,
	time        INTEGER NOT NULL,
	actor       TEXT NOT NULL,
	session     TEXT NOT NULL,
	project     TEXT NOT NULL,
	correlation BLOB,
	causation   BLOB,
	data        BLOB NOT NULL,
	prev_hash   BLOB NOT NULL,
	hash        BLOB NOT NULL
);
CREATE UNIQUE INDEX events_stream_version ON events(stream, version);
CREATE UNIQUE INDEX events_id ON events(id);`

const sqliteInsert = `INSERT INTO events (seq, id, stream, version, type, schema, time, actor, session, project,
	correlation, causation, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const sqliteSelect = `SELECT seq, id, stream, version, type, schema, time, actor, session, project,
	correlation, causation, data, prev_hash, hash FROM events ORDER BY seq`

// openSQLite creates a SQLite file at path in WAL mode with
// synchronous=FULL: every commit is durable, as the log's are.
func openSQLite(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(sqliteSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite schema: %w", err)
	}
	return db, nil
}

// nullID is an id column: NULL for the zero id.
func nullID(id eventlog.ID) any {
	if id.IsZero() {
		return nil
	}
	return id[:]
}

// insertRecord inserts r with stmt (sqliteInsert).
func insertRecord(stmt *sql.Stmt, r *eventlog.Record) error {
	_, err := stmt.Exec(r.Seq, r.ID[:], r.Stream, r.Version, r.Type, r.Schema, r.Time.UnixNano(), r.Actor,
		r.Session, r.Project, nullID(r.Correlation), nullID(r.Causation), r.Data, r.Prev[:], r.Hash[:])
	return err
}

// copyToSQLite writes every record of the log at logPath into a new SQLite
// file at dbPath, 10000 rows a transaction, and returns how many.
func copyToSQLite(ctx context.Context, logPath, dbPath string) (int, error) {
	l, err := eventlog.Open(logPath, eventlog.Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	db, err := openSQLite(dbPath)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	w := &sqliteWriter{ctx: ctx, db: db}
	err = l.ReadRange(1, 0, w.add)
	if err == nil {
		err = w.commit()
	}
	return w.rows, err
}

// sqliteWriter inserts records in transactions of sqliteBatch rows.
type sqliteWriter struct {
	ctx  context.Context
	db   *sql.DB
	tx   *sql.Tx
	stmt *sql.Stmt
	rows int
}

const sqliteBatch = 10000

func (w *sqliteWriter) add(r *eventlog.Record) error {
	if w.tx == nil {
		if err := w.begin(); err != nil {
			return err
		}
	}
	if err := insertRecord(w.stmt, r); err != nil {
		return err
	}
	if w.rows++; w.rows%sqliteBatch == 0 {
		return w.commit()
	}
	return nil
}

func (w *sqliteWriter) begin() error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	tx, err := w.db.Begin()
	if err != nil {
		return err
	}
	stmt, err := tx.Prepare(sqliteInsert)
	if err != nil {
		tx.Rollback()
		return err
	}
	w.tx, w.stmt = tx, stmt
	return nil
}

func (w *sqliteWriter) commit() error {
	if w.tx == nil {
		return nil
	}
	w.stmt.Close()
	err := w.tx.Commit()
	w.tx, w.stmt = nil, nil
	return err
}

// checkpointSQLite folds the WAL into the database file, so that the
// file's size is all of it.
func checkpointSQLite(dbPath string) error {
	db, err := sql.Open("sqlite", "file:"+dbPath)
	if err != nil {
		return err
	}
	_, err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// scanSQLite selects every row in seq order, decodes each into a record,
// and hands it to fn.
func scanSQLite(db *sql.DB, fn func(*eventlog.Record) error) (int, error) {
	rows, err := db.Query(sqliteSelect)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return n, err
		}
		if err := fn(r); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// scanRecord decodes the current row of sqliteSelect.
func scanRecord(rows *sql.Rows) (*eventlog.Record, error) {
	var r eventlog.Record
	var id, corr, caus, prev, hash []byte
	var t int64
	err := rows.Scan(&r.Seq, &id, &r.Stream, &r.Version, &r.Type, &r.Schema, &t, &r.Actor, &r.Session,
		&r.Project, &corr, &caus, &r.Data, &prev, &hash)
	if err != nil {
		return nil, err
	}
	copy(r.ID[:], id)
	copy(r.Correlation[:], corr)
	copy(r.Causation[:], caus)
	copy(r.Prev[:], prev)
	copy(r.Hash[:], hash)
	r.Time = time.Unix(0, t).UTC()
	return &r, nil
}

// sqliteReplay reads every row and folds it into a fresh in-memory state,
// as a rebuild from a SQLite log would.
func sqliteReplay(db *sql.DB) (int, error) {
	mem := projection.NewMemory()
	return scanSQLite(db, func(r *eventlog.Record) error { return foldKnown(mem, r) })
}

// sqliteAppender appends one event per durable transaction, doing what an
// event log append must: read the stream's version, chain the hash, insert.
type sqliteAppender struct {
	db        *sql.DB
	ins, vers *sql.Stmt
	seq       uint64
	prev      eventlog.Hash
}

func newSQLiteAppender(path string) (*sqliteAppender, error) {
	db, err := openSQLite(path)
	if err != nil {
		return nil, err
	}
	a := &sqliteAppender{db: db}
	if a.ins, err = db.Prepare(sqliteInsert); err == nil {
		a.vers, err = db.Prepare(`SELECT coalesce(max(version), 0) FROM events WHERE stream = ?`)
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

func (a *sqliteAppender) Close() error { return a.db.Close() }

// append commits ev to stream in its own transaction.
func (a *sqliteAppender) append(stream string, ev eventlog.Event) error {
	tx, err := a.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	r := eventlog.Record{Seq: a.seq + 1, Stream: stream, Event: ev, Prev: a.prev}
	if err := tx.Stmt(a.vers).QueryRow(stream).Scan(&r.Version); err != nil {
		return err
	}
	r.Version++
	r.Time = time.Now().UTC()
	r.ID = eventlog.NewID(r.Time)
	r.Hash = chainHash(&r)
	if err := insertRecord(tx.Stmt(a.ins), &r); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	a.seq, a.prev = r.Seq, r.Hash
	return nil
}

// chainHash is a SHA-256 over the previous hash and the record's fields:
// the same work per event as the log's hash chain.
func chainHash(r *eventlog.Record) eventlog.Hash {
	h := sha256.New()
	h.Write(r.Prev[:])
	h.Write(binary.BigEndian.AppendUint64(nil, r.Seq))
	h.Write(r.ID[:])
	for _, s := range []string{r.Stream, r.Type, r.Actor, r.Session, r.Project} {
		h.Write([]byte(s))
	}
	h.Write(r.Data)
	var out eventlog.Hash
	h.Sum(out[:0])
	return out
}
