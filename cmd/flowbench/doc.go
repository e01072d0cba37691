/*
Command flowbench measures flowctl against the performance targets of
DESIGN.md §11. Every figure is measured against a baseline taken in the
same run, on the same disk, in turns with it, because the machines it runs
on are shared and noisy: read the ratios.

It is a module of its own (cmd/flowbench/go.mod, with a replace of the
main module by ../..), so that its SQLite driver never becomes a
dependency of flowctl. Build and test it from its directory:

	cd cmd/flowbench && go build -o flowbench . && go test ./...

# Basics

	flowbench gen --events N --db PATH [--projects P] [--seed S] [--force]

writes a new flowctl file with a realistic history of about N events (the
workload of internal/workload, shared with the engine's benchmarks and
tests), through the engine's own commands (flow.Engine.Batch, 1000 commands a
transaction, without fsync): projects taking turns at random, each working
through its tasks one at a time, 28 events a task (created with up to two
dependencies, started, three steps each added, started, half done and
completed, six context merges, two notes, three exec records, an approval
requested and granted, done), a plan per 40 tasks and a checkpoint per 5000
events of a project; automatic snapshots as the engine takes them. It
refuses to overwrite a file unless --force, shows progress on stderr when
that is a terminal, and prints one line: events, seconds, events/s, file
size and bytes per event.

	flowbench run [--quick] [-o text|json] [--dir DIR] [--flowctl PATH] [--events N] [--projects P] [--check] [--only W,...] [--pg URL]

builds flowctl (go build ./cmd/flowctl in the source tree, found from the
working directory up: run it from the repository, or pass --flowctl),
generates a file of --events events (default 1,000,000; 50,000 with
--quick) into --dir, and measures the rows below. --dir (default: a new
temporary directory, removed at the end) keeps the generated file
(gen-EVENTS-pPROJECTS-vFOLD.PROJ-sSNAP-lLOG.db, FOLD the projection
version, PROJ flow's projection record format, SNAP the snapshot format
and LOG the event log's file format, so that a new fold or format gets a
new file) and its marker (PATH.done, what gen reported) for
the next run, which reuses them;
every other file is removed. --only runs only the named workloads
(append_single, append_group8, replay, bytes_per_event, point_in_time,
cache_hit, cli, scale, search, bulk, rebuild, serve, pg: the groups of rows below, in order;
scale and bulk are the rows of issue 15, search those of issue 19); rows whose baseline another
workload measures then have a baseline of 0. Text output starts with the machine (CPU,
cores, OS/arch, Go version, the file system of --dir) and ends with the
run's time; JSON output is the rows alone. --quick runs everything at
small sizes in well under a minute on two cores (the flowctl build
included, when Go's build cache is warm).

# Rows

	row                    value                                   baseline                                 target
	append_single          µs per durable one-event Log.Append     µs per durable raw bbolt one-Put commit  ratio <= 1.3
	sqlite_append_single   µs per durable one-row SQLite insert    append_single's value                    -
	append_group8          events/s, 8 goroutines appending        events/s, 1 goroutine appending          ratio >= 5
	replay                 events/s, decode + fold of the file     events/s, bbolt cursor over the log      value >= 1000000
	replay_1core           events/s, replay with GOMAXPROCS 1      replay's value                           value >= 1000000
	replay_parallel        events/s, Engine.Replay on every core   the same with GOMAXPROCS 1               ratio >= 1.7 (2+ cores)
	read_decode            events/s, decode only                   the same bbolt scan                      -
	read_checked           events/s, decode + SHA-256 check        read_decode's value                      -
	sqlite_read_decode     events/s, SELECT all rows + decode      read_decode's value                      -
	sqlite_replay          events/s, the same + fold               replay's value                           -
	bytes_per_event        file size / events (200-byte payloads)  the same records in SQLite               value <= 600
	bytes_per_event_alloc  allocated bytes / events, the same      the same, SQLite                         -
	bytes_per_event_gen    the generated file as gen left it       its events in SQLite (no projections)    -
	point_in_time          ms per task read at a random seq        ms per read of it at the head, uncached  value <= 2
	cache_hit              ns per Engine.Task hitting the cache    ns per read through a 1-entry cache      value <= 200
	cli_task_show          median ms of flowctl task show          median ms of flowctl --version           ratio <= 2, RSS <= 64 MiB
	cli_status             median ms of flowctl status             the same                                 ratio <= 2, RSS <= 64 MiB
	cli_ready              median ms of flowctl ready              the same                                 ratio <= 2, RSS <= 64 MiB
	cli_task_add           median ms of flowctl task add           the same                                 -
	cli_log_tail           log --limit 20 (the whole file)         median ms of flowctl --version, its own  ratio <= 3, RSS <= 64 MiB
	cli_log_project        log --limit 20 --project P              the same                                 ratio <= 3, RSS <= 64 MiB
	cli_log_type           log --type 'approval.*' --limit 5       the same                                 ratio <= 5, RSS <= 64 MiB
	cli_ctx_history        ctx history T --project P               the same                                 ratio <= 3, RSS <= 64 MiB
	cli_prime              prime --project P                       the same                                 ratio <= 5, RSS <= 64 MiB
	cli_report_task        report T --project P                    the same                                 ratio <= 3, RSS <= 64 MiB
	cli_status_at          status --at HALF --project P            the same                                 ratio <= 5, RSS <= 64 MiB
	cli_diff               diff HALF HEAD --project P              the same                                 ratio <= 10, RSS <= 128 MiB
	cli_task_ls            task ls --status doing --project P      the same                                 ratio <= 5, RSS <= 64 MiB
	cli_search_project     search "go test" --project P            the same                                 ratio <= 5, RSS <= 64 MiB
	cli_search_all         search parser --all                     the same                                 ratio <= 5, RSS <= 64 MiB
	cli_search_all_two     search "go test" --all                  the same                                 ratio <= 5, RSS <= 64 MiB
	cli_export             events/s of export (whole file) > file  read_checked's value                     value >= 300000
	cli_import             events/s of import of it, a new file    cli_export's value                       value >= 100000
	cli_verify             events/s of verify                      read_checked's value                     value >= 500000
	cli_rebuild_project    seconds of rebuild --project P          seconds to fold P's events at replay's   value <= P's events / 100000
	gen                    events/s of gen, from the file's marker -                                        value >= 40000
	rebuild                events/s of Engine.Rebuild (one run)    replay's value                           -
	serve_api_*            median ms of an API call (serve.New)    50 ms                                    value <= 50
	serve_page_*           median ms of a page (webui, the same)   50 ms                                    value <= 50
	serve_sse_delivery     median ms, an append to its SSE event   100 ms                                   value <= 100
	pg_append_single       µs per one-event Update, PostgreSQL     the same on a file (store seam, fsync)   -
	pg_append_8_writers    events/s, 8 stores appending at once    8 goroutines on one file                 -
	pg_append_64_writers   events/s, the same with 64              the same with 64                         -
	pg_import              events/s of flowctl import, a database  the same into a new file                 ratio >= 0.5
	pg_replay              events/s, every record read, checked    the same on the file import made         -
	pg_cli_status          median ms of flowctl status, database   the same on the file                     -
	pg_cli_task_show       median ms of flowctl task show T-1      the same on the file                     -

The rows from cli_log_tail to gen are those of issue 15 ("read and bulk
paths at scale"), with its targets. P is the first project (proj000), T
its last task created at or before HALF, HALF half the events gen wrote
and HEAD all of them, all found in the generated part of the file, so
that every run on a file (and every file of the same size) reads the
same. The nine everyday commands take turns with a `flowctl --version`
of their own, --quick 3 rounds, else 5; the bulk rows take turns with
each other, --quick 1 round, else 3. They use only flags that flowctl had
before the issue, so that an older binary can be measured with
--flowctl: a command that it refuses or that fails fails its row, with
the command's error in the row (and after the table), and the run goes
on (today's rebuild refuses --project). With --quick the import reads
the export's first 5000 events, and the bulk rows, at 50,000 events,
count process start in their rates: they read low. gen is the rate gen
measured when it wrote the file, read from its marker (a reused file
keeps the figure of the run that generated it). cli_rebuild_project and,
like cli_task_add, the rebuild row write to the generated file.

The search rows are issue 19's: flowctl search of the generated file's
two most common words ("go test": every exec command's, and the test
file's of every context merge, 642,000 postings at 1M events) in P and
in every project, and of "parser" (every context merge and note) in
every project, in turns with a `flowctl --version` of their own, as the
everyday commands are. A file whose full-text index is of another
format (reused from an older flowbench) would be searched by reading its
log: the run rebuilds its indexes first (flowctl rebuild, which writes
to the generated file).

The serve rows are issue 16's: the handler `flowctl serve` runs (the API
and webui's pages), called in-process with httptest on the generated
file, which it opens and closes per call as the server does; the figure
is server time, from the request to the answer's last byte, median of 7
rounds (3 with --quick), on the project with the most tasks, its last
task (T-1 at its first checkpoint) and its first checkpoint. A call that
does not answer 200 fails its row with the answer. serve_sse_delivery
opens GET /api/v1/events on a loopback server and appends 21 notes (9
with --quick) from another engine opened and closed around each, at
moments spread over the stream's poll interval: the time from the append
to the note's id on the stream, median. It writes those notes to the
generated file.

The pg rows are issue 17's, run only when --pg or FLOWCTL_PG_URL names a
PostgreSQL server (any database the URL's role may create schemas in):
each store is a schema of its own (flowbench_PID_NAME, dropped at the
end) beside a file in --dir, measured in turns. The 8 and 64 writers are
as many stores (a process's connection each) on the server, goroutines
sharing one store on the file (a file opens once per process). The
import reads an export of the first project (its first 5000 events with
--quick) into a new schema and a new file, the replay and the CLI rows
read what it made. The server's durability is its own (pgtest's
throwaway cluster runs with fsync off); the file's commits are fsync'd.

Every row that runs flowctl reports the peak RSS of the process (the
largest over its rounds; Linux only) and, where issue 15 sets one, its
limit: such a row passes only if both its figure and its RSS do. flowctl
runs under a small spawner (flowbench itself, with FLOWBENCH_SPAWN set),
which times it and reads its ru_maxrss: Linux counts the memory a process
had before its exec in its peak, and Go starts children by vfork, so a
command flowbench started directly would report flowbench's own tens of
MiB. The spawner's few MiB are the floor of what a row can report.

replay_parallel is issue 15's "every core" row: the engine's replay of
the whole file (Engine.Replay, the fold of a rebuild without its writes),
which hands each project's events to one of a goroutine per CPU, on
every core against the same on one (GOMAXPROCS 1, one goroutine), in
turns; its ratio is the speedup. On a machine of one core it has no
target.

DESIGN.md's replay target is "on one core": replay runs the decode and
the fold on one goroutine, with the garbage collector free to use the
other cores; replay_1core runs the same with GOMAXPROCS 1, the collector
sharing the core. The target applies to both.

Replay and read_decode read the log as a rebuild does (eventlog's
Log.Replay: CRC32C, framing and seq checked, the record lent to the
callback); read_checked reads it as flowctl log and export do (ReadRange:
the SHA-256 hash of every record checked too, each record a copy). The
SQLite rows check neither.

Appends use events of a 200-byte msgpack payload (internal/workload's
storage event, which the eventlog package's benchmarks share). The SQLite baseline (modernc.org/sqlite, pure Go) runs
in WAL mode with synchronous=FULL, one table with the fields of an event
log record and unique indexes on (stream, version) and id; its single
append reads the stream's version, chains a SHA-256 hash and inserts, in
one transaction. The event log also keeps a project index and a stream
head table that this schema has no equivalent of. The SQLite copies of the
generated and the 200-byte files hold exactly the log's records.

Each row's figure is the median of rounds that take turns with their
baseline (a, b, a, b, ...); a round's figure is the mean of its
operations, except for the CLI rows, where a round is one process.

# JSON output (-o json)

One array of objects, one per row, in the order above:

	{"name": "append_single", "value": 512.3, "unit": "µs", "baseline": 430.1,
	 "ratio": 1.19, "target": 1.3, "target_on": "ratio", "target_op": "<=", "pass": true}
	{"name": "cli_prime", "value": 148.2, "unit": "ms", "baseline": 9.4, "ratio": 15.8,
	 "target": 5, "target_on": "ratio", "target_op": "<=", "pass": false,
	 "rss_mib": 46.8, "rss_target_mib": 64}

value and baseline are in unit (baseline_unit, when present, names the
baseline's unit where it differs); ratio is value/baseline; target,
target_on ("ratio" or "value") and target_op ("<=" or ">=") are null
for a row without a target, which always passes. pass is target_on's
figure compared with target; a ratio target fails without a baseline.
rss_mib (the peak RSS of the flowctl process, MiB) is present on the rows
that run flowctl, on Linux; rss_target_mib where the row has an RSS
limit, which pass then includes. error, present only when the row could
not be measured (its command failed), says why: its value is then 0 and
pass false. Fields are only ever added.

# Exit codes

0 when the run finished, whether or not rows passed (it is a measuring
tool); 1 on an error, or with --check when a row failed; 2 for a bad
command line.

# Caveats

The durable rows need a real disk under --dir: a tmpfs makes fsync free.
The cli_task_add and rebuild rows write to the generated file (a few tasks
a run, and rewritten projections), so a reused file grows a little;
bytes_per_event_gen reads the size gen recorded. A generated file of
1,000,000 events takes about four minutes to write and several GB on disk
(automatic snapshots of whole projects). --cpuprofile FILE writes a CPU
profile of either command; gen's hidden --memprofile FILE writes its
allocations (go tool pprof -sample_index=alloc_space).
*/
package main
