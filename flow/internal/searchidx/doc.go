/*
Package searchidx is the engine's full-text index: for each word of the
searchable text of the events (task titles and descriptions, the string
values of context patches, notes and memories, exec commands), per
project, a posting list of the events that hold it, with the field and
how often and in how long a text. flow.Engine.Search reads it to find
and rank candidates, then checks each against the state it answers from.
It is written through store.Tx.Put in the transaction of the events it
lists, by the log index's writer (package logidx, which owns the stamp
and the "through" seq that say whether both are current), so every
backend has it; it is derived from the log and rebuilt with it. It
imports neither package flow nor a backend.

# Words

Text is cut at every rune that is not a letter or a digit and lowered
(Unicode simple folding); words of one byte are left out, and a word is
cut at MaxWord bytes. There is no stemming: "parser" does not find
"parsers".

# Bucket

	search_idx  'w', uint16 BE length and word, uint16 BE length and project, uint64 BE first posting -> the chunk's other postings
	search_idx  'i', the same list prefix, uint64 BE its first chunk's first posting -> a block of the list's chunks' impacts (below)
	search_pending  uint64 BE seq -> the event's pending postings (below)

A posting is one uint64: the event's seq << 16 | field << 12 | min(tf, 15) << 8 | min(length, 255),
where tf is how often the word is in the field's text and length how
many words the text has. The postings of a list ascend (an event's
fields in field order); a chunk holds ChunkSize of them, the first in
the key. Chunks are canonical, as the log index's are: the i-th chunk
holds postings i*ChunkSize up to (i+1)*ChunkSize, so a rebuild writes the
same bytes, and every chunk but a list's last is full.

A chunk's value (log index format 3) is:

	uint16 BE  the low 16 bits (field, tf, length) of its best posting: the highest gain
	per further posting:
	  uvarint  the seq's difference from the posting before, << 1, | 1 when its low 16 bits differ
	  uint16 BE  those low 16 bits, when they differ

A busy list's postings mostly repeat their field, count and length, so
they take a byte or two each. The gain of a posting is its weight but
for the word's idf (BM25's saturated frequency, normalized by length,
times the field's boost: query.go), so the constants of the ranking are
part of the format: changing one is a new format, as the chunk's best
posting would no longer be its best. Format 2 (log index format 2) had
no best posting and each further posting as the uvarint of its
difference from the one before; a file of that format is searched by
reading its log until a writable open rebuilds the index.

# Impact blocks

A query needs of most chunks only their first posting and their best
posting's low bits (Reading, below), and a busy word's chunks take
hundreds of pages at 10M events. In a file grown by appends those pages
lie all over it (bbolt writes each page it changes to a free one), and
a fault maps the cached pages around the one it touches (fault-around,
large folios): "search parser --all" mapped 14 times the pages it read,
125 MiB at 10M events. So a list's full chunks are also listed in
impact blocks (log index format 6), of BlockSize chunks each, canonical
like the chunks (the i-th block lists full chunks i*BlockSize up to
(i+1)*BlockSize; every block but the last is full), whose keys are the
list prefix with 'i' for 'w' and their first chunk's first posting; the
value is, per chunk:

	uvarint    its first posting's seq's difference from the chunk's before (the block's first: 0), << 1, | 1 when its best posting's low 16 bits are its first's
	uint16 BE  the low 16 bits of its first posting
	uint16 BE  the low 16 bits of its best posting, when they differ (the chunk's value starts with them too)

Four to six bytes a chunk instead of its few hundred. A list of one chunk not
full, most of them, has no block. A transaction that fills a chunk adds
its entry to the list's last block (or starts the next).

# Pending postings

The chunks hold the postings of the events up to the last multiple of
PendingSpan (4096) that the index lists (the log index's "through"); the
postings of each later event are one pending entry, in bucket
search_pending, keyed by its seq (log index format 4):

	uint16 BE  length, and the event's project
	per posting, in the order of its list's key, then posting:
	  uint8 length and the word, uint16 BE the posting's low 16 bits

A transaction's Flush writes its events' pending entries, at the end of
their bucket, while the index stays short of the next multiple; the one
that passes it moves every pending posting into the chunks (the lists'
last chunks filled, new ones added), drops the bucket, and writes the
entries of its events past the multiple into a new one. A transaction of 1000 events touches thousands of lists, whose
chunks lie on most of the bucket's pages, and bbolt copies and writes
every page it touches: the chunks are written once every PendingSpan
seqs instead of every transaction. Which postings are pending depends
only on "through", so a rebuild still writes the same bytes as the
transactions did, and Compare compares bytes.

# Reading

A query finds its words' lists from the last, one Store.Last each (a
list's last chunk, which it decodes; the next Last is bounded by the
list's prefix, so the chunks between are not read), and reads each
list's impact blocks (keeping of each chunk only its first posting and
its best posting's low bits: 16 bytes, no pointer; a chunk decoded later
is read by its key), then the postings of its words in the pending entries (up to
PendingSpan events' entries, scanned), and decodes only the last chunk of each list (to count the postings,
and to cut them at the point searched); Lists.Top then walks the lists
of each project newest first in segments, the runs between two chunk
starts of any of them, and decodes a segment's chunks only when the sum
of their best postings' weights may beat the worst of the m candidates
kept (a tie goes to the newer event, so an older segment that can only
tie is skipped). A common word's long lists are known from their blocks and few of their
chunks read.

# Staleness

Postings are never removed: a task retitled keeps the postings of its
old title, a rollback restores text whose postings are there already.
A posting says only that the event once held the word; the reader
checks the entity's text as it stands at the point it answers for.
*/
package searchidx
