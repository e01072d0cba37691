/*
Package snapshot encodes, decodes and verifies one project's projected
state at a seq (DESIGN.md §6). Snapshots are derived data: a bad one is
reported and skipped, never trusted, and never takes user data with it.

# Format (FormatVersion 1)

All integers big-endian.

	offset      size  field
	0           8     magic "FLOWSNAP"
	8           2     format version
	10          4     projection version of the state
	14          8     seq: the state is everything up to this seq
	22          32    chain hash of the log at seq
	54          32    SHA-256 of the body (the state hash)
	86          2     scope length n
	88          n     scope (the project name, UTF-8)
	88+n        8     body length m
	96+n        m     body: msgpack of projection.Scope
	96+n+m      4     CRC32C (Castagnoli) of bytes [0, 96+n+m)

The body is deterministic: projection.Scope holds slices in id order and
no Go maps, so the same state always encodes to the same bytes and the
state hash identifies it. It is written and read by projection's
hand-written codec (projection.AppendScope, projection.DecodeScope): the
bytes msgpack's reflection encoder wrote for the same state, read as its
decoder read them.

# Checks

Decode checks the length, the magic, the format version, that the
declared lengths add up to exactly the blob's length, and the CRC, all
before decoding a single byte of the body; it checks the state hash (for
a body of 256 KB or more, on another goroutine while the body decodes:
the state is dropped if the hash does not match), that the body is
exactly one value, and that a field it does not know nests no deeper
than projection.MaxSkipDepth. Any failure is a *CorruptError
(errors.Is(err, ErrCorrupt)).

# Concurrency

Encode, Check and Decode are safe for concurrent use. Decode keeps no
reference to its input.
*/
package snapshot
