/*
Package flow is flowctl's engine: commands validated against the current
state, turned into events and appended to the log with the projections
they change, in one transaction; queries through the projections, a read
cache, and views at any earlier point.

# Using it

Open a file (Options.Create makes it), then call the commands and queries
of Engine; every command takes a Write whose IfVersion makes it fail with
a conflict (errors.Is(err, store.ErrConflict)) when the entity moved past
the version the caller read, and whose Key makes a retry a no-op:

	e, err := flow.Open(".flow/flow.db", flow.Options{Create: true, Actor: "me"})
	...
	defer e.Close()
	t, err := e.AddTask(flow.NewTask{Project: "demo", Title: "Write the parser"})
	...
	old, err := e.At("demo", flow.Point{Checkpoint: "C-1"}).Task("demo", t.ID)

An Engine is safe for concurrent use, and several processes may open one
file: writes serialize on the file and concurrent commits share fsyncs.
Entities returned are shared with the read cache: read them, never change
them (see "Entities are read-only" below). ErrorCode maps any error to the
stable codes the CLI and MCP report. The examples show opening, a write
with an expected version, and a read at a checkpoint followed by a
rollback.

The packages around it, by room: cmd/flowctl and internal/mcpserver are
the adapters, printing through package view; digest and legacy build on
the exported API; flow/store is the seam to storage and eventlog its
bbolt backend; projection is the event catalog and the fold; snapshot and
cache serve the reads; flow/internal holds the engine's inner rooms
(projstore: the inline projections and status index; snapstore: snapshot
storage; history: the machinery of reads at a point; check; eventview).

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
(prime, the session-start digest, the task and project reports, the exec
record statistics, the diff between two points, and Describe's line for
an event) reads through Engine.Read, Engine.Scopes and the event readers
(read_api.go), and package legacy imports the seeds' files (workflow.json,
workflow_history.json, context dumps, the exec log) through
Engine.ImportEntries and its Importer (import_api.go).

Two small pure packages below the engine hold what it shares with them:
flow/scopediff compares two states of a project (the changes Rollback
reports and digest.Diff shows; Change is scopediff.Change), and
flow/capture keeps the head and tail of a command's output for an exec
record (OutputLimit is capture.Limit).

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
	proj_summary     the status index: counts, ids by status, live claims (projstore/summary.go)
	proj_execrow     project "/" X-n           -> the exec summary: what stats read of an exec (projstore/execsum.go)
	proj_children    the children index: each task's subtasks, and each subtask's parent (projstore/children.go; format 5)
	snapshots        uint16 BE len, project, uint64 BE seq -> FLOWSNAP blob (package snapshot, internal/snapstore)
	snapshot_marks   project -> seq, events, bytes of its last snapshot (internal/snapstore)
	snapshot_sums    as snapshots              -> the status summary at the snapshot's seq (internal/snapstore/summary.go)
	rollback_idx     the project's whole-project rollbacks, for reads at a point (flow/internal/history)
	idem             idempotency key           -> the command's hash and result (command.go)
	log_idx          kind, term, first seq     -> posting list chunk: the seqs of a type (per project and across), actor or session (flow/internal/logidx)
	log_pending      kind, term                -> a list's seqs past the last multiple of 4096 the index lists (flow/internal/logidx; format 5)

The proj_* buckets are the inline projections, package
flow/internal/projstore: its Tx is what the fold writes and the queries
read (through projstore.Source), and it keeps the status index, the seals
and the rebuild. Every value of the entity buckets and of proj_summary is
sealed: its body followed by the CRC32C of the key and the body
(projstore/checksum.go). Every read checks the seal before it decodes a
byte; a mismatch, or an entity missing under its key that the status
index (or, for a project, the log) still has, is ErrDamagedProjection:
exit 7 with the hint to run 'flowctl rebuild', never a wrong answer.

The proj_* buckets are dropped and refilled by a rebuild, which runs by
itself when proj_meta's version or format is not this binary's; verify compares them,
the status index included, byte for byte with a replay of the log.
log_idx, the log index of package flow/internal/logidx, is rebuilt with
them (and on its own stamp, logidx.Format) and compared with the log by
verify; a read-only engine on a file whose log index is of another format
walks the store's project index or the log instead (EventsBack), and the
events an older flowctl appended past the seq it lists are read from the
log and listed by the next writable open.
snapshots are checked on every load and skipped when damaged; the rollback
index is checked by verify and ignored by reads when it disagrees with the
log; snapshot_marks is advice to the snapshot policy only; snapshot_sums
are checked like snapshots (fold version, chain hash, CRC) and skipped
when they do not fit.

# Entities are read-only

Task and Project, and the commands that return the task or project they
changed (AddTask, EditTask, MoveTask, ClaimTask, AddDep, CreateProject,
...), may return the very entity the engine's cache holds, shared with
every other reader, the way bbolt shares the values Get returns: do not
modify it, its slices or its Claim; Clone it to change it. A test binary
checks this: the cache panics when it finds a shared entity changed.

# Snapshots

A project's snapshot is taken at every checkpoint and, automatically,
every K events, spaced further by the size of the project's whole state.
Each is stored full or as a delta on the project's newest stored
snapshot, and every stored delta is proven to resolve to the state it
names. A read at a point resolves the newest good snapshot at or below
it and folds the events after it; a snapshot that fails a check is
reported and skipped with every delta above it in its chain. The policy,
the chains and the checks live in flow/internal/snapstore (see its
package doc); snapshots.go holds the Engine methods that call it.

# Reads at a point

At returns a view of a project at a seq, checkpoint or time. One entity
(a task with its context and steps, a plan, an approval, an exec record, a
checkpoint) is read from its own stream and the project's rollbacks up to
the point, which relies on every event being on the stream of the entity
it changes (history.CheckPlacement; Import refuses others). Lists and
overviews read the project's whole state: the nearest snapshot at or below
the point plus the events after it. The machinery below the view (the
entity folds, the view's source that chooses between one entity's fold
and the whole state, the placement check, the rollback index, the search
of a time) is package flow/internal/history; Point, resolvePoint and
Engine.At stay here.

# Event times and occurred_at

An event's time is when it was appended, never before the time of the
event before it (eventlog clamps it inside the write transaction), so a
time names a prefix of the log and resolvePoint finds it by binary search
(history.SeqAtTime).
A time an input gives for what it records (a legacy file's entry, a seed
exec line's timestamp, an exported event imported into a file that has
later events) is the payload's occurred_at key, unix ns: a field of
ExecRecorded and NoteAdded, which the exec record and the note show, and
for an events import a key added at the end of a map payload
(withOccurredAt). An importer may ask for the entry's time as the event's time too
(Importer.As: a legacy history): it is then the earlier of that and the
time of the import, which the log raises to the time of the event
before. It is kept in the payload, not in the record envelope,
because the envelope is a fixed array that older binaries refuse to read
with a field more, while the payload decoders of every version skip a key
they do not know. Event (log, export, watch) shows it as occurred_at.
*/
package flow
