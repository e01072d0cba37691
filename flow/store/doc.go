/*
Package store is the engine's storage seam: what package flow needs of a
backend, and nothing of any backend. It plays the part database/sql/driver
plays for database/sql: flow talks only to Store and Tx, a backend
implements them (package eventlog on bbolt; PostgreSQL later), and the
program that wires them together picks the backend by the data source name
it opens, a path or a URL (Lookup, Register).

It holds the record types every backend speaks (Event, Record, ID, Hash,
Expect, Appended), the sentinel errors they return (ErrConflict,
ErrCorrupt, ...), and the interfaces:

  - Store: View and Update transactions, Close.
  - Tx: appends to a stream with an expected version, reads by seq range,
    by stream and by project, the idempotency lookup by event id, and the
    caller's key/value buckets (projection records, snapshots), all in
    one transaction.
  - Driver opens a Store; the optional Compacter and Salvager, and a
    Store's optional Verifier, are the operations only some backends have,
    tested for with a type assertion as database/sql tests for
    driver.Pinger.

# The contract

Every backend keeps these properties, which the engine relies on:

  - seqs are 1..head with no gap, in commit order; a stream's versions
    are 1..v with no gap, in seq order;
  - an append whose expected version does not match fails with a
    *VersionConflict and appends nothing;
  - an event id is stored once: a retried append with the same content is
    a duplicate (Appended.Duplicate), with other content a conflict;
  - a failed Update keeps nothing: events, stream heads, the id index and
    bucket writes commit together or not at all;
  - record n's Prev is record n-1's Hash; Hash is SHA-256 over Prev and
    the record's canonical encoding (package eventlog documents it), so
    that the same events give the same chain on every backend;
  - a record's time is never before the time of the record before it.

Package flow/store/storetest checks them for any backend (storetest.Run).
*/
package store
