/*
Package eventview is the JSON view of event payloads, below package flow:
what flow's Event.Data shows (log, export, watch, MCP) and what import
reads back when an event comes with data alone.

The view of event data follows the JSON contract: a field that stores
JSON text (a context patch, an approval's action, a task's context in a
rollback) is shown as that JSON value, and a field that stores unix
nanoseconds as an RFC 3339 time (null for 0). The stored payload is
unchanged; export carries its bytes in Raw. Import turns the view back
(Unview) when an event comes with data alone.

The rules are per event type at projection.SchemaVersion (view.go); a
type or schema this binary does not know is shown as stored. JSON text
that check.JSON refuses (stored before the check existed) stays a string.
Depth is how many levels down in an export line the deepest JSON text
starts, so that import allows a context MaxJSONDepth deep in it.
*/
package eventview
