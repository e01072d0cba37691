/*
Package pgstore is the PostgreSQL backend of the storage seam (package
flow/store), on pgx: the same events, the same hash chain and the same
answers as the bbolt file of package eventlog, in a database that several
machines share. It registers a store.Driver for postgres:// and
postgresql:// URLs, so that a program that imports it opens one with
flow.Open(url, ...) or flowctl --db / FLOW_DB:

	import _ "github.com/flowctl/flowctl/pgstore"

A URL is libpq's; PG* variables, PGPASSFILE and sslmode work as for psql.
The store lives in the first schema of the connection's search_path
(public unless ?search_path=NAME says otherwise; Create makes the schema
when it is missing), so one database can hold several stores. The
password of a URL is in no error the package returns: Redact masks it,
and every error text is scrubbed of it.

# Schema

Versioned migrations (schema.go), each applied once, in one transaction
under an advisory lock, and recorded in schema_migrations. Create (flowctl
init) applies the missing ones; a writable Open applies those of an older
schema; a schema newer than the binary is store.ErrNewerFormat, for
reading too. Version 1:

	flow_head     one row: seq, hash, time_ns of the last record (seq 0
	              and the zero hash when empty). The lock of the store.
	flow_events   a record per row: seq (primary key), id (unique: the
	              idempotency index), stream and version (unique together),
	              type, schema, time_ns, actor, session, project,
	              correlation, causation (NULL for none), data (NULL for a
	              nil payload, which hashes apart from an empty one), prev,
	              hash. Indexed by (project, seq) for a project's reads.
	              A trigger refuses UPDATE, DELETE and TRUNCATE.
	flow_streams  a stream's head: version and the seq of its last event.
	flow_kv       the caller's buckets (projections, indexes, snapshots):
	              (bucket, key) -> value, keys bytea, so that they sort as
	              bbolt's do.

No name is reserved in the caller's buckets: they are rows of flow_kv,
apart from the store's own tables. Text columns cannot hold a NUL byte, so
an event whose stream, type, actor, session or project holds one is
store.ErrInvalid here (eventlog would store it).

# Ordering

Every Update begins by taking the head row FOR UPDATE (under lock_timeout
set from Options.Timeout, default 5 s; past it store.ErrBusy), so write
transactions take their turns, as bbolt's do: the hash chain needs one
total order anyway. An append assigns the next seqs from the head it
holds, computes the chain, and sends the records and the stream head in
one pipelined batch; the head row is written at commit. The global
position is never a sequence or bigserial: concurrent transactions commit
out of the order such a sequence hands out numbers in, and a reader by seq
would skip the later numbers that commit first. Here a seq is visible only
once every lower one is. A unique violation on (stream, version) or id
(23505) is store.ErrConflict; a serialization failure or deadlock (40001,
40P01) runs the Update again, up to 10 times.

A View is a READ ONLY REPEATABLE READ transaction: one snapshot for all of
its reads. Reads fetch pages of rows (64 first, growing to 4096) and hand
them to the callback after closing the query, so that a callback may use
the transaction. Every record read is checked against its hash; Verify
also checks the chain, seqs 1..head, the head row and the stream heads.

# Notifications

Every append queues pg_notify('flow_events', 'SEQ SCHEMA') in its
transaction: PostgreSQL delivers it at the commit, never on a rollback.
Driver is a store.Notifier: Listen opens a connection of its own that
LISTENs and wakes flow.Follow (watch, log --follow, serve's stream) for
its schema's notifications of a head past what it read; a dropped
connection is made again and wakes it at once, since what was notified
meanwhile is lost. A bulk append (COPY) does not notify: followers find
it at their fallback poll (every second).

# The hash

The chain hash is eventlog's (its doc.go, "Record"): SHA-256 over the
previous hash and the format-1 msgpack envelope of the record, computed
by store.ChainHash, the one encoder both backends use; storetest pins the
hashes of six events, and an export of one backend imported into the other
ends at the same head hash.

# Round trips

A command on a remote database waits for each round trip, so a Tx
spends few: a statement is one (QueryExecModeExec: pgx prepares
nothing first, which would cost a new connection a second trip per
statement); BEGIN, SET LOCAL and the head row go as one batch; the
writes to the caller's buckets wait in the Tx and go with the next read
that needs them on the server (Scan, Last) or with COMMIT; Gets read
ahead, a page of the bucket at a time, while the pages answer Gets
(kv.go). The store counts the round trips of its connections
(trips.go), and TestTrips pins those of status, ready, task show and
task add.

# Caveats

Not built here: Compact and Salvage (the server's own tools: VACUUM,
backups). A writable Open applies the migrations of an older schema,
which takes the rights of the schema's owner: a role with only the
README's grants runs every command on a current schema, and the owner
runs flowctl init after an upgrade.
*/
package pgstore
