package projection

// The decoders of the payloads are generated (codec_events_gen.go, from
// the //codec: directives of events.go; see msgpack.go for the rules
// they follow). Here are the readers the generator does not write.

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
