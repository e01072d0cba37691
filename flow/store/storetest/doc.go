/*
Package storetest is the conformance suite of the storage seam: the
properties package flow relies on from a store.Store, checked against any
backend, as testing/fstest checks a file system. A backend passes by
calling Run from a test of its own, with a Backend that says how to make,
open and reopen one of its stores:

	func TestConformance(t *testing.T) {
		storetest.Run(t, storetest.Backend{
			Driver:    eventlog.Driver{},
			DSN:       func(t testing.TB) string { return filepath.Join(t.TempDir(), "flow.db") },
			Options:   store.Options{NoSync: true},
			Exclusive: true,
		})
	}

Each property is a subtest, so that a failure names it (go test -run
'TestConformance/Idempotency'). Every store a subtest makes is a new one,
from Backend.DSN, and is verified when the subtest ends if the backend is
a store.Verifier.

# What a backend must do

  - Open: a missing store is store.ErrNotExist without Options.Create; a
    read-only store refuses Update with store.ErrReadOnly; a closed one
    answers store.ErrClosed. An Exclusive backend makes a second Open wait
    for the first store's Close, up to Options.Timeout, then store.ErrBusy;
    another backend lets two open stores append under one sequence.
  - Seqs: 1..head with no gap, in commit order, Appended.Seqs telling each;
    Head is the last seq and its record's Hash, and sees the transaction's
    own appends; Record(0) and Record past the head are nil, nil.
  - Times: an event without a time gets Options.Now, one without an id a
    new UUIDv7; a time is kept to the nanosecond, and one earlier than the
    record before it is raised to that record's, within a batch and across
    a reopen; HeadTime is the last record's.
  - Streams: versions 1..v per stream with no gap; StreamVersion is the
    version and the seq of the last event; NoStream, Exact and Any as
    store.Expect says; a mismatch is a *store.VersionConflict with the
    stream, the expected and the actual version, matching
    store.ErrConflict, and appends nothing while the rest of the Update
    still commits.
  - Invalid appends (empty batch, stream or type, a field over its
    store.Max* limit, an id twice in a batch) are store.ErrInvalid, a
    payload over store.MaxPayload store.ErrTooLarge; an append in a View
    store.ErrReadOnly; none appends anything.
  - Idempotency: a batch stored already, whatever the expected version,
    time, actor and session of the retry, is Appended.Duplicate with the
    original seqs, also within the Update that stored it; an id stored
    with other content (stream, type, schema, project, correlation,
    causation, data), or a batch partly stored, is store.ErrConflict and
    not a version conflict; SeqOf finds each id.
  - Atomicity: an Update whose fn fails keeps nothing: appends, stream
    versions, ids, Puts, Deletes and DeleteBuckets; the next append takes
    the seq and the ids the failed one did not keep.
  - Chain: each record's Prev is the Hash of the one before, zero for seq
    1, and the Hash is the one package eventlog's canonical encoding gives:
    the suite pins the hashes of six events, so the same events chain the
    same on every backend. Record, ReadRange and the other reads give back
    every envelope field as appended.
  - Reads: ReadRange and Replay (from..to, to 0 for the head), ReadStream
    and ReplayStream (from a version), ReadProject and ReplayProject (from
    a seq) hand over exactly their records in order; the Read* records are
    the caller's to keep, a Replay* record is valid inside fn; store.ErrStop
    from fn ends a read with nil, another error is returned. (Events
    without a project are in no project's reads the suite checks: the
    engine gives every event one.)
  - Buckets: Get, Put, Delete, DeleteBucket, Scan (a prefix, key order) and
    Last (a prefix, at most max) as store.Tx says; values are copies the
    caller owns; the empty name and Backend.Reserved are store.ErrInvalid,
    the names package flow uses are accepted; writes in a View are
    store.ErrReadOnly.
  - Snapshots: blobs under the key layout of package flow come back byte
    for byte after a reopen, and Last finds the nearest at or below a seq.
  - Durability: a store closed and opened again holds all it held, and
    goes on from its head (seq, chain, stream versions, head time).
  - Goroutines: writers sharing one store, appending to streams of their
    own and common ones, some Updates failing and the version of a shared
    stream read in a transaction before the append: no gap, nothing lost,
    nothing of a failed Update, every conflict real, the chain whole.
  - Processes: the same writers in child processes, each opening the store
    for every transaction as commands do.
  - Follow: a reader polling Head and ReadRange, on the writers' store or
    on one it opens read-only for each poll as flowctl watch does, sees
    every commit in seq order, each once; a View sees none of a commit that
    ends while it runs.
  - Optional: Verify is clean on a good store; Compact keeps every record
    and bucket; Salvage of a good store keeps every record.

# Child processes

The Processes test runs the test binary again with -test.run naming the
test that called Run, and environment variables (STORETEST_CHILD_*) that
make Run play a writer instead of running the suite. A test binary with a
TestMain must let such a run reach Run: it only needs to call m.Run.
Backend.NoProcesses skips the test for a store no other process can open.
*/
package storetest
