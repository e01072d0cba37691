package projection

import "fmt"

// The msgpack of the projected entities and of a Scope: what a snapshot
// body holds. The codecs of the types are generated (codec_state_gen.go
// and codec_scope_gen.go, from the //codec: directives of state.go and
// scope.go; see msgpack.go for the rules both directions follow); here
// are the entry points and the helpers the generated code calls.

// AppendScope appends the msgpack of s to b: byte for byte what
// msgpack.Marshal(s) writes.
func AppendScope(b []byte, s *Scope) []byte { return s.appendMsgpack(b) }

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

func fieldOutOfRange(i int) error { return fmt.Errorf("msgpack: no field %d", i) }
