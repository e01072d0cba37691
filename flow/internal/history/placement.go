package history

import (
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// CheckPlacement returns a *PlacementError unless event r is on the
// stream the engine's commands would have put it on, given the state src
// before it: the stream of the entity it changes (the task of a note, an
// approval, a decision or an exec record; the plan or task it creates or
// closes), the project's for the rest, and for a rollback of one task
// (on that task's stream) nothing but that task, its approvals and its
// exec records. Reads of one entity at a point (EntityAt) rely on this:
// they fold only the entity's stream and the project's rollbacks. Every
// event a command writes passes; an imported event (Engine.Import) may
// not, and should then be refused. Events of a type this binary does not
// fold pass: they change nothing. An error of src passes through.
func CheckPlacement(src projection.Store, r *store.Record) error {
	if _, known := projection.Schema(r.Type); !known {
		return nil
	}
	kind, project, _, ok := projection.ParseStream(r.Stream)
	if !ok || project != r.Project {
		return misplaced(r, "a stream of its project (project/, plan/ or task/"+r.Project+"/...)")
	}
	want, err := placement(src, r, kind)
	if err != nil || want == "" || want == r.Stream {
		return err
	}
	return misplaced(r, want)
}

// placement returns the stream r belongs on ("" when any stream of its
// project of the kind it is on will do).
func placement(src projection.Store, r *store.Record, kind string) (string, error) {
	p := r.Project
	switch r.Type {
	case projection.TypeProjectCreated, projection.TypeProjectArchived, projection.TypeCheckpointCreated,
		projection.TypeProjectSettingChanged:
		return projection.ProjectStream(p), nil
	case projection.TypePlanCreated:
		var e projection.PlanCreated
		decodePlaced(r, &e)
		return projection.PlanStream(p, e.ID), nil
	case projection.TypePlanClosed:
		var e projection.PlanClosed
		decodePlaced(r, &e)
		return projection.PlanStream(p, e.ID), nil
	case projection.TypeTaskCreated:
		var e projection.TaskCreated
		decodePlaced(r, &e)
		return projection.TaskStream(p, e.ID), nil
	case projection.TypeNoteAdded:
		var e projection.NoteAdded
		decodePlaced(r, &e)
		return subjectStream(p, e.Task), nil
	case projection.TypeApprovalRequested:
		var e projection.ApprovalRequested
		decodePlaced(r, &e)
		return subjectStream(p, e.Task), nil
	case projection.TypeExecRecorded:
		var e projection.ExecRecorded
		decodePlaced(r, &e)
		return subjectStream(p, e.Task), nil
	case projection.TypeApprovalDecided, projection.TypeApprovalConsumed:
		return decisionPlacement(src, r)
	case projection.TypeRollbackApplied:
		return rollbackPlacement(src, r, kind)
	case projection.TypeRollbackMarked:
		if kind != projection.KindPlan && kind != projection.KindTask {
			return "", misplaced(r, "a plan's or a task's stream")
		}
		return "", nil
	}
	if kind != projection.KindTask { // the task's own events: the fold takes the task from the stream
		return "", misplaced(r, "a task's stream")
	}
	return "", nil
}

// decodePlaced decodes r's payload into v; a payload that does not decode
// is left to the fold to refuse.
func decodePlaced(r *store.Record, v any) {
	if ok, _ := projection.DecodePayload(r.Data, v); !ok {
		_ = msgpack.Unmarshal(r.Data, v)
	}
}

// decisionPlacement: a decision (or the use of a granted approval)
// belongs on its approval's subject. Both payloads start with the id.
func decisionPlacement(src projection.Store, r *store.Record) (string, error) {
	var e projection.ApprovalDecided
	decodePlaced(r, &e)
	a, err := src.Approval(r.Project, e.ID)
	if err != nil || a == nil {
		return "", err // the fold refuses a decision of no approval
	}
	return subjectStream(r.Project, a.Task), nil
}

// rollbackPlacement: a rollback of the whole project belongs on the
// project's stream; one of a task, on the task's, restoring and removing
// nothing but the task, its approvals and its exec records. Whatever it
// restores belongs to its project.
func rollbackPlacement(src projection.Store, r *store.Record, kind string) (string, error) {
	var e projection.RollbackApplied
	decodePlaced(r, &e)
	if err := restoresOwn(r, e); err != nil {
		return "", err
	}
	if kind == projection.KindProject || e.Task == "" {
		return projection.ProjectStream(r.Project), nil
	}
	stream := projection.TaskStream(r.Project, e.Task)
	if r.Stream != stream {
		return stream, nil
	}
	return "", taskRollbackScope(src, r, e)
}

// restoresOwn refuses a rollback that restores an entity of another
// project.
func restoresOwn(r *store.Record, e projection.RollbackApplied) error {
	other := e.Project != nil && e.Project.Name != r.Project
	for _, v := range e.Plans {
		other = other || v.Project != r.Project
	}
	for _, v := range e.Tasks {
		other = other || v.Project != r.Project
	}
	for _, v := range e.Approvals {
		other = other || v.Project != r.Project
	}
	for _, v := range e.Execs {
		other = other || v.Project != r.Project
	}
	if other {
		return refuse(r, "restores an entity of another project than its own (%s)", r.Project)
	}
	return nil
}

// taskRollbackScope refuses a rollback of task e.Task that touches
// anything but the task, its approvals and its exec records.
func taskRollbackScope(src projection.Store, r *store.Record, e projection.RollbackApplied) error {
	ok := e.Project == nil && len(e.Plans) == 0
	for _, v := range e.Tasks {
		ok = ok && v.ID == e.Task
	}
	for _, v := range e.Approvals {
		ok = ok && v.Task == e.Task
	}
	for _, v := range e.Execs {
		ok = ok && v.Task == e.Task
	}
	for _, rm := range e.Removed {
		task, err := removedTask(src, r.Project, rm)
		if err != nil {
			return err
		}
		ok = ok && task == e.Task
	}
	if !ok {
		return refuse(r, "rolls back task %s but touches more than the task, its approvals and its exec records", e.Task)
	}
	return nil
}

// removedTask returns the task an entity a rollback removes belongs to
// ("" for one of no task, or a plan).
func removedTask(src projection.Store, project string, rm projection.Removed) (string, error) {
	switch rm.Kind {
	case projection.KindTask:
		return rm.ID, nil
	case projection.KindApproval:
		a, err := src.Approval(project, rm.ID)
		if err != nil || a == nil {
			return "", err
		}
		return a.Task, nil
	case projection.KindExec:
		x, err := src.Exec(project, rm.ID)
		if err != nil || x == nil {
			return "", err
		}
		return x.Task, nil
	}
	return "", nil
}

func misplaced(r *store.Record, want string) error {
	return refuse(r, "is on stream %q; flowctl puts it on %s", r.Stream, want)
}

// subjectStream is the stream of a task's events, or of the project's:
// where flow's commands put a note, an approval or an exec record.
func subjectStream(project, task string) string {
	if task != "" {
		return projection.TaskStream(project, task)
	}
	return projection.ProjectStream(project)
}
