package projection

import "fmt"

// The msgpack of the projected entities and of a Scope: what a snapshot
// body holds (see msgpack.go for the rules both directions follow).

// AppendScope appends the msgpack of s to b: byte for byte what
// msgpack.Marshal(s) writes.
func AppendScope(b []byte, s *Scope) []byte {
	b = appendMapLen(b, 6)
	b = appendKey(b, "project")
	if s.Project == nil {
		b = appendNil(b)
	} else {
		b = s.Project.appendMsgpack(b)
	}
	b = appendKey(b, "plans")
	b = appendPtrs(b, s.Plans)
	b = appendKey(b, "tasks")
	b = appendPtrs(b, s.Tasks)
	b = appendKey(b, "approvals")
	b = appendPtrs(b, s.Approvals)
	b = appendKey(b, "execs")
	b = appendPtrs(b, s.Execs)
	b = appendKey(b, "checkpoints")
	return appendPtrs(b, s.Checkpoints)
}

// DecodeScope decodes the msgpack of a Scope as msgpack.Unmarshal does
// into a new Scope: the same value, or an error for the same inputs,
// except that it refuses an unknown field whose value is nested deeper
// than MaxSkipDepth (reflection recurses into it without bound). Like
// Unmarshal it reads one value and ignores what follows; it returns how
// many bytes the value took. Strings are copied (a short string that
// repeats mostly shares one copy), so the state keeps no reference to b.
func DecodeScope(b []byte) (*Scope, int, error) {
	r := mpReader{b: b, seen: new(stringCache), maxDepth: MaxSkipDepth}
	s := new(Scope)
	if err := s.decodeMsgpack(&r); err != nil {
		return nil, r.i, err
	}
	return s, r.i, nil
}

// MaxSkipDepth is the deepest nesting DecodeScope reads past in a field
// it does not know.
const MaxSkipDepth = 32

type mpAppender interface{ appendMsgpack([]byte) []byte }

// appendPtrs writes a []*T: nil as nil, a nil element as nil.
func appendPtrs[T any, P interface {
	*T
	mpAppender
}](b []byte, v []P) []byte {
	if v == nil {
		return appendNil(b)
	}
	b = appendArrayLen(b, len(v))
	for _, x := range v {
		if x == nil {
			b = appendNil(b)
		} else {
			b = x.appendMsgpack(b)
		}
	}
	return b
}

// appendValues writes a []T.
func appendValues[T any, P interface {
	*T
	mpAppender
}](b []byte, v []T) []byte {
	if v == nil {
		return appendNil(b)
	}
	b = appendArrayLen(b, len(v))
	for i := range v {
		b = P(&v[i]).appendMsgpack(b)
	}
	return b
}

var scopeFields = fieldsOf("project", "plans", "tasks", "approvals", "execs", "checkpoints")

func (s *Scope) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, s, scopeFields, func(i int) error { return s.decodeField(r, i) })
}

func (s *Scope) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return structPtr[Project](r, &s.Project)
	case 1:
		return structPtrs[Plan](r, &s.Plans)
	case 2:
		return structPtrs[Task](r, &s.Tasks)
	case 3:
		return structPtrs[Approval](r, &s.Approvals)
	case 4:
		return structPtrs[Exec](r, &s.Execs)
	case 5:
		return structPtrs[Checkpoint](r, &s.Checkpoints)
	}
	return fieldOutOfRange(i)
}

func fieldOutOfRange(i int) error { return fmt.Errorf("msgpack: no field %d", i) }

// Meta is inlined in the entities: its fields follow theirs.

var metaFields = []string{"version", "seq", "created_at", "created_by", "updated_at"}

const metaLen = 5

func (m *Meta) appendFields(b []byte) []byte {
	b = appendUint64(appendKey(b, "version"), m.Version)
	b = appendUint64(appendKey(b, "seq"), m.Seq)
	b = appendInt64(appendKey(b, "created_at"), int64(m.CreatedAt))
	b = appendStr(appendKey(b, "created_by"), m.CreatedBy)
	return appendInt64(appendKey(b, "updated_at"), int64(m.UpdatedAt))
}

func (m *Meta) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.uintField(&m.Version)
	case 1:
		return r.uintField(&m.Seq)
	case 2:
		return r.timeField(&m.CreatedAt)
	case 3:
		return r.str(&m.CreatedBy)
	case 4:
		return r.timeField(&m.UpdatedAt)
	}
	return fieldOutOfRange(i)
}

// withMeta returns the field names of an entity followed by Meta's.
func withMeta(names ...string) []string { return append(names, metaFields...) }

var countersFields = fieldsOf("plans", "tasks", "approvals", "execs", "checkpoints")

func (c *Counters) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, c, countersFields, func(i int) error { return c.decodeField(r, i) })
}

func (c *Counters) appendMsgpack(b []byte) []byte {
	b = appendMapLen(b, 5)
	b = appendInt(appendKey(b, "plans"), int64(c.Plans))
	b = appendInt(appendKey(b, "tasks"), int64(c.Tasks))
	b = appendInt(appendKey(b, "approvals"), int64(c.Approvals))
	b = appendInt(appendKey(b, "execs"), int64(c.Execs))
	return appendInt(appendKey(b, "checkpoints"), int64(c.Checkpoints))
}

func (c *Counters) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.intField(&c.Plans)
	case 1:
		return r.intField(&c.Tasks)
	case 2:
		return r.intField(&c.Approvals)
	case 3:
		return r.intField(&c.Execs)
	case 4:
		return r.intField(&c.Checkpoints)
	}
	return fieldOutOfRange(i)
}

var projectFields = fieldsOf(withMeta("name", "description", "archived", "counters", "events")...)

func (p *Project) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, projectFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *Project) appendMsgpack(b []byte) []byte {
	b = appendMapLen(b, 4+count(p.Description != "")+metaLen)
	b = appendStr(appendKey(b, "name"), p.Name)
	if p.Description != "" {
		b = appendStr(appendKey(b, "description"), p.Description)
	}
	b = appendBool(appendKey(b, "archived"), p.Archived)
	b = p.Counters.appendMsgpack(appendKey(b, "counters"))
	b = appendUint64(appendKey(b, "events"), p.Events)
	return p.Meta.appendFields(b)
}

func (p *Project) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.Name)
	case 1:
		return r.str(&p.Description)
	case 2:
		return r.boolField(&p.Archived)
	case 3:
		return p.Counters.decodeMsgpack(r)
	case 4:
		return r.uintField(&p.Events)
	}
	return p.Meta.decodeField(r, i-5)
}

var planFields = fieldsOf(withMeta("project", "id", "title", "description", "status")...)

func (p *Plan) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, p, planFields, func(i int) error { return p.decodeField(r, i) })
}

func (p *Plan) appendMsgpack(b []byte) []byte {
	b = appendMapLen(b, 4+count(p.Description != "")+metaLen)
	b = appendStr(appendKey(b, "project"), p.Project)
	b = appendStr(appendKey(b, "id"), p.ID)
	b = appendStr(appendKey(b, "title"), p.Title)
	if p.Description != "" {
		b = appendStr(appendKey(b, "description"), p.Description)
	}
	b = appendStr(appendKey(b, "status"), p.Status)
	return p.Meta.appendFields(b)
}

func (p *Plan) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&p.Project)
	case 1:
		return r.str(&p.ID)
	case 2:
		return r.str(&p.Title)
	case 3:
		return r.str(&p.Description)
	case 4:
		return r.str(&p.Status)
	}
	return p.Meta.decodeField(r, i-5)
}

var claimFields = fieldsOf("actor", "session", "lease_until", "claimed_at")

func (c *Claim) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, c, claimFields, func(i int) error { return c.decodeField(r, i) })
}

func (c *Claim) appendMsgpack(b []byte) []byte {
	b = appendMapLen(b, 3+count(c.Session != ""))
	b = appendStr(appendKey(b, "actor"), c.Actor)
	if c.Session != "" {
		b = appendStr(appendKey(b, "session"), c.Session)
	}
	b = appendInt64(appendKey(b, "lease_until"), int64(c.LeaseUntil))
	return appendInt64(appendKey(b, "claimed_at"), int64(c.ClaimedAt))
}

func (c *Claim) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&c.Actor)
	case 1:
		return r.str(&c.Session)
	case 2:
		return r.timeField(&c.LeaseUntil)
	case 3:
		return r.timeField(&c.ClaimedAt)
	}
	return fieldOutOfRange(i)
}

var stepFields = fieldsOf("id", "title", "status", "progress", "note", "result", "error", "updated_at")

func (s *Step) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, s, stepFields, func(i int) error { return s.decodeField(r, i) })
}

func (s *Step) appendMsgpack(b []byte) []byte {
	b = appendMapLen(b, 5+count(s.Note != "", s.Result != "", s.Error != ""))
	b = appendStr(appendKey(b, "id"), s.ID)
	b = appendStr(appendKey(b, "title"), s.Title)
	b = appendStr(appendKey(b, "status"), s.Status)
	b = appendInt(appendKey(b, "progress"), int64(s.Progress))
	if s.Note != "" {
		b = appendStr(appendKey(b, "note"), s.Note)
	}
	if s.Result != "" {
		b = appendStr(appendKey(b, "result"), s.Result)
	}
	if s.Error != "" {
		b = appendStr(appendKey(b, "error"), s.Error)
	}
	return appendInt64(appendKey(b, "updated_at"), int64(s.UpdatedAt))
}

func (s *Step) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&s.ID)
	case 1:
		return r.str(&s.Title)
	case 2:
		return r.str(&s.Status)
	case 3:
		return r.intField(&s.Progress)
	case 4:
		return r.str(&s.Note)
	case 5:
		return r.str(&s.Result)
	case 6:
		return r.str(&s.Error)
	case 7:
		return r.timeField(&s.UpdatedAt)
	}
	return fieldOutOfRange(i)
}

var taskFields = fieldsOf(withMeta("project", "id", "plan", "title", "description", "status", "owner", "tags",
	"priority", "deps", "ref", "claim", "steps", "context", "context_version", "pending_approvals",
	"notes", "execs", "forced")...)

func (t *Task) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, t, taskFields, func(i int) error { return t.decodeField(r, i) })
}

func (t *Task) appendMsgpack(b []byte) []byte {
	b = appendMapLen(b, 14+count(t.Plan != "", t.Description != "", t.Owner != "", t.Ref != "", t.Forced)+metaLen)
	b = appendStr(appendKey(b, "project"), t.Project)
	b = appendStr(appendKey(b, "id"), t.ID)
	if t.Plan != "" {
		b = appendStr(appendKey(b, "plan"), t.Plan)
	}
	b = appendStr(appendKey(b, "title"), t.Title)
	if t.Description != "" {
		b = appendStr(appendKey(b, "description"), t.Description)
	}
	b = appendStr(appendKey(b, "status"), t.Status)
	if t.Owner != "" {
		b = appendStr(appendKey(b, "owner"), t.Owner)
	}
	b = appendStrings(appendKey(b, "tags"), t.Tags)
	b = appendInt(appendKey(b, "priority"), int64(t.Priority))
	b = appendStrings(appendKey(b, "deps"), t.Deps)
	if t.Ref != "" {
		b = appendStr(appendKey(b, "ref"), t.Ref)
	}
	b = appendKey(b, "claim")
	if t.Claim == nil {
		b = appendNil(b)
	} else {
		b = t.Claim.appendMsgpack(b)
	}
	b = appendValues[Step](appendKey(b, "steps"), t.Steps)
	b = appendStr(appendKey(b, "context"), string(t.Context))
	b = appendInt(appendKey(b, "context_version"), int64(t.ContextVersion))
	b = appendStrings(appendKey(b, "pending_approvals"), t.PendingApprovals)
	b = appendInt(appendKey(b, "notes"), int64(t.Notes))
	b = appendInt(appendKey(b, "execs"), int64(t.Execs))
	if t.Forced {
		b = appendBool(appendKey(b, "forced"), true)
	}
	return t.Meta.appendFields(b)
}

func (t *Task) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&t.Project)
	case 1:
		return r.str(&t.ID)
	case 2:
		return r.str(&t.Plan)
	case 3:
		return r.str(&t.Title)
	case 4:
		return r.str(&t.Description)
	case 5:
		return r.str(&t.Status)
	case 6:
		return r.str(&t.Owner)
	case 7:
		return r.strings(&t.Tags)
	case 8:
		return r.intField(&t.Priority)
	case 9:
		return r.strings(&t.Deps)
	case 10:
		return r.str(&t.Ref)
	case 11:
		return structPtr[Claim](r, &t.Claim)
	case 12:
		return structs[Step](r, &t.Steps)
	case 13:
		return r.json(&t.Context)
	case 14:
		return r.intField(&t.ContextVersion)
	case 15:
		return r.strings(&t.PendingApprovals)
	case 16:
		return r.intField(&t.Notes)
	case 17:
		return r.intField(&t.Execs)
	case 18:
		return r.boolField(&t.Forced)
	}
	return t.Meta.decodeField(r, i-19)
}

var approvalFields = fieldsOf(withMeta("project", "id", "task", "step", "message", "code", "action", "action_hash",
	"expires", "status", "requested_by", "decided_by", "comment", "decided_at")...)

func (a *Approval) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, a, approvalFields, func(i int) error { return a.decodeField(r, i) })
}

func (a *Approval) appendMsgpack(b []byte) []byte {
	n := 8 + count(a.Task != "", a.Step != "", a.Code != "", a.Action != "", a.DecidedBy != "", a.Comment != "")
	b = appendMapLen(b, n+metaLen)
	b = appendStr(appendKey(b, "project"), a.Project)
	b = appendStr(appendKey(b, "id"), a.ID)
	if a.Task != "" {
		b = appendStr(appendKey(b, "task"), a.Task)
	}
	if a.Step != "" {
		b = appendStr(appendKey(b, "step"), a.Step)
	}
	b = appendStr(appendKey(b, "message"), a.Message)
	if a.Code != "" {
		b = appendStr(appendKey(b, "code"), a.Code)
	}
	if a.Action != "" {
		b = appendStr(appendKey(b, "action"), string(a.Action))
	}
	b = appendStr(appendKey(b, "action_hash"), a.ActionHash)
	b = appendInt64(appendKey(b, "expires"), int64(a.Expires))
	b = appendStr(appendKey(b, "status"), a.Status)
	b = appendStr(appendKey(b, "requested_by"), a.RequestedBy)
	if a.DecidedBy != "" {
		b = appendStr(appendKey(b, "decided_by"), a.DecidedBy)
	}
	if a.Comment != "" {
		b = appendStr(appendKey(b, "comment"), a.Comment)
	}
	b = appendInt64(appendKey(b, "decided_at"), int64(a.DecidedAt))
	return a.Meta.appendFields(b)
}

func (a *Approval) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&a.Project)
	case 1:
		return r.str(&a.ID)
	case 2:
		return r.str(&a.Task)
	case 3:
		return r.str(&a.Step)
	case 4:
		return r.str(&a.Message)
	case 5:
		return r.str(&a.Code)
	case 6:
		return r.json(&a.Action)
	case 7:
		return r.str(&a.ActionHash)
	case 8:
		return r.timeField(&a.Expires)
	case 9:
		return r.str(&a.Status)
	case 10:
		return r.str(&a.RequestedBy)
	case 11:
		return r.str(&a.DecidedBy)
	case 12:
		return r.str(&a.Comment)
	case 13:
		return r.timeField(&a.DecidedAt)
	}
	return a.Meta.decodeField(r, i-14)
}

var outputFields = fieldsOf("head", "tail", "bytes", "sha256")

func (o *Output) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, o, outputFields, func(i int) error { return o.decodeField(r, i) })
}

func (o *Output) appendMsgpack(b []byte) []byte {
	b = appendMapLen(b, 1+count(o.Head != "", o.Tail != "", o.SHA256 != ""))
	if o.Head != "" {
		b = appendStr(appendKey(b, "head"), o.Head)
	}
	if o.Tail != "" {
		b = appendStr(appendKey(b, "tail"), o.Tail)
	}
	b = appendInt64(appendKey(b, "bytes"), o.Bytes)
	if o.SHA256 != "" {
		b = appendStr(appendKey(b, "sha256"), o.SHA256)
	}
	return b
}

func (o *Output) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&o.Head)
	case 1:
		return r.str(&o.Tail)
	case 2:
		return r.int64Field(&o.Bytes)
	case 3:
		return r.str(&o.SHA256)
	}
	return fieldOutOfRange(i)
}

var execRecordedFields = fieldsOf("id", "task", "step", "plan", "command", "code", "cwd", "exit_code",
	"success", "elapsed_ms", "stdout", "stderr", "added_vars", "added_imports", "git_head", "occurred_at")

const execRecordedLen = 16

func (x *ExecRecorded) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, x, execRecordedFields, func(i int) error { return x.decodeField(r, i) })
}

// fieldCount is how many fields x writes.
func (x *ExecRecorded) fieldCount() int {
	return 6 + count(x.Task != "", x.Step != "", x.Plan != "", x.Command != "", x.Code != "", x.Cwd != "",
		len(x.AddedVars) > 0, len(x.AddedImports) > 0, x.GitHead != "", x.OccurredAt != 0)
}

func (x *ExecRecorded) appendMsgpack(b []byte) []byte {
	return x.appendFields(appendMapLen(b, x.fieldCount()))
}

func (x *ExecRecorded) appendFields(b []byte) []byte {
	b = appendStr(appendKey(b, "id"), x.ID)
	for _, f := range [...]struct{ name, v string }{
		{"task", x.Task}, {"step", x.Step}, {"plan", x.Plan}, {"command", x.Command}, {"code", x.Code}, {"cwd", x.Cwd},
	} {
		if f.v != "" {
			b = appendStr(appendKey(b, f.name), f.v)
		}
	}
	b = appendInt(appendKey(b, "exit_code"), int64(x.ExitCode))
	b = appendBool(appendKey(b, "success"), x.Success)
	b = appendFloat64(appendKey(b, "elapsed_ms"), x.ElapsedMS)
	b = x.Stdout.appendMsgpack(appendKey(b, "stdout"))
	b = x.Stderr.appendMsgpack(appendKey(b, "stderr"))
	if len(x.AddedVars) > 0 {
		b = appendStrings(appendKey(b, "added_vars"), x.AddedVars)
	}
	if len(x.AddedImports) > 0 {
		b = appendStrings(appendKey(b, "added_imports"), x.AddedImports)
	}
	if x.GitHead != "" {
		b = appendStr(appendKey(b, "git_head"), x.GitHead)
	}
	if x.OccurredAt != 0 {
		b = appendInt64(appendKey(b, "occurred_at"), int64(x.OccurredAt))
	}
	return b
}

func (x *ExecRecorded) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&x.ID)
	case 1:
		return r.str(&x.Task)
	case 2:
		return r.str(&x.Step)
	case 3:
		return r.str(&x.Plan)
	case 4:
		return r.str(&x.Command)
	case 5:
		return r.str(&x.Code)
	case 6:
		return r.str(&x.Cwd)
	case 7:
		return r.intField(&x.ExitCode)
	case 8:
		return r.boolField(&x.Success)
	case 9:
		return r.float64Field(&x.ElapsedMS)
	case 10:
		return x.Stdout.decodeMsgpack(r)
	case 11:
		return x.Stderr.decodeMsgpack(r)
	case 12:
		return r.strings(&x.AddedVars)
	case 13:
		return r.strings(&x.AddedImports)
	case 14:
		return r.str(&x.GitHead)
	case 15:
		return r.timeField(&x.OccurredAt)
	}
	return fieldOutOfRange(i)
}

// Exec: project, then ExecRecorded's fields inlined, then actor, then
// Meta's.
var execFields = fieldsOf(withMeta(append(append([]string{"project"}, execRecordedFields.names...), "actor")...)...)

func (x *Exec) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, x, execFields, func(i int) error { return x.decodeField(r, i) })
}

func (x *Exec) appendMsgpack(b []byte) []byte {
	b = appendMapLen(b, 2+x.ExecRecorded.fieldCount()+metaLen)
	b = appendStr(appendKey(b, "project"), x.Project)
	b = x.ExecRecorded.appendFields(b)
	b = appendStr(appendKey(b, "actor"), x.Actor)
	return x.Meta.appendFields(b)
}

func (x *Exec) decodeField(r *mpReader, i int) error {
	switch {
	case i == 0:
		return r.str(&x.Project)
	case i <= execRecordedLen:
		return x.ExecRecorded.decodeField(r, i-1)
	case i == execRecordedLen+1:
		return r.str(&x.Actor)
	}
	return x.Meta.decodeField(r, i-execRecordedLen-2)
}

var checkpointFields = fieldsOf(withMeta("project", "id", "label", "at_seq", "task", "git_head")...)

func (c *Checkpoint) decodeMsgpack(r *mpReader) error {
	return decodeStruct(r, c, checkpointFields, func(i int) error { return c.decodeField(r, i) })
}

func (c *Checkpoint) appendMsgpack(b []byte) []byte {
	b = appendMapLen(b, 3+count(c.Label != "", c.Task != "", c.GitHead != "")+metaLen)
	b = appendStr(appendKey(b, "project"), c.Project)
	b = appendStr(appendKey(b, "id"), c.ID)
	if c.Label != "" {
		b = appendStr(appendKey(b, "label"), c.Label)
	}
	b = appendUint64(appendKey(b, "at_seq"), c.AtSeq)
	if c.Task != "" {
		b = appendStr(appendKey(b, "task"), c.Task)
	}
	if c.GitHead != "" {
		b = appendStr(appendKey(b, "git_head"), c.GitHead)
	}
	return c.Meta.appendFields(b)
}

func (c *Checkpoint) decodeField(r *mpReader, i int) error {
	switch i {
	case 0:
		return r.str(&c.Project)
	case 1:
		return r.str(&c.ID)
	case 2:
		return r.str(&c.Label)
	case 3:
		return r.uintField(&c.AtSeq)
	case 4:
		return r.str(&c.Task)
	case 5:
		return r.str(&c.GitHead)
	}
	return c.Meta.decodeField(r, i-6)
}
