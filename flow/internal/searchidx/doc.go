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

A posting is one uint64: the event's seq << 16 | field << 12 | min(tf, 15) << 8 | min(length, 255),
where tf is how often the word is in the field's text and length how
many words the text has. The postings of a list ascend (an event's
fields in field order); a chunk holds ChunkSize of them, the first in
the key, each further one as the uvarint of its difference from the one
before. Chunks are canonical, as the log index's are: the i-th chunk
holds postings i*ChunkSize up to (i+1)*ChunkSize, so a rebuild writes the
same bytes.

# Staleness

Postings are never removed: a task retitled keeps the postings of its
old title, a rollback restores text whose postings are there already.
A posting says only that the event once held the word; the reader
checks the entity's text as it stands at the point it answers for.
*/
package searchidx
