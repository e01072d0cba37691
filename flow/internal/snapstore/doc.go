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
project's newest stored snapshot before it (package snapshot), by this
policy (Put):

  - a delta when the newest snapshot resolves (every link checks), its
    chain holds fewer than MaxDeltaChain (256) deltas, the delta is at
    most half the full snapshot, and the chain's deltas with it weigh no
    more than MaxChainBytes (2) times the chain's full snapshot;
  - otherwise a full snapshot.

So a read at a point decodes a full snapshot and deltas of at most
twice its bytes (on a growing project mostly entities the full one does
not have: about the state read), and folds the events after the newest.
Full snapshots are spaced by the state's size: one comes once the
changes since the last weigh twice it, so full snapshots cost, per
event, about half what the deltas cost, and snapshot bytes per event
stay about constant as a project grows (chains of a fixed number of
deltas, before, made full snapshots of a growing state ever more of the
file). The full snapshot is encoded in any case (it gives the state hash
and the size to compare with); the delta is the entities whose encoding
differs from the base's, and the ids the base has and the state does
not. snapshot_marks keeps the size of the whole state, delta or not,
which Due spaces automatic snapshots by.

The format did not change with this policy: snapshots written by the
policy before (chains of at most 16 deltas) are read as they are, and
new ones chain on them.

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

# Checks

Before a delta is stored, it is decoded and applied to the state of its
base, and the result must have the full snapshot's state hash (else the
full snapshot is stored, see ResolvesTo): every stored delta is proven
to resolve to the state it names. A read resolves the chain from the
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
