/*
Package eventlog is flowctl's append-only event log in one bbolt file. It
knows nothing about tasks: it stores events in streams, proves that none was
changed, and gives the caller key/value buckets that commit atomically with
the appends.

# Basics

Open a file with Open; append with Log.Append or, for several streams and
projection records in one transaction, with Log.Update and Tx.Append; read
with Log.ReadRange, Log.ReadStream and Log.ReadProject, which call back for
each record inside one read transaction and never hand out an iterator;
check the whole file with Log.Verify.

An append is acknowledged (Update returns nil) only after bbolt's commit,
with fsync, returned. Concurrent Update calls in one process share a commit
(group commit): the first caller leads, and every call queued while a commit
is in flight goes into the next one. A call that fails is answered with its
error and its batch is retried without it, so an Update callback may run
more than once and must have no effects outside its transaction.

# File format (FormatVersion 1)

Buckets, keys and values:

	meta         "format"     uint32 BE, format version of the file
	             "min_reader" uint32 BE, oldest format a reader must know
	             "created"    int64 BE, unix ns
	             "head_seq"   uint64 BE, seq of the last record (0: empty)
	             "head_hash"  32 bytes, hash of the last record (zeros: empty)
	log          uint64 BE seq, from 1, gap-free        -> record (below)
	stream_idx   uint16 BE len, stream, uint64 BE chunk -> uint64 BE seq of each version in the chunk
	ids          16-byte event id                       -> uint64 BE seq, 32-byte content hash
	project_idx  uint16 BE len, project, uint64 BE seq  -> uint64 BE seqs of the project from that one on

stream_idx holds a stream's seqs in chunks of 64 versions: chunk c holds
versions 64c+1 to 64c+64, as many as the stream has, in order; every chunk
but the stream's last is full. An append rewrites the stream's last chunk
with its new seqs (or starts the next one). Against one entry per
version, a page holds a few chunks instead of 65 entries, so the index
takes about 12 bytes per event instead of 60, and an append, which copies
each page it touches into memory and back, does far less work there: a
commit of 8 events in 8 streams took 40% less CPU.

project_idx holds a project's seqs the same way, in chunks of at most 64
ascending seqs keyed by their first seq; an append rewrites the project's
last chunk or, when it is full, starts one keyed by the new seq. It takes
about 11 bytes per event instead of 35.

A stream's head (its version and the seq of its last event) is its last
chunk, read with one seek. There is no bucket of stream heads: it cost
every append one more B-tree put and, with many streams, one more page
per commit (about 15% of an append's CPU with 1,000 streams). The name
"streams" stays reserved. Any other bucket belongs to the caller (Tx.Put,
Tx.Get, Tx.Scan).

Every transaction that appends sets how full bbolt leaves the pages it
splits (Bucket.FillPercent; bbolt's default 0.5 leaves append-only pages
half empty): log 1.0 (seqs only grow), stream_idx 0.7 (each stream grows
at the end of its own key range, so inserts land all over the bucket and a
page split full splits again), ids 0.9 (UUIDv7: in time order but random
within a millisecond), project_idx 0.9. See append.go for the
measurements per bucket. bbolt grows the file 1 MiB ahead of its pages (DB.AllocSize;
its default of 16 MiB made small files up to 16 MiB larger than their
data).

A record is a msgpack array of 15 elements followed by a 4-byte big-endian
CRC32C (Castagnoli) of the array's bytes:

	0 seq (uint)        5 schema (uint)       10 correlation id (bin 16, or nil)
	1 event id (bin 16) 6 time (int, unix ns) 11 causation id (bin 16, or nil)
	2 stream (str)      7 actor (str)         12 data (bin, msgpack payload)
	3 version (uint)    8 session (str)       13 prev hash (bin 32)
	4 type (str)        9 project (str)       14 hash (bin 32)

hash = SHA-256(prev hash || the array's bytes up to, not including, element
14). The first record's prev hash is 32 zero bytes. Element 14 is always the
last 34 bytes of the array (bin8 header 0xc4 0x20 and 32 bytes).

Every value is in its shortest msgpack form: positive fixint, uint 8, 16,
32 or 64 for unsigned values (and for non-negative times), negative fixint
or int 8, 16, 32, 64 for negative times; fixstr, str 8, 16 or 32; bin 8, 16
or 32; nil for a zero correlation or causation id and for a nil payload (an
empty payload is bin 8 of length 0). A reader refuses any other form, so a
record has exactly one byte form: whatever decodes re-encodes to the same
bytes. These are the forms github.com/vmihailenco/msgpack/v5 writes; the
codec is hand-written (codec.go) and tested against that library.

The content hash in ids is SHA-256 over the length-prefixed stream, type,
schema, project, correlation id, causation id and data: what an event says,
not when or by whom it was sent, so that a retried append matches.

# Invariants

  - seqs are 1..head_seq with no gap; record n's prev hash is record n-1's hash;
    meta's head is the last record's seq and hash.
  - every stream's versions are 1..v with no gap, in seq order; stream_idx
    holds exactly one seq per record, in the slot of its stream and
    version, so a stream's last chunk gives its head.
  - ids has exactly one entry per record; project_idx lists each record with
    a project once, in a chunk of that project whose first seq is its key.
  - nothing is ever rewritten or deleted in log or ids; a stream_idx or
    project_idx chunk only ever grows.

Verify checks all of them and returns the first violation as a
*CorruptionError with the seq of the first bad record.

# Reads and the hash chain

Every read (ReadRange, ReadStream, ReadProject, Tx.Record) checks the
record's CRC32C, its framing (one byte form, lengths within the record,
the hash field's shape), that it says the seq it is stored under, and its
SHA-256 hash against its content. Verify also follows the chain from record
to record and to meta's head. Of the cost of a read, the hash is about half:
with SHA-NI about 290 ns for a record with a 200-byte payload, against
about 270 ns for the CRC and the decode together (thread CPU time,
BenchmarkDecodeVsReference). The hash check on reads is the constant
hashOnRead; without it CRC32C still catches damage on every read and
Verify (flowctl verify) still catches a record rewritten on purpose.

A record handed to a callback owns its memory: its strings and Data are
copies made once per record (the strings share one allocation), never
views of bbolt's pages, so callers may keep records after the transaction.

# Caveats

A file whose format is newer than FormatVersion is refused for writing
(ErrNewerFormat) and opened read-only only if its min_reader allows. An
empty file is refused unless Options.Create is set. Open waits at most
Options.Timeout for the file lock, then fails with ErrBusy; a read-only open
takes a shared lock, so readers block writers only while they are open.
Records are decoded with every length checked against the record's size,
after the CRC; a damaged bbolt page that makes bbolt panic is reported as a
*CorruptionError.
*/
package eventlog
