/*
Package projstore is the engine's inline projections: the proj_* buckets
the fold writes in the transaction of the events it folds, the status
index over them, their seals, and the replay, rebuild and comparison that
derive them from the log. It reaches storage only through store.Tx and
imports neither package flow nor a backend.

# Reading and writing

Tx is the projections seen through one transaction, a projection.Store:
what the fold puts stays in memory until Flush writes it (with the status
index), so the fold and the command that runs it see one consistent
state. Source is what queries read; Tx, Mem (a replay in memory) and the
engine's view at a point implement it. Lists stream on a Tx (each.go):
EachID gives the ids of a kind and status from the status index in id
order, Each the entities one at a time by key, so that a page of a list
decodes a page.

# Buckets

	proj_project     project name              -> Project (packed msgpack, below)
	proj_plan        project "/" P-n           -> Plan
	proj_task        project "/" T-n           -> Task (with its steps, claim, context)
	proj_approval    project "/" A-n           -> Approval
	proj_exec        project "/" X-n           -> Exec, as a reference to its event
	proj_checkpoint  project "/" C-n           -> Checkpoint
	proj_meta        "version"                 -> uint32 BE projection.Version of the fold that built them, uint32 BE Format
	proj_summary     the status index: counts, ids by status, live claims (summary.go),
	                 and the task counts of each plan (digestsum.go)
	proj_execrow     project "/" X-n           -> the exec summary: seq, version, success, code,
	                 elapsed, task and command of the exec (execsum.go), for stats; a row
	                 counts only while its seq and version are its exec's, else the exec
	                 is read from its event (files written before it, older flowctl)
	digest_log       per project, counted from the log: events, streams, notes of kind
	                 memory, up to a mark (digestsum.go); not a projection: a rebuild
	                 drops it and the next command of each project writes it again

# Values

An entity's body (value.go) is a kind byte and the entity's msgpack,
packed: its field names and statuses as two-byte tokens, small uint64s
as varints, a SHA-256 in hex as its 32 bytes; then compressed as an S2
block when that is shorter. An exec record is never changed but by a
rollback that puts it back, so its body is a reference instead: the seq
of the event that made or restored it, its version and its task id; a
read of it reads that event from the log (projection.ExecAt), and a
reference that does not fit its event is ErrDamaged. Format 3 stored the
plain msgpack, which a read still decodes; a writable open rebuilds such
projections (proj_meta's stamp, below).

# Seals

Every value of the entity buckets and of proj_summary is sealed: its body
(the value above, or summary.go's entry) followed by the CRC32C of the
key and the body, 4 bytes big endian (checksum.go). Every read checks the
seal before it decodes a byte; a mismatch, or an entity missing under its
key that the status index (or, for a project, the log) still has, is
ErrDamaged (flow.ErrDamagedProjection): exit 7 with the hint to run
'flowctl rebuild', never a wrong answer.

# Rebuild and verify

The proj_* buckets (Buckets) are dropped and refilled by a rebuild
(Replay, then WriteMemory), which the engine runs by itself when
proj_meta's stamp is not this binary's (Current); verify compares them,
the status index included, byte for byte with a replay of the log
(Compare), and the digest log index with the log (CheckDigestLog).
*/
package projstore
