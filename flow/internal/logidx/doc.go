/*
Package logidx is the engine's secondary index of the log: posting lists
of the seqs of the events of each type (across projects and per project),
actor and session, which the newest-first log (flow.Engine.EventsBack)
walks backwards for the filters the store's own indexes (stream and
project) do not serve. It is written through store.Tx.Put in the
transaction of the events it lists, so every backend has it, and derived
from the log: rebuilt with the projections, compared with the log by
verify. It imports neither package flow nor a backend.

# Bucket

	log_idx      kind, uint16 BE length and term, uint64 BE first seq -> the chunk's other seqs
	log_idx      'T', type                                            -> "" (the types listed: a pattern's expansion)
	log_idx      0x00 "version"                                       -> uint32 BE Format
	log_idx      0x00 "through"                                       -> uint64 BE: the log is listed up to this seq
	log_pending  kind, uint16 BE length and term                      -> the list's pending seqs (below)

The kinds are 't' (term: the type), 'p' (term: uint16 BE length and the
project, then the type), 'a' (the actor) and 's' (the session); events
without an actor, session or project are in no list of that kind. A list
is cut into chunks of ChunkSize seqs: the key holds the chunk's first seq,
the value each further seq as the uvarint of its difference from the one
before, so a chunk of a busy list takes a byte or two per event. Chunks
are canonical: the i-th chunk of a list holds its seqs i*ChunkSize up to
(i+1)*ChunkSize, whatever transactions wrote them, so a rebuild writes the
same bytes and Compare compares bytes.

# Pending seqs

The chunks hold the seqs up to the last multiple of PendingSpan (4096,
the full-text index's span) that "through" passed; the later seqs of
each list are its pending entry in bucket log_pending, keyed by the
list's prefix (format 5): the uvarint of the first seq, then of each
one's difference from the one before. Which seqs are pending depends only
on "through", so a rebuild still writes the bytes the transactions did.

# Writing

Writer buffers the seqs of one transaction's events per list. While the
index stays short of the next multiple of PendingSpan, Flush appends each
list's seqs to its pending entry: the entries of the few hundred lists a
transaction of 1000 events adds to lie on a few pages of that small
bucket, where their chunks' last ones lie on as many pages of log_idx
(bbolt copies and writes every page a transaction touches). The
transaction that passes the multiple moves every pending seq into the
chunks (it fills each list's last chunk, then adds new ones), drops the
bucket, and writes the seqs past the multiple into new entries. Flush
lists a type ('T') the first time it meets it, and moves "through" to the
last seq. Every seq it is given is larger than every seq stored. The
engine keeps one Writer per command, or per Batch. A Batch's Writer is
Async: Add only queues each event (a copy of it), a goroutine of the
Writer's own lists them, in order, while the batch's commands run, and
Flush waits for it before it writes, the bytes a Writer without it writes.

# Reading

Open returns a Cursor over the lists a Query names, newest first: the
union of the lists of the types a pattern matches, intersected with the
actor's and the session's. Cursor.Le finds the largest matching seq at
most a bound in a list's pending entry (read once, by one Get), then
with one Store.Last per chunk it enters; a reader pages by
calling it with the seq before the last it got, in a new transaction if
it likes.

# The full-text index

Format 2 added package searchidx's bucket (search_idx), format 3 changed
its chunks (each names its best posting, and a posting takes a byte or
two; see searchidx's doc.go), format 4 keeps the postings of the
events after the last multiple of searchidx.PendingSpan that "through"
passed in pending entries, one per event, out of the chunks (searchidx's
doc.go, "Pending postings"), format 5 the seqs of this package's lists
likewise (above), format 6 adds the full-text index's impact blocks (the
first posting and best posting of each chunk, which a query reads instead
of the chunks): a file of an older format is rebuilt by a
writable open, and searched by reading its log until then. Writer.Add hands
every event to a searchidx.Writer too, Flush writes both, Rebuild
rebuilds both and Compare compares both, so this package's stamp and
"through" say whether the full-text index is current as well. The
Checker of verify does not check it yet.

# Rebuild and verify

Through reports the seq the index lists the log up to, if the bucket was
built in this Format. Events past it were appended by a flowctl that does
not keep the index: readers read them from the log before walking the
index, and a writable open lists them (Sync). Current reports that
the index lists the whole log in this Format. A writable open whose
projections are not this binary's rebuilds both (Rebuild, one
transaction); when only the index is of another Format (or missing, or
behind), Sync lists the log again in bounded steps: Reset drops it with
the full-text index and stamps this Format through seq 0, then each
transaction lists the next Step events through the Writer (Add, Flush),
whose canonical chunks make the result Rebuild's bytes. A read-only
engine walks the store's indexes instead of an index of another Format,
and reads around one behind the head; a process killed between two steps
leaves an index behind, which the next writable open continues.
Compare derives the bucket from the log and reports the first key that
differs as a *store.CorruptionError. Checker is Compare fed the log by a
caller that walks it anyway (verify): it keeps each list's open chunk and
its seqs past the last multiple of PendingSpan, not every seq, and sums
the hashes of the entries (of both buckets) the log implies and of the
stored ones; when the sums differ it runs Compare to name the key.
*/
package logidx
