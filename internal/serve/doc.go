// Package serve is `flowctl serve`: the HTTP/JSON API under /api/v1, its
// server-sent event stream, its OpenAPI document, and the security that
// wraps the whole site (the web UI included).
//
// # Basics
//
// New builds the handler from a Config. Every API read opens the flow file
// read-only for that request, answers into memory, closes the file and only
// then writes the answer, so a slow client never keeps a CLI writer waiting
// (as the MCP server does). A write opens the file writable for the one
// engine call the CLI makes for the same command. The JSON of an answer is
// the CLI's `-o json` for the same question, byte for byte: one entity is
// json.Encoder's line (HTML not escaped), a list is the CLI's array (one
// item per line), both shaped by package view; an error is the CLI's JSON
// error object, with an HTTP status for its code (errStatus).
//
// GET /api/v1/events is a server-sent event stream built on flow.Follow:
// `id:` is the event's seq, so a browser that reconnects with Last-Event-ID
// resumes after it, never missing or repeating an event.
//
// # Security
//
// Every response carries a strict Content-Security-Policy (no inline script
// or style), nosniff, no-referrer and DENY framing. The Host header must
// name the address the server listens on (DNS rebinding), and an Origin,
// when a browser sends one, must be that host. A write needs the token:
// `Authorization: Bearer TOKEN`, or the cookie flowctl_token that
// /auth?t=ONETIME sets, with the header X-Flowctl-CSRF: 1 and a matching
// Origin (a cross-site form can set neither). ReadOnly refuses every write
// (403). On an address that is not loopback every request needs the token.
//
// # Caveats
//
// The server holds no state of the file between requests but a read cache
// (flow.Cache), which is never the source of truth. A stream polls the file
// every 100 ms (StreamInterval, through flow.Follow), so an event appended
// by any process reaches a connected client within about that.
package serve
