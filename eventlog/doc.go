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

# The seam

The engine (package flow) does not import this package: it talks to
flow/store's Store and Tx, which this package implements. The record
types, the sentinel errors and Expect are flow/store's, named here by
aliases (Record = store.Record, ErrConflict = store.ErrConflict, ...), so
that both spellings are one type and one error. A *Tx is a store.Tx as it
is; Log.Store returns the Log as a store.Store; Driver opens one by path
and is registered under store.PathDriver ("bbolt") by this package's init,
as database/sql drivers register themselves: a program that imports
eventlog, even blank, opens files with flow.Open and store.Open. Driver
also offers Compact and Salvage (store.Compacter, store.Salvager), and the
Store Verify (store.Verifier). The record's encoding and hash chain
(below) stay here; a second backend must produce the same bytes to
produce the same chain.

# File format (FormatVersion 2; format 1 still read and written)

Buckets, keys and values:

	meta         "format"     uint32 BE, format version of the file: 1 or 2
	             "min_reader" uint32 BE, oldest format a reader must know: 1 in a
	                          format-1 file, 2 in a format-2 one
	             "created"    int64 BE, unix ns
	             "head_seq"   uint64 BE, seq of the last record (0: empty)
	             "head_hash"  32 bytes, hash of the last record (zeros: empty)
	log          uint64 BE seq, from 1, gap-free        -> record (below)
	index_tail   uint64 BE seq                          -> id (16 bytes), uint64 BE version,
	                                                       uint16 BE len, stream, uint16 BE len, project
	ids          16-byte event id                       -> format 1: uint64 BE seq
	                                                       format 2: uvarint seq (Go's binary.AppendUvarint,
	                                                       its shortest form)
	stream_idx   uint16 BE len, stream, uint64 BE chunk -> uint64 BE seq of each version in the chunk
	project_idx  uint16 BE len, project, uint64 BE seq  -> uint64 BE seqs of the project from that one on

The name "streams" is reserved too. Any other bucket belongs to the caller
(Tx.Put, Tx.Get, Tx.Scan).

The two formats differ only in the record encoding and the ids values
(below); the hash chain is one and the same. New files are format 2. A
format-1 file (written before format 2) is read and written in format 1
by this package, the codec chosen per file when it is opened, and
Compact keeps its format; Upgrade (flowctl upgrade) rewrites it in format
2 into a new file beside it, checks that the copy verifies and ends at the
same head seq and hash, keeps the old file as FILE.v1.bak and renames the
copy over it. A format-2 file says min_reader 2, so that a binary that
knows only format 1 refuses it (ErrNewerFormat) instead of misreading it.

What format 2 saves: 35-43 bytes per record in the log (the prev hash,
34 bytes, and the seq, 1-9) and 5 per event in ids (a seq below 2M is 3
bytes). On the 1M-event file of flowbench gen: log 320 -> 278 MB, ids
45 -> 40 MB; with 200-byte payloads (BenchmarkReadDecode) 486 -> 417
bytes per event on disk.

# The index tail

The index entries of the last records (what they add to ids, stream_idx
and project_idx) are kept in index_tail, one entry per record, until
they would fill more than one bbolt page (about 60 entries); the write
transaction whose appends would overflow it merges the tail and its own
entries into the three indexes, in seq order, and empties the tail. Every record is in
exactly one of the two: the tail holds the records from some seq to the
head, the indexes all records before it. Readers look in both: ids then
the tail for an id, the tail then stream_idx for a stream's head,
stream_idx then the tail for a stream's records, project_idx then the
tail for a project's.

The tail exists for the cost of a commit, which is its fsync, and each
page it writes costs about 20 µs here. An index an append touches costs a
leaf page and the branch pages above it: with three indexes a single
append wrote 13 pages where a raw bbolt put writes 6. The tail is one page,
or none while it is smaller than a quarter of a page (bbolt keeps such a
bucket inside its parent's page, which every commit writes anyway), so a
single append writes 7, and the merge, about once every 60 events, costs
one commit a few more.

A write transaction reads the tail once, when it first needs it, and
keeps it in memory with the entries of what it appends; they reach the
file only when it ends, before its commit: into the tail if it then
still fits its page, else, with the tail's, into the indexes, in one
merge that puts each chunk it grows once. A transaction of a thousand
appends (flowbench gen, an import) so merges once instead of every ~60
events and never rescans the tail; past 8192 entries (tailSpill) it
merges them at once, to keep its memory bounded. Reads in the
transaction see its appends through that copy. It also keeps each
stream head it has read or written, and the newest records it appended
(up to 4096 and 4 MiB of payload), which Tx.Record and the stream and
project reads return without decoding them again.

# The indexes

ids maps an event id to its seq. A retried append is recognised by its
ids, and compared with the stored record: the same stream, type, schema,
project, correlation id, causation id and data make it a duplicate (the
time, actor and session may differ), anything else a conflict.

stream_idx holds a stream's seqs in chunks of 64 versions: chunk c holds
versions 64c+1 to 64c+64, as many as the stream has, in order; every chunk
but the stream's last is full. A merge rewrites a stream's last chunk with
its new seqs (or starts the next one). Against one entry per version, a
page holds a few chunks instead of 65 entries, so the index takes about 12
bytes per event instead of 60, and a commit, which copies each page it
touches into memory and back, does far less work there. A stream's head
(its version and the seq of its last event) is its last entry in the tail
or else its last chunk, read with one seek; there is no bucket of stream
heads, which cost every append one more B-tree.

project_idx holds a project's seqs the same way, in chunks of at most 64
ascending seqs keyed by their first seq; a merge rewrites the project's
last chunk or, when it is full, starts one keyed by the new seq. It takes
about 11 bytes per event instead of 35.

Every transaction that writes the log or the indexes sets how full bbolt
leaves the pages it splits (Bucket.FillPercent; bbolt's default 0.5 leaves
append-only pages half empty): log 1.0 (seqs only grow), stream_idx 0.7
(each stream grows at the end of its own key range, so new chunks land
all over the bucket), ids 0.9 (UUIDv7: in time order but random within a
millisecond), project_idx 0.9, index_tail 1.0; and the caller's
buckets (Tx.Put, Tx.Delete: every writable handle) 0.9 (fillCaller).
See append.go for the measurements per bucket. bbolt grows the file 1 MiB ahead of its pages
(DB.AllocSize; its default of 16 MiB made small files up to 16 MiB larger
than their data).

# Records

In format 1, a record is a msgpack array of 15 elements followed by a
4-byte big-endian CRC32C (Castagnoli) of the array's bytes:

	0 seq (uint)        5 schema (uint)       10 correlation id (bin 16, or nil)
	1 event id (bin 16) 6 time (int, unix ns) 11 causation id (bin 16, or nil)
	2 stream (str)      7 actor (str)         12 data (bin, msgpack payload)
	3 version (uint)    8 session (str)       13 prev hash (bin 32)
	4 type (str)        9 project (str)       14 hash (bin 32)

hash = SHA-256(prev hash || the array's bytes up to, not including, element
14). The first record's prev hash is 32 zero bytes. Element 14 is always the
last 34 bytes of the array (bin8 header 0xc4 0x20 and 32 bytes). These are
the record's canonical bytes: the hash is over them in every format, and
a second backend (PostgreSQL) must produce them to produce the same chain.

In format 2, a record leaves out what it can derive: the seq, which is
its key, and the prev hash, which is the hash the record at seq-1 holds.
It is a msgpack array of 13 elements, format 1's without elements 0 and
13, followed by a 4-byte big-endian CRC32C of the seq (8 bytes big-endian,
the key) followed by the array's bytes:

	0 event id (bin 16) 5 time (int, unix ns) 10 causation id (bin 16, or nil)
	1 stream (str)      6 actor (str)         11 data (bin, msgpack payload)
	2 version (uint)    7 session (str)       12 hash (bin 32)
	3 type (str)        8 project (str)
	4 schema (uint)     9 correlation id (bin 16, or nil)

Its hash is the same as in format 1: SHA-256(prev hash || 0x9f, the seq as
a msgpack uint, the 13-element array's bytes after its first byte and
before the hash element, 0xc4 0x20, prev hash) — the format-1 body, put
back together as it is fed to SHA-256. So a record read alone (Tx.Record,
ReadStream, ReadProject) needs the hash of the record before it: the
cursor that finds the record finds that one first (one seek for both),
and the CRC of that record is checked before its hash is used. ReadRange,
Replay and Verify carry each record's hash on to the next. The first
byte of a record says its format (0x9f: 15 elements, 0x9d: 13), which
Salvage uses when meta is lost; everywhere else the file's format picks
the codec, and a record of the other format is corruption. The CRC
covering the key keeps what the seq element did for reads that do not
check the hash (Replay): a record copied under another key fails it.

Every value is in its shortest msgpack form: positive fixint, uint 8, 16,
32 or 64 for unsigned values (and for non-negative times), negative fixint
or int 8, 16, 32, 64 for negative times; fixstr, str 8, 16 or 32; bin 8, 16
or 32; nil for a zero correlation or causation id and for a nil payload (an
empty payload is bin 8 of length 0). A reader refuses any other form, so a
record has exactly one byte form: whatever decodes re-encodes to the same
bytes. These are the forms github.com/vmihailenco/msgpack/v5 writes; the
codec is hand-written (codec.go) and tested against that library.

# Invariants

  - seqs are 1..head_seq with no gap; record n's prev hash is record n-1's hash;
    meta's head is the last record's seq and hash.
  - every stream's versions are 1..v with no gap, in seq order.
  - a record's time is never before the time of the record before it:
    an append takes the later of its event's time and the head record's
    (read once per transaction, inside it, so processes on clocks that
    differ or step back still write times in seq order). Files written
    before this rule may hold earlier times after later ones; Verify does
    not refuse them.
  - index_tail holds an entry for each record from some seq to the head
    (none: the tail is empty), saying the record's id, stream, version and
    project; for each record before it, ids maps its id to its seq,
    stream_idx holds its seq in the slot of its stream and version, and
    project_idx lists it once, in a chunk of its project whose first seq
    is the chunk's key, if it has a project. The indexes and the tail hold
    nothing else.
  - nothing is ever rewritten or deleted in log or ids; a stream_idx or
    project_idx chunk only ever grows; index_tail entries are deleted only
    by the merge that puts them into the indexes.

Verify checks all of them and returns the first violation as a
*CorruptionError with the seq of the first bad record. In format 2 a
broken chain (a record rewritten with a recomputed hash) shows as the
next record's hash not matching its content, at the same seq as format
1's "prev hash does not match".

# Reads and the hash chain

The audit reads (ReadRange, ReadStream, ReadProject, Tx.Record) check the
record's CRC32C, its framing (one byte form, lengths within the record,
the hash field's shape), that it says the seq it is stored under (format
1; in format 2 the CRC covers the key), and its SHA-256 hash against its
content (in format 2, with the prev hash the record before holds). Verify also follows the chain from record
to record and to meta's head. A record handed to their callbacks owns its
memory: its strings and Data are copies made once per record (the strings
share one allocation), never views of bbolt's pages, so callers may keep
records after the transaction.

Replay is the read for folding the log into projections (a rebuild, the
engine's replay for verify, catching a cache up). It checks the CRC32C,
the framing and the seq (format 2: through the CRC), not the hash, and it lends its callback one
Record, reused from record to record, whose Data is a view of bbolt's
page: valid only until the callback returns (the strings are still
copies, which a long walk takes from a cache of the strings of the
records before it: a record's stream, type, actor, session and project
mostly repeat, and a hit saves an allocation per record). The hash guards the audit trail against a record rewritten on
purpose with a recomputed CRC; the projections a replay builds live in
the same file without such a guard, so checking the hash there would
protect nothing that an editor of the file could not change anyway.
Verify (flowctl verify) still catches the rewrite, and `flowctl log` and
`flowctl export` refuse it.

What it saves, for a record with a 200-byte payload (thread CPU time,
SHA-NI): CRC32C 26 ns, decoding 240 ns, SHA-256 290 ns, plus the copy of
Data. On the 1M-event file of cmd/flowbench, ReadRange reads 1.75-1.80M
records/s and Replay 6.0-6.2M/s (rows read_checked and read_decode). The
constant hashOnRead turns the check of the audit reads off, for
measurement.

Replay's Data is a view of bbolt's page, valid while the transaction is
and bbolt leaves the page alone: a callback that writes to the log in the
same (writable) transaction must copy what it needs first.

ReplaySplit is Replay on several goroutines, for folds whose projects are
independent: the walk reads only each record's project and hands the
record's page bytes, undecoded and uncopied, to the worker its project
goes to, which checks and decodes them as Replay does and calls back in
seq order; the error returned is the earliest record's. The transaction
must not be written until it returns.

# Caveats

A file whose format is newer than FormatVersion is refused for writing
(ErrNewerFormat) and opened read-only only if its min_reader allows. A
format-1 file stays format 1 until Upgrade rewrites it; Log.Format says
which a file is. An
empty file is refused unless Options.Create is set. Open waits at most
Options.Timeout for the file lock, then fails with ErrBusy; a read-only open
takes a shared lock, so readers block writers only while they are open.
Records are decoded with every length checked against the record's size,
after the CRC; a damaged bbolt page that makes bbolt panic is reported as a
*CorruptionError naming the page, in a read or an update alike (a panic
raised in bbolt's code is damage, one in the caller's a bug); the update is
rolled back. bbolt finds most page damage only when a transaction touches
the page, so a writable Open checks, in O(1), where every write goes: both
meta pages, and that the last record verifies and is meta's head; it
refuses a file that fails (reads still work), and removes the copies that
killed Compacts left beside the file. Salvage copies what verifies out of a
damaged file: the records 1..n that verify and chain, read through bbolt,
skipping pages that panic, or found by scanning the file's leaf pages.
*/
package eventlog
