// Package view turns the engine's entities into the JSON that every
// adapter prints: `flowctl -o json`, the MCP server's structured results
// and, later, the HTTP API. One shape per entity, so that the same
// question gets the same answer at every door.
//
// The rules (README, "JSON output contract"):
//
//   - field names are snake_case, one name per meaning, and only ever
//     added;
//   - times are RFC 3339 in UTC with nanoseconds, null when unset
//     (projection.Time);
//   - JSON the user gave (a task's context, an approval's action) is a
//     JSON value, never a string holding JSON text; a context is always
//     an object;
//   - every entity carries version, seq, created_at, created_by and
//     updated_at (projection.Meta).
//
// An adapter may leave fields out (the MCP server's list items, its exec
// summary) but never renames or reformats one. Of is the entry point of
// the CLI's printer: it shapes any engine value it knows and passes the
// others through.
//
// The payload of an event (Event.Data) is shaped by the engine itself
// (flow/internal/eventview), since export writes the same view and import
// reads it back.
package view
