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
// Elements that tests may rely on carry stable ids and data attributes:
//
//   - every page: <main id="main" data-page data-project data-seq
//     data-live> (data-at and data-at-seq on a past view), the live state
//     id="live-state" data-state="off|on|error", the tabs id="tab-{name}",
//     id="read-only" in read-only mode;
//   - the point picker: form id="at-form", input id="at-input", button
//     id="at-go"; on ?at= the banner id="at-banner" with id="at-now";
//   - overview: id="counts" with data-count="{status}", id="ready",
//     id="blocked", id="claims", id="pending", id="steps", id="activity",
//     rows data-task="T-n", data-approval="A-n", data-step="T-n.m";
//   - board: id="board", columns id="col-{status}" data-status, cards
//     id="card-T-n" data-task="T-n" data-status, filters id="board-filters"
//     (id="f-plan", "f-owner", "f-tag", "f-q", "f-go", "f-clear");
//   - task: id="task" data-task data-status data-version, id="fields",
//     id="steps" (rows id="step-T-n.m" data-status), id="context"
//     (data-key, id="ctx-{path}", id="ctx-history-{key}"), id="execs"
//     (id="exec-X-n" data-exit), id="timeline", id="notes",
//     id="memories", id="approvals"; writes id="move-form" (id="move-to",
//     "move-note", "move-go") and id="note-form" (id="note-text",
//     "note-go");
//   - history: id="log-filters" (id="l-type", "l-actor", "l-session",
//     "l-task", "l-go"), id="log", events id="ev-{seq}" data-seq data-type,
//     id="log-older", id="log-open", id="log-error";
//   - approvals: id="approval-A-n" data-status data-hash, id="action-A-n",
//     id="hash-A-n", id="comment-A-n", buttons id="approve-A-n" and
//     id="deny-A-n";
//   - checkpoints: rows id="checkpoint-C-n", links id="view-C-n",
//     id="diff-C-n", id="preview-C-n"; id="preview" with changes
//     data-kind data-id data-op; id="rollback-form", id="rollback-confirm"
//     (data-expect), id="rollback-apply";
//   - stats: id="stat-totals", id="tools-chart", id="commands",
//     id="task-stats"; chart rows data-label;
//   - diff: id="diff-form" (id="diff-a", "diff-b", "diff-go"), id="diff"
//     data-from data-to, id="diff-error";
//   - graph: id="graph" data-project data-at data-task data-shown
//     data-total holding the SVG of package digest (svg.flow-graph, nodes
//     a.node data-id="T-n" with class st-{status}, edges path.edge
//     data-from data-to), styled by /assets/graph.css; id="graph-count",
//     id="graph-summary", the task picker id="graph-form" (id="graph-task",
//     "graph-go", "graph-all"); on a task page id="task-graph" links to
//     its neighbourhood;
//   - an error: id="error" data-status, id="error-message".
//
// A write form has data-api (its button may have its own); app.js posts
// its named fields as JSON, "true"/"false" as booleans where the input has
// data-bool, and shows the outcome in its <output class="result">.
//
// # Caveats
//
// Writes need JavaScript (the API takes JSON and a CSRF header); without
// it the pages show the CLI command that does the same. Config.ReadOnly
// hides every write control.
package webui
