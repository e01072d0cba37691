/*
Package flow is flowctl's engine: commands validated against the current
state, turned into events and appended to the log with the projections
they change, in one transaction; queries through the projections, a read
cache, and views at any earlier point.

# The seam

The engine reaches storage only through package flow/store, which it owns:
a Store of View and Update transactions whose Tx appends with an expected
version, reads by seq, stream and project, looks event ids up and keeps
the buckets below. It imports no backend. Open finds the driver for its
path (or URL) in store's registry, as database/sql finds a driver, so a
program imports the backend it wants, cmd/flowctl and this package's tests
the bbolt one:

	import _ "github.com/flowctl/flowctl/eventlog"

and New runs the engine on a Store the caller opened. Verify, Compact and
Recover use the backend's optional store.Verifier, store.Compacter and
store.Salvager.

Two rooms beside the engine build on its exported API: package digest
(prime, the session-start digest, and the task and project reports) reads
through Engine.Read and the event readers (read_api.go), and package
legacy imports the seeds' files (workflow.json, workflow_history.json,
context dumps, the exec log) through Engine.ImportEntries and its
Importer (import_api.go).

Rooms below the engine, in flow/internal, import flow/store and projection,
never flow. Package check holds the input checks: CheckJSON's rules, the
one-line and multi-line text checks the commands run (check.Line,
check.Text) and the clean-ups of legacy text; its ErrInvalid is the very
value flow exports as ErrInvalid. Package eventview is the JSON view of
event payloads: Event.Data shows stored JSON text as JSON values and unix
nanoseconds as RFC 3339 times, and import reads the view back.

# Buckets

Besides the log's own (eventlog/doc.go), the engine keeps these buckets in
the same file. All of them are derived from the log except idem, and all
are written in the transaction of the events they follow.

	proj_project     project name              -> Project (msgpack)
	proj_plan        project "/" P-n           -> Plan
	proj_task        project "/" T-n           -> Task (with its steps, claim, context)
	proj_approval    project "/" A-n           -> Approval
	proj_exec        project "/" X-n           -> Exec
	proj_checkpoint  project "/" C-n           -> Checkpoint
	proj_meta        "version"                 -> uint32 BE projection.Version of the fold that built them, uint32 BE ProjectionFormat
	proj_summary     the status index: counts, ids by status, live claims (summary.go)
	snapshots        uint16 BE len, project, uint64 BE seq -> FLOWSNAP blob (package snapshot)
	snapshot_marks   project -> seq, events, bytes of its last snapshot (snapshot.go)
	rollback_idx     the project's whole-project rollbacks, for reads at a point (at_rollbacks.go)
	idem             idempotency key           -> the command's hash and result (command.go)

Every value of the entity buckets and of proj_summary is sealed: its body
(the msgpack above, or summary.go's entry) followed by the CRC32C of the
key and the body, 4 bytes big endian (checksum.go). Every read checks the
seal before it decodes a byte; a mismatch, or an entity missing under its
key that the status index (or, for a project, the log) still has, is
ErrDamagedProjection: exit 7 with the hint to run 'flowctl rebuild',
never a wrong answer.

The proj_* buckets are dropped and refilled by a rebuild, which runs by
itself when proj_meta's version or format is not this binary's; verify compares them,
the status index included, byte for byte with a replay of the log.
snapshots are checked on every load and skipped when damaged; the rollback
index is checked by verify and ignored by reads when it disagrees with the
log; snapshot_marks is advice to the snapshot policy only.

# Entities are read-only

Task and Project, and the commands that return the task or project they
changed (AddTask, EditTask, MoveTask, ClaimTask, AddDep, CreateProject,
...), may return the very entity the engine's cache holds, shared with
every other reader, the way bbolt shares the values Get returns: do not
modify it, its slices or its Claim; Clone it to change it. A test binary
checks this: the cache panics when it finds a shared entity changed.

# Snapshots

A project's snapshot is taken at every checkpoint and, automatically,
when snapshotDue says (snapshot.go: every K events, spaced further by the
size of the project's whole state). Each is stored full or as a delta on
the project's newest stored snapshot before it (package snapshot), by
this policy (putSnapshot):

  - a delta when the newest snapshot resolves (every link checks), its
    chain holds fewer than MaxDeltaChain (16) deltas, the delta is at
    most half the full snapshot, and the chain's deltas with it weigh no
    more than the full snapshot;
  - otherwise a full snapshot.

So a read at a point decodes a full snapshot and at most 16 deltas,
together at most about twice the bytes of one full snapshot, and folds
the events after the newest. The full snapshot is encoded in any case
(it gives the state hash and the size to compare with); the delta is the
entities whose encoding differs from the base's, and the ids the base
has and the state does not. snapshot_marks keeps the size of the whole
state, delta or not, so automatic snapshots come as often as before.

Before a delta is stored, it is decoded and applied to the state of its
base, and the result must have the full snapshot's state hash (else the
full snapshot is stored): every stored delta is proven to resolve to the
state it names. A read resolves the chain from the full snapshot up: each
snapshot is checked (checksums, body hash, fold version, the log's chain
hash at its seq) and each delta's base must have the state hash the delta
was made on, so a read costs about what decoding the same bytes of full
snapshots costs. A snapshot that fails any of these is reported and
skipped with every delta above it in its chain, and the read falls back
to the newest snapshot under the one that failed, or to the log. A
writer never builds a delta on a chain that does not resolve: it writes
a full snapshot. Export resolves deltas and writes a full snapshot;
import takes only full ones. Verify counts the stored snapshots and
those a read would skip; 'snapshot verify' also hashes the state every
delta resolves to and compares every snapshot's state with a replay of
the log.

# Reads at a point

At returns a view of a project at a seq, checkpoint or time. One entity
(a task with its context and steps, a plan, an approval, an exec record, a
checkpoint) is read from its own stream and the project's rollbacks up to
the point, which relies on every event being on the stream of the entity
it changes (checkPlacement; Import refuses others). Lists and overviews
read the project's whole state: the nearest snapshot at or below the point
plus the events after it.

# Event times and occurred_at

An event's time is when it was appended, never before the time of the
event before it (eventlog clamps it inside the write transaction), so a
time names a prefix of the log and resolvePoint finds it by binary search.
A time an input gives for what it records (a legacy file's entry, a seed
exec line's timestamp, an exported event imported into a file that has
later events) is the payload's occurred_at key, unix ns: a field of
ExecRecorded and NoteAdded, which the exec record and the note show, and
for an events import a key added at the end of a map payload
(withOccurredAt). It is kept in the payload, not in the record envelope,
because the envelope is a fixed array that older binaries refuse to read
with a field more, while the payload decoders of every version skip a key
they do not know. Event (log, export, watch) shows it as occurred_at.
*/
package flow
