/*
Package snapshot encodes, decodes and verifies one project's projected
state at a seq (DESIGN.md §6). Snapshots are derived data: a bad one is
reported and skipped, never trusted, and never takes user data with it.

# Format (FormatVersion 7)

A snapshot is full (the whole state) or a delta (what changed since a
base snapshot), its body stored as encoded or compressed; the format
version field tells which layout follows. Version 1 is the full layout,
unchanged since format 1: full snapshots written before deltas existed
read as they did, and a full snapshot Encode writes (an export) reads in
a binary that knows only version 1. Version 2 is the delta layout.
Versions 3 and 4 are versions 1 and 2 with the body compressed (an S2
block, github.com/klauspost/compress/s2; PackFull and PackDelta write
them, and the engine stores only these): after the scope, the body's
length decompressed comes before the length of the stored (compressed)
body. Any other version is refused as corrupt ("format version N: this
binary reads versions ..."), before the checksum is looked at: a
snapshot of a newer binary is skipped like a damaged one, and the engine
falls back to an older one or to the log.

Versions 5 and 6 are versions 3 and 4 whose state hash is the state's
sum (below) rather than the SHA-256 of its body; a version-5 full
snapshot has the body's SHA-256 (its body hash) in a field of its own,
after the state hash (offsets 86 to 118), and its scope length follows
at 118. The engine writes only these (PackFullSum, PackDeltaSum). A
delta names its base by the base's state hash, whichever version the
base is, so deltas of version 6 chain on snapshots of any version.

All integers big-endian.

Full (version 1):

	offset      size  field
	0           8     magic "FLOWSNAP"
	8           2     format version: 1
	10          4     projection version of the state
	14          8     seq: the state is everything up to this seq
	22          32    chain hash of the log at seq
	54          32    SHA-256 of the body (the state hash)
	86          2     scope length n
	88          n     scope (the project name, UTF-8)
	88+n        8     body length m
	96+n        m     body: msgpack of projection.Scope
	96+n+m      4     CRC32C (Castagnoli) of bytes [0, 96+n+m)

Delta (version 2): the first 86 bytes as in a full snapshot, then

	offset      size  field
	54          32    the state hash of the state the delta resolves to
	86          8     base seq: the snapshot of the same scope it applies to (< seq)
	94          32    the base's state hash
	126         32    SHA-256 of this body (the body hash)
	158         2     scope length n
	160         n     scope
	160+n       8     body length m
	168+n       m     body (below)
	168+n+m     4     CRC32C of bytes [0, 168+n+m)

Packed (versions 3 and 4): the layout of version 1 or 2 up to and with
the scope, then

	offset      size  field
	s           8     body length decompressed d (at most MaxBody)
	s+8         8     stored body length m
	s+16        m     the body, compressed: an S2 block
	s+16+m      4     CRC32C of bytes [0, s+16+m)

where s is the offset after the scope (88+n full, 160+n delta). The
hashes (state hash, body hash) are of the body decompressed, so a state
has one state hash whichever layout holds it, and packed and unpacked
snapshots chain on each other. A packed body's CRC is checked before it
is decompressed; it must decompress to exactly d bytes, and no more than
MaxBody is ever allocated for it.

A delta's body is the msgpack of a projection.Scope holding only the
entities that are new or changed since the base (Project nil when the
project entity did not change), in id order, followed by the deleted ids:
for plans, tasks, approvals, execs and checkpoints in that order, a
uvarint count and that many ids, each a uvarint length (at least 1) and
its bytes. A delta resolves by applying it to its base's resolved state
(Delta.Apply), the base resolving the same way down to a full snapshot:
a chain. The state hash of every snapshot, full or delta, is the SHA-256
of the full body the state encodes to, so the resolution of a chain can
be checked against it, and a delta names the state hash of its base, so
that a base that was replaced by another state breaks the link.

The body is deterministic: projection.Scope holds slices in id order and
no Go maps, so the same state always encodes to the same bytes and the
state hash identifies it. It is written and read by projection's
hand-written codec (projection.AppendScope, projection.DecodeScope): the
bytes msgpack's reflection encoder wrote for the same state, read as its
decoder read them.

# The state's sum (versions 5 and 6)

Each entity of a state has a digest: the SHA-256 of its kind's number
(0 the project, 1 to 5 plans, tasks, approvals, execs, checkpoints) and
its encoding (projection.AppendEntity's bytes; EntityDigest). The sum
adds the digests as 256-bit little-endian numbers, modulo 2^256, and
counts each kind's entities; the state hash is the SHA-256 of the tag
"FLOWSTATESUM1", the total (32 bytes, little-endian) and the six counts
(8 bytes each, big-endian) (StateSum.Hash). The sum does not depend on
the order of the entities, so a writer that keeps it brings it up to
date with what changed (StateSum.Add, Sub) rather than hashing the whole
state at every snapshot; a reader sums a whole state in one pass (SumOf,
RawSum). Header.HashState hashes a state as a header's version names
it.

# Names (version 7)

Version 7 is version 6 with a names section: what a far diff reads of a
delta (the ids and names of the entities it holds, whether it changes
the project, the ids it deletes), placed before the body with a CRC of
its own, so that a reader of many deltas reads them without touching
their bodies' bytes (Head, NamesReader, EachName). The engine writes
only this delta layout (PackDeltaNames); deltas of versions 2, 4 and 6
still read exactly as before, and deltas of version 7 chain on
snapshots of any version, and the reverse, as version 6 does (the
hashes are the same). A binary that does not know version 7 refuses it
as it refuses any version it does not know: the delta is skipped like a
damaged one and the engine falls back to an older snapshot or to the
log.

After the scope (s = 160+n):

	offset      size  field
	s           8     names section length k (stored)
	s+8         k     names section: an S2 block
	s+8+k       8     body length decompressed d (at most MaxBody)
	s+16+k      8     stored body length m
	s+24+k      4     CRC32C of bytes [0, s+24+k) (the head's CRC)
	s+28+k      m     the body, compressed: an S2 block
	s+28+k+m    4     CRC32C of bytes [0, s+28+k+m)

Bytes [0, s+28+k) are the head: it is read and checked alone (its
lengths, its CRC), the body after it not read. The whole is checked as
any delta is (its lengths add up, its CRC, the body hash), the head's
CRC too. The names section, decompressed (at most MaxBody bytes), is:

	1 byte      1 when the delta changes the project, else 0
	uvarint     count of entities
	each        its kind (1 byte: 0 plans, 1 tasks, 2 approvals, 3 execs),
	            which of its fields are not strings (1 byte, bit i for
	            field i), then each field: uvarint 0 for none, else its
	            length + 1, and its bytes
	            the deletions, as in the body

where the fields of each kind are NameFields': a plan's and a task's
id and title, an approval's id, message and task, an exec record's id,
command, code and task. The entities are the body's plans, tasks,
approvals and exec records, in the body's order, each field as
EachDeltaEntity reads it of the body (none for a field the entity lacks
or has as nil; a field that is not a string is none with its bit set;
an entity that is not a map has none and every bit). The section is
derived from the body by the writer: a reader of the head trusts it (its
CRC); CheckNames checks it against the body, and the engine's snapshot
verification does.

# Checks

Decode and DecodeDelta check the length, the magic, the format version,
that the declared lengths add up to exactly the blob's length, and the
CRC, all before decoding a single byte of the body; they check the body
hash (for a full body of 256 KB or more, on another goroutine while the
body decodes: the state is dropped if the hash does not match), that the
body is exactly one value (a delta: one Scope and the deletions, nothing
after them), and that a field it does not know nests no deeper than
projection.MaxSkipDepth. A delta's base must come before it; its entities
must be of its scope, none listed twice, none both changed and deleted.
Any failure is a *CorruptError (errors.Is(err, ErrCorrupt)). Decode
refuses a sound delta with ErrDelta. Whether a chain resolves to the
state hash its top names is the caller's to check (StateHash of the
resolved state): the engine checks it before it stores a delta and when
it verifies snapshots.

# Concurrency

Encode, EncodeDelta, Check, Decode, DecodeDelta and Diff are safe for
concurrent use. Decode and DecodeDelta keep no reference to their input.
Delta.Apply changes the state it is given and takes the delta's entities
into it.
*/
package snapshot
