package projection

// The codecs of the payloads are generated (codec_events_gen.go, from
// the //codec: directives of events.go; see msgpack.go for the rules
// they follow). Here are AppendPayload and the readers the generator
// does not write.

// AppendPayload appends the msgpack encoding of v, an event payload of
// this package, or a pointer to one (or to any other type with a
// generated encoder): byte for byte what msgpack's reflection encoder
// with sorted map keys writes (the codec tests hold every generated
// encoder to that), without reflection. ok is false, and b unchanged,
// for any other type.
func AppendPayload(b []byte, v any) (_ []byte, ok bool) {
	if a, ok := v.(mpAppender); ok {
		return a.appendMsgpack(b), true
	}
	switch v := v.(type) {
	case ProjectCreated:
		return v.appendMsgpack(b), true
	case ProjectArchived:
		return v.appendMsgpack(b), true
	case PlanCreated:
		return v.appendMsgpack(b), true
	case PlanClosed:
		return v.appendMsgpack(b), true
	case TaskCreated:
		return v.appendMsgpack(b), true
	case TaskUpdated:
		return v.appendMsgpack(b), true
	case TaskDepsChanged:
		return v.appendMsgpack(b), true
	case TaskStatusChanged:
		return v.appendMsgpack(b), true
	case TaskClaimed:
		return v.appendMsgpack(b), true
	case TaskReleased:
		return v.appendMsgpack(b), true
	case TaskContextMerged:
		return v.appendMsgpack(b), true
	case StepAdded:
		return v.appendMsgpack(b), true
	case StepStatusChanged:
		return v.appendMsgpack(b), true
	case NoteAdded:
		return v.appendMsgpack(b), true
	case ApprovalRequested:
		return v.appendMsgpack(b), true
	case ApprovalDecided:
		return v.appendMsgpack(b), true
	case ExecRecorded:
		return v.appendMsgpack(b), true
	case CheckpointCreated:
		return v.appendMsgpack(b), true
	case RollbackApplied:
		return v.appendMsgpack(b), true
	case RollbackMarked:
		return v.appendMsgpack(b), true
	}
	return b, false
}

// DecodePayload decodes b into v, a pointer to a zero event payload of
// this package (or to any other type with a generated decoder), as the
// fold decodes it: what msgpack.Unmarshal reads, without reflection. ok
// is false, and v untouched, for any other type.
func DecodePayload(b []byte, v any) (ok bool, err error) {
	d, ok := v.(interface{ decodeMsgpack(r *mpReader) error })
	if !ok {
		return false, nil
	}
	seen := seenPool.Get().(*stringCache)
	r := mpReader{b: b, seen: seen}
	err = d.decodeMsgpack(&r)
	seenPool.Put(seen)
	return true, err
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

// decodeRefs reads p but for its id, which is at *id, and its progress,
// which is read into *progress (*hasProgress set when it is not nil)
// and left nil in p: a new int per event otherwise.
func (p *StepStatusChanged) decodeRefs(r *mpReader, id *[]byte, progress *int, hasProgress *bool) error {
	return decodeStruct(r, p, stepStatusChangedFields, func(i int) error {
		switch i {
		case 0:
			return r.ref(id)
		case 2:
			if *hasProgress = !r.isNil(); *hasProgress {
				return r.intField(progress)
			}
			return nil
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

// decodeRefs reads p but for its patch, which is at *patch: the merge
// reads it and keeps a merged copy, not the patch.
func (p *TaskContextMerged) decodeRefs(r *mpReader, patch *[]byte) error {
	return decodeStruct(r, p, taskContextMergedFields, func(i int) error {
		if i == 0 {
			return r.ref(patch)
		}
		return p.decodeField(r, i)
	})
}
