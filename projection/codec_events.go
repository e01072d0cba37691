package projection

// The msgpack decoders of the payloads (see msgpack.go for the rules).
// unmarshal reads a whole payload (with a stringCache, or nil);
// decodeMsgpack reads it from a reader.

var projectCreatedFields = fieldsOf("name", "description")

func (p *ProjectCreated) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *ProjectCreated) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, projectCreatedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *ProjectCreated) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.Name)
	case 1:
		return r.str(&p.Description)
	}
	return fieldOutOfRange(i)
}

var projectArchivedFields = fieldsOf("reason")

func (p *ProjectArchived) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, projectArchivedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *ProjectArchived) decodeField(r *mpReader, i int) error {
	if i == 0 {
		return r.str(&p.Reason)
	}
	return fieldOutOfRange(i)
}

var planCreatedFields = fieldsOf("id", "title", "description")

func (p *PlanCreated) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *PlanCreated) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, planCreatedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *PlanCreated) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.ID)
	case 1:
		return r.str(&p.Title)
	case 2:
		return r.str(&p.Description)
	}
	return fieldOutOfRange(i)
}

var planClosedFields = fieldsOf("id", "reason")

func (p *PlanClosed) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *PlanClosed) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, planClosedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *PlanClosed) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.ID)
	case 1:
		return r.str(&p.Reason)
	}
	return fieldOutOfRange(i)
}

var taskCreatedFields = fieldsOf("id", "plan", "title", "description", "deps", "owner", "tags", "priority", "ref", "status")

func (p *TaskCreated) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *TaskCreated) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, taskCreatedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *TaskCreated) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.ID)
	case 1:
		return r.str(&p.Plan)
	case 2:
		return r.str(&p.Title)
	case 3:
		return r.str(&p.Description)
	case 4:
		return r.strings(&p.Deps)
	case 5:
		return r.str(&p.Owner)
	case 6:
		return r.strings(&p.Tags)
	case 7:
		return r.intField(&p.Priority)
	case 8:
		return r.str(&p.Ref)
	case 9:
		return r.str(&p.Status)
	}
	return fieldOutOfRange(i)
}

var taskUpdatedFields = fieldsOf("title", "description", "owner", "tags", "priority", "plan")

func (p *TaskUpdated) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *TaskUpdated) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, taskUpdatedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *TaskUpdated) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return ptrField(r, &p.Title, r.str)
	case 1:
		return ptrField(r, &p.Description, r.str)
	case 2:
		return ptrField(r, &p.Owner, r.str)
	case 3:
		return ptrField(r, &p.Tags, r.strings)
	case 4:
		return ptrField(r, &p.Priority, r.intField)
	case 5:
		return ptrField(r, &p.Plan, r.str)
	}
	return fieldOutOfRange(i)
}

var taskDepsChangedFields = fieldsOf("added", "removed")

func (p *TaskDepsChanged) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *TaskDepsChanged) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, taskDepsChangedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *TaskDepsChanged) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.strings(&p.Added)
	case 1:
		return r.strings(&p.Removed)
	}
	return fieldOutOfRange(i)
}

var taskStatusChangedFields = fieldsOf("from", "to", "reason", "forced")

func (p *TaskStatusChanged) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *TaskStatusChanged) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, taskStatusChangedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *TaskStatusChanged) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.From)
	case 1:
		return r.str(&p.To)
	case 2:
		return r.str(&p.Reason)
	case 3:
		return r.boolField(&p.Forced)
	}
	return fieldOutOfRange(i)
}

var taskClaimedFields = fieldsOf("actor", "session", "lease_until")

func (p *TaskClaimed) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *TaskClaimed) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, taskClaimedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *TaskClaimed) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.Actor)
	case 1:
		return r.str(&p.Session)
	case 2:
		return r.int64Field(&p.LeaseUntil)
	}
	return fieldOutOfRange(i)
}

var taskReleasedFields = fieldsOf("actor", "session", "reason")

func (p *TaskReleased) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, taskReleasedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *TaskReleased) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.Actor)
	case 1:
		return r.str(&p.Session)
	case 2:
		return r.str(&p.Reason)
	}
	return fieldOutOfRange(i)
}

var taskContextMergedFields = fieldsOf("patch", "replace")

func (p *TaskContextMerged) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *TaskContextMerged) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, taskContextMergedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *TaskContextMerged) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.Patch)
	case 1:
		return r.boolField(&p.Replace)
	}
	return fieldOutOfRange(i)
}

var stepAddedFields = fieldsOf("id", "title")

func (p *StepAdded) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *StepAdded) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, stepAddedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *StepAdded) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.ID)
	case 1:
		return r.str(&p.Title)
	}
	return fieldOutOfRange(i)
}

var stepStatusChangedFields = fieldsOf("id", "to", "progress", "note", "result", "error")

func (p *StepStatusChanged) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, stepStatusChangedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *StepStatusChanged) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.ID)
	case 1:
		return r.str(&p.To)
	case 2:
		return ptrField(r, &p.Progress, r.intField)
	case 3:
		return r.str(&p.Note)
	case 4:
		return r.str(&p.Result)
	case 5:
		return r.str(&p.Error)
	}
	return fieldOutOfRange(i)
}

var noteAddedFields = fieldsOf("task", "text", "kind", "occurred_at")

func (p *NoteAdded) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, noteAddedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *NoteAdded) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.Task)
	case 1:
		return r.str(&p.Text)
	case 2:
		return r.str(&p.Kind)
	case 3:
		return r.timeField(&p.OccurredAt)
	}
	return fieldOutOfRange(i)
}

var approvalRequestedFields = fieldsOf("id", "task", "step", "message", "code", "action", "action_hash", "expires")

func (p *ApprovalRequested) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *ApprovalRequested) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, approvalRequestedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *ApprovalRequested) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.ID)
	case 1:
		return r.str(&p.Task)
	case 2:
		return r.str(&p.Step)
	case 3:
		return r.str(&p.Message)
	case 4:
		return r.str(&p.Code)
	case 5:
		return r.str(&p.Action)
	case 6:
		return r.str(&p.ActionHash)
	case 7:
		return r.int64Field(&p.Expires)
	}
	return fieldOutOfRange(i)
}

var approvalDecidedFields = fieldsOf("id", "decision", "by", "comment")

func (p *ApprovalDecided) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *ApprovalDecided) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, approvalDecidedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *ApprovalDecided) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.ID)
	case 1:
		return r.str(&p.Decision)
	case 2:
		return r.str(&p.By)
	case 3:
		return r.str(&p.Comment)
	}
	return fieldOutOfRange(i)
}

var checkpointCreatedFields = fieldsOf("id", "label", "at_seq", "task", "git_head")

func (p *CheckpointCreated) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *CheckpointCreated) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, checkpointCreatedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *CheckpointCreated) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.ID)
	case 1:
		return r.str(&p.Label)
	case 2:
		return r.uintField(&p.AtSeq)
	case 3:
		return r.str(&p.Task)
	case 4:
		return r.str(&p.GitHead)
	}
	return fieldOutOfRange(i)
}

var removedFields = fieldsOf("kind", "id")

func (p *Removed) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, removedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *Removed) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.Kind)
	case 1:
		return r.str(&p.ID)
	}
	return fieldOutOfRange(i)
}

var rollbackAppliedFields = fieldsOf("to_seq", "checkpoint", "task", "reason", "project", "plans", "tasks",
	"approvals", "execs", "removed")

func (p *RollbackApplied) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *RollbackApplied) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, rollbackAppliedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *RollbackApplied) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.uintField(&p.ToSeq)
	case 1:
		return r.str(&p.Checkpoint)
	case 2:
		return r.str(&p.Task)
	case 3:
		return r.str(&p.Reason)
	case 4:
		return structPtr[Project](r, &p.Project)
	case 5:
		return structs[Plan](r, &p.Plans)
	case 6:
		return structs[Task](r, &p.Tasks)
	case 7:
		return structs[Approval](r, &p.Approvals)
	case 8:
		return structs[Exec](r, &p.Execs)
	case 9:
		return structs[Removed](r, &p.Removed)
	}
	return fieldOutOfRange(i)
}

var rollbackMarkedFields = fieldsOf("rollback", "to_seq", "removed")

func (p *RollbackMarked) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return p.decodeMsgpack(&r)
}

func (p *RollbackMarked) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, rollbackMarkedFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *RollbackMarked) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.uintField(&p.Rollback)
	case 1:
		return r.uintField(&p.ToSeq)
	case 2:
		return r.boolField(&p.Removed)
	}
	return fieldOutOfRange(i)
}

func (x *ExecRecorded) unmarshal(b []byte, seen *stringCache) error {
	r := mpReader{b: b, seen: seen}
	return x.decodeMsgpack(&r)
}

// The fold reads some fields of a payload only to look something up by
// them, or not at all. The decodeRefs methods read those as where they
// are in the payload, checked as str checks them but made into no
// string; the rest as decodeMsgpack does.

// ref reads a str, bin or nil as str does, and sets *dst to its bytes.
func (r *mpReader) ref(dst *[]byte) error {
	start, end, err := r.rawStr()
	*dst = r.b[start:end]
	return err
}

// decodeRefs reads p but for its id, which is at *id.
func (p *StepStatusChanged) decodeRefs(r *mpReader, id *[]byte) error {
	return decodeStruct(r, p, stepStatusChangedFields, func(i int) error {
		if i == 0 {
			return r.ref(id)
		}
		return p.decodeField(r, i)
	})
}

// decodeRefs reads p but for its text and kind, which are at *text and
// *kind.
func (p *NoteAdded) decodeRefs(r *mpReader, text, kind *[]byte) error {
	return decodeStruct(r, p, noteAddedFields, func(i int) error {
		switch i {
		case 1:
			return r.ref(text)
		case 2:
			return r.ref(kind)
		}
		return p.decodeField(r, i)
	})
}
