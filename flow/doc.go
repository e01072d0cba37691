/*
Package flow is flowctl's engine: commands validated against the current
state, turned into events and appended to the log (package eventlog) with
the projections they change, in one transaction; queries through the
projections, a read cache, and views at any earlier point.

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
	proj_meta        "version"                 -> uint32 BE, projection.Version of the fold that built them
	proj_summary     the status index: counts, ids by status, live claims (summary.go)
	snapshots        uint16 BE len, project, uint64 BE seq -> FLOWSNAP blob (package snapshot)
	snapshot_marks   project -> seq, events, bytes of its last snapshot (snapshot.go)
	rollback_idx     the project's whole-project rollbacks, for reads at a point (at_rollbacks.go)
	idem             idempotency key           -> the command's hash and result (command.go)

The proj_* buckets are dropped and refilled by a rebuild, which runs by
itself when proj_meta's version is not this binary's; verify compares them,
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

# Reads at a point

At returns a view of a project at a seq, checkpoint or time. One entity
(a task with its context and steps, a plan, an approval, an exec record, a
checkpoint) is read from its own stream and the project's rollbacks up to
the point, which relies on every event being on the stream of the entity
it changes (checkPlacement; Import refuses others). Lists and overviews
read the project's whole state: the nearest snapshot at or below the point
plus the events after it.
*/
package flow
