package history

import (
	"errors"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// EntityAt folds into a new memory what the entity whose stream is
// stream (a task's or a plan's) depends on, up to seq: the project's
// events on that stream, and the rollbacks on the project's own stream
// after the stream's first event. A project stands in for the project
// (the fold counts events and ids on it, which the entity does not read).
// It returns nil when the fold fails: the caller then reads the whole
// state, which folds the same events among all the others and says what
// is wrong, if anything is. warn reports a rollback index it does not
// trust (ProjectRollbacks).
//
// That this is the entity the whole state holds rests on where commands
// put their events (the fold itself reads ids from payloads):
//
//   - every event that changes a task is on the task's stream — its own
//     events, and the notes, approval requests and decisions and exec
//     records of the task (subjectStream) and rollbacks of the task alone
//     (Engine.Rollback with a task) — except rollbacks of the whole project,
//     which are on the project's stream (Engine.Rollback), each followed by a
//     rollback.marked event on the stream of every task it changes,
//     which records the rollback's position on the task;
//   - every event that changes a plan is on the plan's stream, except
//     rollbacks of the whole project;
//   - an approval or exec record of a task changes only with events of
//     that task's stream and rollbacks of the project: approvals and exec
//     records of a task are part of the task's fold;
//   - a rollback before an entity's first event cannot name it (ids are
//     never reused), and one that does not name it leaves it as it was.
//
// The fold reads nothing of other entities but the approval a decision
// decides (requested, restored or removed in the same fold) and the
// project (the stand-in).
func EntityAt(tx store.Tx, project, stream string, seq uint64, warn func(string, ...any)) (*projection.Memory, error) {
	mem := projection.NewMemory()
	var own []*store.Record
	err := tx.ReadStream(stream, 1, func(r *store.Record) error {
		if r.Seq > seq {
			return store.ErrStop
		}
		if r.Project == project { // as flow's Engine.stateAt reads: the project's events
			own = append(own, r)
		}
		return nil
	})
	if err != nil || len(own) == 0 {
		return mem, err // no event of it yet: it does not exist at seq
	}
	rollbacks, err := ProjectRollbacks(tx, project, firstOf(own[0]), seq, warn)
	if err != nil {
		return nil, err
	}
	mem.PutProject(&projection.Project{Name: project})
	for _, r := range mergeBySeq(own, rollbacks) {
		if err := projection.Apply(mem, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
			return nil, nil
		}
	}
	return mem, nil
}

// firstOf is the seq after which the rollbacks that can name the entity
// of a stream whose first event is r come: r's, but for a stream that
// starts with a rollback.marked (a fork's: the rollback.applied that
// made the entity comes before its stream's first event), the seq before
// that rollback's.
func firstOf(r *store.Record) uint64 {
	if r.Type != projection.TypeRollbackMarked {
		return r.Seq
	}
	var m projection.RollbackMarked
	if err := msgpack.Unmarshal(r.Data, &m); err != nil || m.Rollback == 0 || m.Rollback >= r.Seq {
		return r.Seq
	}
	return m.Rollback - 1
}

// mergeBySeq merges two lists of records, each in seq order, into one.
func mergeBySeq(a, b []*store.Record) []*store.Record {
	if len(b) == 0 {
		return a
	}
	out := make([]*store.Record, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Seq < b[0].Seq {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}
