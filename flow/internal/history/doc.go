/*
Package history is the machinery of flow's reads at a point: what the
engine's views at a seq, checkpoint or time (Engine.At) rest on, below the
engine. It imports flow/store and projection, never flow; the engine keeps
Point, its resolution and the view's source (atSource), and calls in here.

# Reads of one entity

One entity (a task with its context and steps, a plan, an approval, an
exec record) is folded from its own stream and the project's rollbacks up
to the point (EntityAt), which relies on every event being on the stream
of the entity it changes (CheckPlacement; the engine's Import refuses
others, as a *PlacementError it reports as invalid input). Lists and
overviews read the project's whole state instead, which the engine builds:
the nearest snapshot at or below the point plus the events after it.

# The rollback index

BucketRollbacks indexes the rollbacks of each whole project (on its own
stream), so that EntityAt finds those after an entity's first event
without reading the project's stream:

	rollback_idx  uint16 BE len, project, uint64 BE seq -> uint64 BE version of the event in project/<name>
	              uint16 BE len, project, 8 zero bytes  -> the mark (Mark): version, seq, entries

It is derived from the log alone, written by every command in the
transaction of its events (IndexRollbacks), and complete up to its mark:
ProjectRollbacks reads the project's stream after the mark, and ignores,
with a warning, an index that does not match the log. CheckIndex checks
it (flowctl verify); DropIndex and a rebuild lose nothing.

# Times

An event's time is never before the time of the event before it
(eventlog clamps it inside the write transaction), so a time names a
prefix of the log and SeqAtTime finds it by binary search.

# Concurrency

Every function works inside the store.Tx it is given and keeps nothing:
the caller's transaction is the only state.
*/
package history
