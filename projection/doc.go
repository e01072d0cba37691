/*
Package projection holds the event catalog (one typed payload per event
type, with explicit msgpack tags and a schema version) and the pure fold
from events to state. It does no I/O and reads no clock: times and ids
arrive in the events.

# Codecs

The msgpack tags of the payloads and entities are the stored format. The
fold decodes payloads, and AppendScope and DecodeScope write and read a
project's state, with codecs generated from the types rather than
reflection: cmd gencodec (internal/gencodec, run by go generate) reads
the structs whose doc comment carries a //codec: directive and writes,
for each source file, codec_<file>_gen.go with their fields tables,
decoders and encoders, built on the hand-written primitives of
msgpack.go (mpReader, its string cache, decodeStruct, appendStr, ...).
They write byte for byte what vmihailenco/msgpack's reflection encoder
writes for these types, and read what its decoder reads, into the same
values, failing where it fails (unknown fields skipped, missing ones
zero, any integer width, bin for str, nil for anything, a struct as an
array of all its fields). The tests hold them to that against the
reflection codec, on random values, on every variation of encoding the
decoder accepts, and on arbitrary bytes (FuzzDecode_MatchesReflection);
gencodec's own test fails when the committed files are not what it
writes from the sources now, and it has no rule to leave a field out: a
field of a type it does not know is an error.

Written by hand, because they are not per-type boilerplate: the
primitives of msgpack.go; DecodeScope and AppendScope (a reader with a
string cache and a bound on nesting around the generated Scope codec);
AppendEntity and DecodeEntity (a switch over the six entity types); and
the fold's readers of StepStatusChanged and NoteAdded that leave the
fields it only looks up (or not at all) in the payload instead of making
strings of them (decodeRefs in codec_events.go): they are the generated
decoders with a field or two read differently, a choice of the fold, not
of the type, which a directive would only spell less clearly than the
ten lines they take.

MergePatch and Canonical give the canonical JSON that encoding/json gave
(sorted keys, the last of a repeated key, its escaping, numbers as
written); the tests hold them to the encoding/json implementation they
replace (FuzzMergePatch_MatchesReference).

# Memory and concurrency

Apply keeps no reference to the record or its Data; it may run
concurrently on different Stores. Strings that repeat from event to event
(ids, actors, commands, outputs) share one copy, through a cache kept
by the Memory folded into (pooled per goroutine for other Stores).
MergePatch and Canonical remember the last documents they returned (the
fold's memory is kept by the Memory too), so that the next merge into a
task's context need not read it again; a document not remembered that
is canonical already is read in one pass that checks it and finds its
members, without decoding and writing it again; any other document
takes the long way. All of this only saves work: the results are the
same without it. A Memory is changed by one goroutine at a time.
*/
package projection

//go:generate go run ./internal/gencodec

// Version is the version of the projection layout and fold. When the code's
// version differs from the one stored with a file's projections, the engine
// rebuilds them from the log. 5: steps carry the times and attempt the
// fold derives from their moves (older histories get them on the
// rebuild), tasks their parent, children and due date.
const Version = 5
