/*
Package workload is flowctl's one benchmark workload: the history that
`flowbench gen`, the engine's benchmarks and the tests that need a big,
realistic file all write, drawn deterministically from a seed.

# Basics

A Generator hands out Ops, one event each: first one CreateProject per
project, then the commands of projects that take turns at random. Each
project works through its tasks one at a time, as an assistant does:

	task created (in the current plan, depending on up to two of the
	twenty tasks before it) -> doing -> three steps, each added, started,
	half done and completed -> six context merges -> two notes -> three
	exec records -> an approval requested and granted -> done

28 events a task; a new plan every 40 tasks; a checkpoint every
CheckpointEvery events of a project. The same Options give the same Ops,
whatever runs them.

An Op is plain data: the package imports nothing of flowctl, so that the
tests of every package (eventlog, projection, flow) may use it. Running Ops
is the caller's: package flowrun runs them through the engine's public
commands; the engine's own benchmarks run them through flow.Engine.Batch,
and projection's tests turn them into the events the engine would write.

Payload and Commits are the storage workload of the eventlog-level
benchmarks: one 200-byte event, appended in runs over many streams.

# Caveats

Ops carry the ids the engine will assign ("T-3", "T-3.2", "A-1", ...),
counted per project as the engine counts them; they hold only on a file
that the Ops alone wrote, from its first event. Runners check the ids the
engine returns against them (flowrun does).

The Ops' texts and mix are what the figures in BENCHMARKS.md were measured
on: change them and the figures are no longer comparable.
*/
package workload
