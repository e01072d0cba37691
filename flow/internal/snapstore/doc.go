/*
Package snapstore is the engine's snapshot room: where the snapshots of a
project's whole state are stored, when they are taken, how a chain of
deltas resolves, and how a stored snapshot is checked, listed, verified
and imported. It reads and writes only through a flow/store.Tx, and
reads a project's current state through Source (the inline projection);
package flow calls it from its commands (a checkpoint, an automatic
snapshot after a write) and its Engine methods (Snapshots,
ExportSnapshot, ImportSnapshot, VerifySnapshots, reads at a point).

# Buckets

	snapshots        uint16 BE len, project, uint64 BE seq -> FLOWSNAP blob (package snapshot), see Key
	snapshot_marks   project -> seq, events, bytes of its last snapshot (8 bytes BE each)

snapshot_marks is advice to the policy only: reads never use it.

# Policy

A project's snapshot is taken at every checkpoint and, automatically,
when Due says: every K events, and once the project's state is over
FreeBytes, at least one event per BytesPerEvent bytes of it but never
more than MaxSnapshotGap (10,000) events of the project after the last
one. So a read of the whole state at a point folds at most TailBound(K)
= max(K, MaxSnapshotGap) of the project's events after the nearest
snapshot (plus the events of the command that made one due), however
big the state. Each snapshot is stored full or as a delta on the
project's newest stored snapshot before it (package snapshot), its body
compressed (snapshot.PackFullSum; a delta with a names section before
its body, snapshot.PackDeltaNames, which a far diff reads without the
body), by this policy (Put):

  - a delta when the newest snapshot's chain checks by its headers
    (framing, CRC, fold version, chain hash, each link the state its
    delta was made on), holds fewer than MaxDeltaChain (256) deltas, the
    delta is at most half the full snapshot, and the chain's deltas with
    it weigh no more than MaxChainBytes (2) times the chain's full
    snapshot;
  - otherwise a full snapshot.

Snapshots are weighed unpacked: as formats 1 and 2 store them, their
bodies decompressed (snapshot.Header.BodyLen, Info's BodyBytes) and
their headers, what a read decodes; so the policy takes the decisions it
took before snapshots were packed. So a read at a point decodes a full
snapshot and deltas of at most twice its bytes (on a growing project
mostly entities the full one does not have: about the state read), and
folds the events after the newest. Full snapshots are spaced by the
state's size: one comes once the changes since the last weigh twice it,
so full snapshots cost, per event, about half what the deltas cost, and
snapshot bytes per event stay about constant as a project grows (chains
of a fixed number of deltas, before, made full snapshots of a growing
state ever more of the file). snapshot_marks keeps the size of the whole
state's snapshot unpacked, delta or not, which Due spaces automatic
snapshots by.

# How Put reads and diffs

Put reads the project's state as the inline projection stores it, record
by record, without decoding: an entity's stored body is the encoding a
snapshot body holds (projection.AppendEntity), so the state's body is
their concatenation in id order (snapshot.RawScope). Each entity is
fingerprinted (SHA-256 of its encoding) and the state is diffed, by id
and fingerprint, with the newest snapshot's: the fingerprints the
Engine's Cache keeps of the last snapshot it stored, when the newest
stored snapshot is that one (its seq and state hash), else its chain
resolved and encoded. Only the entities that changed are decoded, to
check that their stored bytes are the canonical encoding of what they
hold (else Put reads the state decoded, ScopeOf, as before); the others
are byte for byte the base's. The delta is the changed entities' bytes
and the deleted ids; the full snapshot the whole state's bytes.

The Cache also keeps the entities of each snapshot's state as Put read
them (up to MaxCacheBytes in all): their encodings and the SHA-256 of each
stored value. The next Put of the project, when the newest stored
snapshot is that one, scans the buckets without copying them
(store.SharedScanner) and encodes again only the entities whose stored
values changed: a stored value names its encoding (an entity's packed
body, or the reference to the event that made an exec, which the log
never changes). So a snapshot costs what the project changed since the
last one, plus a scan of its stored values and the SHA-256 of the whole
state (the state hash), not a decode of every entity (an exec's event
read back from the log).

# Snapshots from a journal

A snapshot's state hash is the state's sum (snapshot formats 5 to 7:
a sum of its entities' digests), which the Cache keeps for the newest
snapshot Put stored, with the fingerprints. The engine folds each event
through Cache.Track, which notes the event's seq and the entities the
fold writes or deletes (the journal). The next Put of the project, when
the newest stored snapshot is the one the Cache keeps (its seq, state
hash, fold version; its chain walked by headers, as for any delta) and
the project's event count is that snapshot's plus the events the
journal noted, reads only the entities the journal names, brings the
fingerprints and the sum up to date with them, and stores their delta,
proven as any delta is (it decodes to exactly those entities, each
re-encoding to its bytes, with its id): so a delta costs what the
project changed since the last snapshot, whatever the size of its state.
A full snapshot, when the policy makes one due, reads the whole state
(and checks it against the fingerprints kept). Anything that may write
projections without Track makes the next Put read the whole state: a
transaction that fails (the engine calls Reset), a rebuild or an import
(Reset), a fold Track did not see (the event count), a snapshot this
Cache did not store (the newest's seq and hash). Another process cannot
write while this one holds the file.

Full snapshots imported (ImportSnapshot: an export is of format 1) are
stored as this binary stores its own, summed (format 5), so that a
delta above one it replaces still names it by its state hash.

The formats older binaries wrote (versions 1 to 4) are read as they
are, and new deltas chain on them: a delta names its base by the base's
state hash, of whatever version.

# Reads of several points

ScopesAt reads the states of a project at several points at once (diff):
the first from its nearest snapshot, each next one folded on from the one
before with copies (FoldForward, which changes no entity an earlier state
holds) or, when a snapshot more than MaxSnapshotGap seqs further lies on
the delta chain of the snapshot the first started from, resolved on
through that chain's deltas, or, when no chain from the first snapshot
reaches the newest one under a point more than MaxSnapshotGap seqs on,
read afresh from that snapshot (a full snapshot cut the chain). States
folded or resolved on share every entity that did not change between
them; a state read afresh shares none, and a comparison tells equal
entities by their encodings (digest.Changed).

# Status summaries

Beside each snapshot it stores from the inline projections, Put stores
the project's status summary at the same seq (summary.go: bucket
snapshot_sums, the snapshot's key): the project entity, the status
index's counts by status of plans, tasks, approvals and exec records,
and the ids status decodes (tasks todo, doing, blocked or holding a
claim, approvals pending), read from the status index in a few small scans. A
status at a point (history's tail view) starts from the summary of the
newest snapshot at or below the point and folds the events after it over
the entities they touch, each read as it stood at the summary's seq: so
`status --at` costs the tail and what it touches, not the size of the
state. A summary is derived data, checked as a snapshot's header is (the
fold version, the log's chain hash at its seq) and by a CRC32C; one that
fails is reported and the read takes the whole state. Files written
before summaries existed have none: reads there take the whole state, as
they did.

Layout of a summary: byte 2 (its format), the uint32 BE fold version,
the 32-byte chain hash, the project entity (uvarint length, bytes); for
plans, tasks, approvals and execs in that order, a uvarint count of
statuses and each status (uvarint length, bytes) with its uvarint count;
five id lists (tasks todo, blocked, approvals pending, tasks claimed,
tasks doing), each a uvarint count and its ids (uvarint length, bytes);
then the CRC32C (Castagnoli, uint32 BE) of all the bytes before it.
Format 1 (before tasks doing were listed) has the first four lists only
and is still read: a status at a point there takes the whole state for
the tasks doing (overdue ones), as it did.

# Checks

Before a delta is stored, it is decoded, its entities re-encoded and
fingerprinted, and merged by id into its base's fingerprints as
Delta.Apply merges entities; the result must be the state's, entity by
entity (else the full snapshot is stored). Since the state hash is the
hash of exactly those encodings in that order, every stored delta is
proven to resolve to the state it names, without re-encoding the
entities it does not hold (ResolvesTo is the same proof on decoded
states). A read resolves the chain from the
full snapshot up (Resolve: headers first, then one body at a time): each snapshot is checked (checksums, body
hash, fold version, the log's chain hash at its seq: CheckHeader) and
each delta's base must have the state hash the delta was made on, so a
read costs about what decoding the same bytes of full snapshots costs. A
snapshot that fails any of these is reported and skipped with every
delta above it in its chain, and the read falls back to the newest
snapshot under the one that failed, or to the log (Nearest). A writer
never builds a delta on a chain that does not resolve: it writes a full
snapshot. Export resolves deltas and writes a full snapshot; Import takes
only full ones, proven against a replay of the log (Prove). Describer
checks what a read checks without decoding bodies (flow's verify counts
the stored snapshots and those a read would skip with it); Verify also
hashes the state every delta resolves to and compares every snapshot's
state with a replay of the log.
*/
package snapstore
