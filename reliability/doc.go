// Package reliability holds flowctl's reliability suites (DESIGN.md §7, §10,
// §12; issue 6). It has no code of its own: its tests build the flowctl
// binary once and run it as real processes against one file, then check
// the file with 'flowctl verify' and the CLI's JSON output.
//
// kill_test.go SIGKILLs writer processes at random moments and checks
// after every kill that the file verifies, that every acknowledged write
// is there and that retries with an idempotency key applied once.
// concurrency_test.go runs 8 processes of read-modify-write against one
// task (--if-version), 8 processes adding tasks, and checks that busy
// (exit 5) comes only after the lock timeout.
//
// Soak settings: FLOW_KILL_CYCLES (default 300) and FLOW_CONC_WRITES
// (writes per process, default 200).
package reliability
