/*
Package scopediff compares two states of a project (projection.Scope),
entity by entity: what flow's Rollback reports it will undo, and what
digest.Diff shows between two points.

An entity is the project, a plan, a task, an approval or an exec record
(checkpoints are markers of history, not state). Each is flattened into
its JSON fields, less the fields that change with every event (version,
seq, times, ...); a task's context becomes one field per key
(context.KEY) and its steps one per step (steps.ID). Changes come by
kind (project, plan, task, approval, exec), then by id; fields by name.

The package is pure: it reads no storage and no clock. flow re-exports
Change, FieldChange and the Op constants, which are part of the JSON of
rollback and diff.
*/
package scopediff
