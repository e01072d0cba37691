/*
Package history is the machinery of flow's reads at a point: what the
engine's views at a seq, checkpoint or time (Engine.At) rest on, below the
engine. It imports flow/store, projection and its siblings projstore and
snapstore, never flow; the engine keeps Point, its resolution and
Engine.At, and calls in here.

# Reads of one entity

One entity (a task with its context and steps, a plan, an approval, an
exec record) is folded from its own stream and the project's rollbacks up
to the point (EntityAt), which relies on every event being on the stream
of the entity it changes (CheckPlacement; the engine's Import refuses
others, as a *PlacementError it reports as invalid input). Lists and
overviews read the project's whole state instead: the nearest snapshot
at or below the point plus the events after it (snapstore.StateAt).

Source is what a view at a point reads, a projstore.Source: a read of one
entity by id is answered by the inline projections when the entity has
not changed since the point, else by its fold (EntityAt); anything else,
or a fold that fails, builds the whole state once and reads from it.
Both ways give the same entity, byte for byte (flow's
TestProperty_EntityAtEqualsWholeStateAt).

# Status and diffs from a summary

A status at a point reads the status summary stored with the nearest
snapshot at or below it and folds the events after it over only the
entities they touch (tail.go). A diff of two near points does the same
from the summary under the earlier point to the later one, keeping each
touched entity as it stood at both points (Between): entities no event
between the points touched are the same at both and are not read. It
declines (ErrNotBetween) when a rollback is among the events, when there
is no summary, or when the events are many against the two states'
entities (then reading both states from snapshots is cheaper, and the
engine does: snapstore.DiffAt, DiffHead).

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
the caller's transaction is the only state. A Source keeps what it read
in its transaction (the whole state, entity folds): it is used in that
transaction only, by one goroutine.
*/
package history
