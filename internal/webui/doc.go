// Package webui is the web dashboard of `flowctl serve`: HTML pages under
// /, /p/{project}/... and their assets under /assets/ (embedded).
//
// # Basics
//
// New returns an http.Handler. Every page opens the flow file read-only
// for the request, reads what it shows through the engine and package
// digest (the same data the CLI prints), closes the file, and only then
// renders: a CLI writer is never locked out for longer than one read.
// Pages are html/template documents (everything user-written is escaped)
// that are readable without JavaScript; /assets/app.js adds the live
// refresh (an EventSource on /api/v1/events that re-fetches the page and
// swaps its <main>) and performs writes with fetch to /api/v1 (cookie and
// the header X-Flowctl-CSRF: 1). The pages carry no inline script or
// style, so that a strict Content-Security-Policy holds.
//
// Every project page takes ?at=POINT (a seq, C-n or an RFC 3339 time) and
// then shows the project as it stood there, statically, with a banner.
//
// # Hooks for browser tests
//
// Elements tests may rely on carry stable ids and data attributes:
// <main data-project data-seq data-live data-at>, cards data-task="T-n"
// and data-status, columns id="col-{status}", approvals id="approval-A-n"
// with buttons id="approve-A-n" and id="deny-A-n" and the comment
// id="comment-A-n", the point picker form id="at-form" with its input
// id="at-input", the banner id="at-banner", the graph region id="graph".
// The README of the package's report lists them all.
//
// # Caveats
//
// Writes need JavaScript (the API takes JSON and a CSRF header); without
// it the pages show the CLI command that does the same. Config.ReadOnly
// hides every write control.
package webui
