package projection

// AppendEntity appends the msgpack encoding of v, which is a *Project,
// *Plan, *Task, *Approval, *Exec or *Checkpoint: byte for byte what
// msgpack's reflection encoder with sorted map keys writes (the codec
// tests hold every generated encoder to that), without reflection. ok
// is false, and b unchanged, for any other type.
func AppendEntity(b []byte, v any) (_ []byte, ok bool) {
	switch v := v.(type) {
	case *Project:
		return v.appendMsgpack(b), true
	case *Plan:
		return v.appendMsgpack(b), true
	case *Task:
		return v.appendMsgpack(b), true
	case *Approval:
		return v.appendMsgpack(b), true
	case *Exec:
		return v.appendMsgpack(b), true
	case *Checkpoint:
		return v.appendMsgpack(b), true
	}
	return b, false
}

// DecodeEntity decodes b into v, a pointer to a zero Project, Plan, Task,
// Approval, Exec or Checkpoint, as msgpack.Unmarshal would, but it
// refuses an unknown field nested deeper than MaxSkipDepth. Strings are
// copies. ok is false, and v untouched, for any other type.
func DecodeEntity(b []byte, v any) (ok bool, err error) {
	r := mpReader{b: b, maxDepth: MaxSkipDepth}
	switch v := v.(type) {
	case *Project:
		return true, v.decodeMsgpack(&r)
	case *Plan:
		return true, v.decodeMsgpack(&r)
	case *Task:
		return true, v.decodeMsgpack(&r)
	case *Approval:
		return true, v.decodeMsgpack(&r)
	case *Exec:
		return true, v.decodeMsgpack(&r)
	case *Checkpoint:
		return true, v.decodeMsgpack(&r)
	}
	return false, nil
}
