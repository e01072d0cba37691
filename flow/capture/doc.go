/*
Package capture keeps what an exec record stores of a command's stdout or
stderr: its first and last Limit bytes, its length and the SHA-256 of all
of it, in bounded memory (Writer, or String for a stream already whole).

Head and Tail are valid UTF-8 of at most Limit bytes each: a cut never
splits a rune, and invalid bytes are replaced with U+FFFD; Bytes and
SHA256 are those of the exact stream. When the stream is at most
2*Limit-4 bytes of valid UTF-8, Head+Tail is the whole of it.

The package is pure: it imports projection (for projection.Output) and
nothing of the engine. flow.RecordExec checks an Output against the same
bounds (flow.OutputLimit is Limit).
*/
package capture
