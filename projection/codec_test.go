package projection

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
	"pgregory.net/rapid"
)

// The generated codecs (and the readers written by hand) against
// msgpack's reflection codec, the one the stored bytes were written
// with: on values, on the encodings of values with every variation the
// reflection decoder accepts (fields in any order, repeated, unknown or
// missing, any integer width, bin for str, nil for anything, structs as
// arrays), and on arbitrary bytes.

// codecType is a type with a generated decoder.
type codecType struct {
	typ    reflect.Type
	decode func(r *mpReader, v any) error
	append func(b []byte, v any) []byte // nil when it has no encoder
}

func codecOf[T any, P mpStruct[T]]() codecType {
	return codecType{typ: reflect.TypeFor[T](), decode: func(r *mpReader, v any) error { return P(v.(*T)).decodeMsgpack(r) }}
}

func withAppend[T any, P interface {
	*T
	mpAppender
}](c codecType) codecType {
	c.append = func(b []byte, v any) []byte { return P(v.(*T)).appendMsgpack(b) }
	return c
}

var codecTypes = []codecType{
	withAppend[ProjectCreated](codecOf[ProjectCreated]()), withAppend[ProjectArchived](codecOf[ProjectArchived]()),
	withAppend[PlanCreated](codecOf[PlanCreated]()), withAppend[PlanClosed](codecOf[PlanClosed]()),
	withAppend[TaskCreated](codecOf[TaskCreated]()), withAppend[TaskUpdated](codecOf[TaskUpdated]()),
	withAppend[TaskDepsChanged](codecOf[TaskDepsChanged]()), withAppend[TaskStatusChanged](codecOf[TaskStatusChanged]()),
	withAppend[TaskClaimed](codecOf[TaskClaimed]()), withAppend[TaskReleased](codecOf[TaskReleased]()),
	withAppend[TaskContextMerged](codecOf[TaskContextMerged]()), withAppend[StepAdded](codecOf[StepAdded]()),
	withAppend[StepStatusChanged](codecOf[StepStatusChanged]()), withAppend[NoteAdded](codecOf[NoteAdded]()),
	withAppend[ApprovalRequested](codecOf[ApprovalRequested]()), withAppend[ApprovalDecided](codecOf[ApprovalDecided]()),
	withAppend[ExecRecorded](codecOf[ExecRecorded]()), withAppend[CheckpointCreated](codecOf[CheckpointCreated]()),
	withAppend[Removed](codecOf[Removed]()), withAppend[RollbackApplied](codecOf[RollbackApplied]()),
	withAppend[RollbackMarked](codecOf[RollbackMarked]()),
	withAppend[Project](codecOf[Project]()), withAppend[Counters](codecOf[Counters]()),
	withAppend[Plan](codecOf[Plan]()), withAppend[Task](codecOf[Task]()), withAppend[Step](codecOf[Step]()),
	withAppend[Claim](codecOf[Claim]()), withAppend[Approval](codecOf[Approval]()),
	withAppend[Output](codecOf[Output]()), withAppend[Exec](codecOf[Exec]()),
	withAppend[Checkpoint](codecOf[Checkpoint]()),
	{typ: reflect.TypeFor[Scope](), decode: func(r *mpReader, v any) error { return v.(*Scope).decodeMsgpack(r) },
		append: func(b []byte, v any) []byte { return AppendScope(b, v.(*Scope)) }},
	// The fold's readers that leave fields in the payload: with those
	// fields made strings, the same value.
	{typ: reflect.TypeFor[StepStatusChanged](), decode: func(r *mpReader, v any) error {
		p := v.(*StepStatusChanged)
		var id []byte
		var progress int
		var hasProgress bool
		err := p.decodeRefs(r, &id, &progress, &hasProgress)
		p.ID = string(id)
		if hasProgress {
			p.Progress = &progress
		}
		return err
	}},
	{typ: reflect.TypeFor[NoteAdded](), decode: func(r *mpReader, v any) error {
		p := v.(*NoteAdded)
		var text, kind []byte
		err := p.decodeRefs(r, &text, &kind)
		p.Text, p.Kind = string(text), string(kind)
		return err
	}},
}

// tHelper is what the checks need of a *testing.T or a *rapid.T.
type tHelper interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// reflectMarshal encodes v as the snapshot and flow encoders do.
func reflectMarshal(tb tHelper, v any) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// reflectUnmarshal is msgpack.Unmarshal with a decoder of its own:
// Unmarshal's pooled decoders keep the buffer a failed read of a huge
// str or bin grew (1 MB more each time), which over a fuzzing run slows
// every later call to a halt.
func reflectUnmarshal(b []byte, v any) error {
	return msgpack.NewDecoder(bytes.NewReader(b)).Decode(v)
}

// readerModes are the ways a reader makes strings: each must give the
// same values.
var readerModes = []struct {
	name string
	new  func(b []byte) *mpReader
}{
	{"Copy", func(b []byte) *mpReader { return &mpReader{b: b} }},
	{"Seen", func(b []byte) *mpReader { return &mpReader{b: b, seen: new(stringCache)} }},
}

// checkDecode decodes b with reflection and by hand, in every reader
// mode: both fail, or both give the same value.
func checkDecode(t tHelper, c codecType, b []byte) {
	t.Helper()
	want := reflect.New(c.typ)
	werr := reflectUnmarshal(b, want.Interface())
	for _, mode := range readerModes {
		got := reflect.New(c.typ)
		gerr := c.decode(mode.new(b), got.Interface())
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("%s (%s) of % x: hand decoder error %v, reflection error %v", c.typ.Name(), mode.name, b, gerr, werr)
		}
		if werr == nil && !sameValue(got.Elem(), want.Elem()) {
			t.Fatalf("%s (%s) of % x:\nhand       %#v\nreflection %#v", c.typ.Name(), mode.name, b, got.Elem(), want.Elem())
		}
	}
}

// sameValue is reflect.DeepEqual, but with floats compared by their bits
// (NaN equals NaN).
func sameValue(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float())
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

func TestDecode_MatchesReflection(t *testing.T) {
	for _, c := range codecTypes {
		t.Run(c.typ.Name(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				checkDecode(t, c, genEncoding(t, c.typ, 0))
			})
		})
	}
}

func TestDecode_ValuesMatchReflection(t *testing.T) {
	for _, c := range codecTypes {
		t.Run(c.typ.Name(), rapidCheck(func(t *rapid.T) {
			v := genValue(t, c.typ, 0)
			checkDecode(t, c, reflectMarshal(t, v.Interface()))
		}).check)
	}
}

func TestAppend_MatchesReflection(t *testing.T) {
	for _, c := range codecTypes {
		if c.append == nil {
			continue
		}
		t.Run(c.typ.Name(), rapidCheck(func(t *rapid.T) {
			v := genValue(t, c.typ, 0)
			want := reflectMarshal(t, v.Interface())
			if got := c.append(nil, v.Interface()); !bytes.Equal(got, want) {
				t.Fatalf("%#v:\nhand       % x\nreflection % x", v.Elem(), got, want)
			}
		}).check)
	}
}

// TestAppendPayload: every payload type, as a value and as a pointer,
// encodes as reflection encodes it; another type is refused.
func TestAppendPayload(t *testing.T) {
	for _, typ := range payloadTypes {
		t.Run(typ.Name(), rapidCheck(func(t *rapid.T) {
			v := genValue(t, typ, 0)
			want := reflectMarshal(t, v.Interface())
			for _, in := range []any{v.Interface(), v.Elem().Interface()} {
				got, ok := AppendPayload([]byte("prefix"), in)
				if !ok || !bytes.Equal(got, append([]byte("prefix"), want...)) {
					t.Fatalf("AppendPayload(%T) = % x, %v; reflection writes % x", in, got, ok, want)
				}
			}
		}).check)
	}
	for _, v := range []any{map[string]int{"a": 1}, struct{ A int }{1}, "s"} {
		if b, ok := AppendPayload([]byte("x"), v); ok || string(b) != "x" {
			t.Errorf("AppendPayload(%T) = %q, %v; want the input and false", v, b, ok)
		}
	}
}

// TestDecodePayload: every payload type decodes as reflection decodes
// it (both fail, or both give the same value); another type is refused.
func TestDecodePayload(t *testing.T) {
	for _, typ := range payloadTypes {
		t.Run(typ.Name(), rapidCheck(func(t *rapid.T) {
			var b []byte
			if rapid.Bool().Draw(t, "valid") {
				b = reflectMarshal(t, genValue(t, typ, 0).Interface())
			} else {
				b = genEncoding(t, typ, 0)
			}
			want, got := reflect.New(typ), reflect.New(typ)
			werr := reflectUnmarshal(b, want.Interface())
			ok, gerr := DecodePayload(b, got.Interface())
			if !ok || (gerr == nil) != (werr == nil) {
				t.Fatalf("DecodePayload(%s) of % x: %v, error %v; reflection error %v", typ.Name(), b, ok, gerr, werr)
			}
			if werr == nil && !sameValue(got.Elem(), want.Elem()) {
				t.Fatalf("DecodePayload(%s) of % x:\nhand       %#v\nreflection %#v", typ.Name(), b, got.Elem(), want.Elem())
			}
		}).check)
	}
	var m map[string]int
	if ok, err := DecodePayload([]byte{0x80}, &m); ok || err != nil || m != nil {
		t.Errorf("DecodePayload(*map) = %v, %v, %v; want false, nil, untouched", ok, err, m)
	}
}

// payloadTypes are the types of the events' payloads.
var payloadTypes = []reflect.Type{
	reflect.TypeFor[ProjectCreated](), reflect.TypeFor[ProjectArchived](), reflect.TypeFor[PlanCreated](),
	reflect.TypeFor[PlanClosed](), reflect.TypeFor[TaskCreated](), reflect.TypeFor[TaskUpdated](),
	reflect.TypeFor[TaskDepsChanged](), reflect.TypeFor[TaskStatusChanged](), reflect.TypeFor[TaskClaimed](),
	reflect.TypeFor[TaskReleased](), reflect.TypeFor[TaskContextMerged](), reflect.TypeFor[StepAdded](),
	reflect.TypeFor[StepStatusChanged](), reflect.TypeFor[NoteAdded](), reflect.TypeFor[ApprovalRequested](),
	reflect.TypeFor[ApprovalDecided](), reflect.TypeFor[ExecRecorded](), reflect.TypeFor[CheckpointCreated](),
	reflect.TypeFor[RollbackApplied](), reflect.TypeFor[RollbackMarked](),
}

// rapidCheck adapts a property to a subtest.
type rapidCheck func(t *rapid.T)

func (f rapidCheck) check(t *testing.T) { rapid.Check(t, f) }

// FuzzDecode_MatchesReflection: on any bytes, the decoder of any
// type fails when reflection fails, and decodes the same value otherwise.
func FuzzDecode_MatchesReflection(f *testing.F) {
	for i, c := range codecTypes {
		v := reflect.New(c.typ)
		f.Add(byte(i), reflectMarshal(f, v.Interface()))
	}
	f.Add(byte(0), []byte{0x92, 0xa1, 'x', 0xa1, 'y'})
	f.Add(byte(5), []byte{0x81, 0xa4, 't', 'a', 'g', 's', 0x92, 0xc4, 0x01, 'a', 0xc0})
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		checkDecode(t, codecTypes[int(which)%len(codecTypes)], b)
	})
}

// Generators.

// mpField is a msgpack field of a struct: embedded structs inlined.
type mpField struct {
	name  string
	index []int
	typ   reflect.Type
}

func mpFieldsOf(typ reflect.Type) []mpField {
	var out []mpField
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("msgpack")
		if f.Anonymous && tag == "" {
			for _, g := range mpFieldsOf(f.Type) {
				g.index = append([]int{i}, g.index...)
				out = append(out, g)
			}
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		out = append(out, mpField{name: name, index: []int{i}, typ: f.Type})
	}
	return out
}

var sampleStrings = []string{"", "todo", "done", "in_progress", "pending", "granted", "T-1", "T-12", "P-1", "A-3",
	"X-1", "proj000", "{}", `{"a":1}`, "agent", "ünïcödé", "a\x00b", strings.Repeat("long ", 60)}

func genString(t *rapid.T, label string) string {
	if rapid.Bool().Draw(t, label+"Sample") {
		return rapid.SampledFrom(sampleStrings).Draw(t, label)
	}
	return rapid.String().Draw(t, label)
}

// genValue returns a random value of typ: nil and empty slices, nil
// pointers, any numbers (no NaN: the values are compared with
// DeepEqual).
func genValue(t *rapid.T, typ reflect.Type, depth int) reflect.Value {
	v := reflect.New(typ)
	fillValue(t, v.Elem(), depth)
	return v
}

func fillValue(t *rapid.T, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(genString(t, "s"))
	case reflect.Bool:
		v.SetBool(rapid.Bool().Draw(t, "bool"))
	case reflect.Int, reflect.Int64:
		v.SetInt(rapid.OneOf(rapid.Int64Range(-40, 300), rapid.Int64()).Draw(t, "int"))
	case reflect.Uint64:
		v.SetUint(rapid.OneOf(rapid.Uint64Range(0, 300), rapid.Uint64()).Draw(t, "uint"))
	case reflect.Float64:
		f := rapid.Float64().Draw(t, "float")
		if math.IsNaN(f) {
			f = 0
		}
		v.SetFloat(f)
	case reflect.Pointer:
		if depth < 3 && rapid.Bool().Draw(t, "ptr") {
			v.Set(reflect.New(v.Type().Elem()))
			fillValue(t, v.Elem(), depth+1)
		}
	case reflect.Slice:
		switch rapid.IntRange(0, 3).Draw(t, "slice") {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 0
			if depth < 3 {
				n = rapid.IntRange(1, 4).Draw(t, "len")
			}
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				fillValue(t, v.Index(i), depth+1)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fillValue(t, v.Field(i), depth)
		}
	default:
		t.Fatalf("no generator for %s", v.Type())
	}
}

// genEncoding returns a msgpack encoding of a value of typ, in any of
// the forms reflection reads, now and then with a value of another kind.
func genEncoding(t *rapid.T, typ reflect.Type, depth int) []byte {
	if rapid.IntRange(0, 40).Draw(t, "wild") == 0 {
		return genAny(t, depth)
	}
	if typ.Kind() != reflect.Struct && rapid.IntRange(0, 8).Draw(t, "nil") == 0 {
		return []byte{0xc0}
	}
	switch typ.Kind() {
	case reflect.String:
		return encodeStr(t, genString(t, "s"))
	case reflect.Bool:
		return []byte{rapid.SampledFrom([]byte{0xc2, 0xc3}).Draw(t, "bool")}
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return encodeInt(t, rapid.OneOf(rapid.Int64Range(-40, 300), rapid.Int64()).Draw(t, "int"))
	case reflect.Float64:
		switch rapid.IntRange(0, 2).Draw(t, "floatKind") {
		case 0:
			return binary.BigEndian.AppendUint64([]byte{0xcb}, math.Float64bits(rapid.Float64().Draw(t, "f64")))
		case 1:
			return binary.BigEndian.AppendUint32([]byte{0xca}, math.Float32bits(rapid.Float32().Draw(t, "f32")))
		}
		return encodeInt(t, rapid.Int64().Draw(t, "intAsFloat"))
	case reflect.Pointer:
		return genEncoding(t, typ.Elem(), depth+1)
	case reflect.Slice:
		n := 0
		if depth < 3 {
			n = rapid.IntRange(0, 4).Draw(t, "len")
		}
		b := encodeArrayLen(t, n)
		for range n {
			b = append(b, genEncoding(t, typ.Elem(), depth+1)...)
		}
		return b
	case reflect.Struct:
		return genStructEncoding(t, typ, depth)
	}
	t.Fatalf("no generator for %s", typ)
	return nil
}

func genStructEncoding(t *rapid.T, typ reflect.Type, depth int) []byte {
	fields := mpFieldsOf(typ)
	switch rapid.IntRange(0, 12).Draw(t, "structForm") {
	case 0:
		return []byte{0xc0}
	case 1:
		return []byte{0x90}
	case 2, 3: // an array of one value per field, or of one too many or too few
		n := len(fields)
		if rapid.Bool().Draw(t, "badCount") {
			n += rapid.SampledFrom([]int{-1, 1}).Draw(t, "off")
		}
		b := encodeArrayLen(t, n)
		for i := range n {
			ft := reflect.TypeFor[string]()
			if i < len(fields) {
				ft = fields[i].typ
			}
			b = append(b, genEncoding(t, ft, depth+1)...)
		}
		return b
	}
	type entry struct{ key, val []byte }
	var entries []entry
	if rapid.Bool().Draw(t, "inOrder") {
		for _, f := range fields {
			if rapid.IntRange(0, 4).Draw(t, "omit") > 0 {
				entries = append(entries, entry{encodeStr(t, f.name), genEncoding(t, f.typ, depth+1)})
			}
		}
	} else {
		for range rapid.IntRange(0, len(fields)+3).Draw(t, "entries") {
			if rapid.IntRange(0, 5).Draw(t, "unknown") == 0 {
				key := rapid.SampledFrom([]string{"", "x", "Project", "ID", "unknown_field", "meta"}).Draw(t, "key")
				entries = append(entries, entry{encodeStr(t, key), genAny(t, depth+1)})
				continue
			}
			f := rapid.SampledFrom(fields).Draw(t, "field")
			entries = append(entries, entry{encodeStr(t, f.name), genEncoding(t, f.typ, depth+1)})
		}
	}
	b := encodeMapLen(t, len(entries))
	for _, e := range entries {
		if rapid.IntRange(0, 30).Draw(t, "oddKey") == 0 {
			e.key = rapid.SampledFrom([][]byte{{0xc0}, {0x01}, {0xc4, 0x00}}).Draw(t, "k")
		}
		b = append(b, e.key...)
		b = append(b, e.val...)
	}
	return b
}

// genAny returns any msgpack value, now and then an invalid one.
func genAny(t *rapid.T, depth int) []byte {
	choices := 12
	if depth > 3 {
		choices = 9
	}
	switch rapid.IntRange(0, choices).Draw(t, "any") {
	case 0:
		return []byte{rapid.SampledFrom([]byte{0xc0, 0xc2, 0xc3, 0x05, 0xff}).Draw(t, "simple")}
	case 1:
		return encodeInt(t, rapid.Int64().Draw(t, "int"))
	case 2:
		return encodeStr(t, genString(t, "s"))
	case 3:
		return binary.BigEndian.AppendUint64([]byte{0xcb}, rapid.Uint64().Draw(t, "double"))
	case 4:
		return binary.BigEndian.AppendUint32([]byte{0xca}, rapid.Uint32().Draw(t, "float"))
	case 5: // fixext 1..16, ext 8
		if rapid.Bool().Draw(t, "fixext") {
			c := rapid.ByteRange(0xd4, 0xd8).Draw(t, "fixextCode")
			return append([]byte{c, 1}, make([]byte, 1<<(c-0xd4))...)
		}
		n := rapid.IntRange(0, 5).Draw(t, "extLen")
		return append([]byte{0xc7, byte(n), 1}, make([]byte, n)...)
	case 6:
		return []byte{0xc1} // never used
	case 7: // a truncated value
		return rapid.SampledFrom([][]byte{{0xcd, 0x01}, {0xa5, 'a'}, {0xdc, 0x00}, {0xd9}}).Draw(t, "cut")
	case 8:
		return []byte{0xc4, 0x02, 'h', 'i'}
	case 9, 10:
		n := rapid.IntRange(0, 3).Draw(t, "len")
		b := encodeArrayLen(t, n)
		for range n {
			b = append(b, genAny(t, depth+1)...)
		}
		return b
	}
	n := rapid.IntRange(0, 3).Draw(t, "len")
	b := encodeMapLen(t, n)
	for range n {
		b = append(b, genAny(t, depth+1)...)
		b = append(b, genAny(t, depth+1)...)
	}
	return b
}

// encodeStr writes s as str or bin, in any header that fits.
func encodeStr(t *rapid.T, s string) []byte {
	n := len(s)
	codes := []byte{0xd9, 0xda, 0xdb, 0xc4, 0xc5, 0xc6}
	if n < 32 {
		codes = append(codes, 0xa0)
	}
	var b []byte
	switch c := rapid.SampledFrom(codes).Draw(t, "strCode"); {
	case c == 0xa0:
		b = []byte{0xa0 | byte(n)}
	case n > 255 && (c == 0xd9 || c == 0xc4):
		b = binary.BigEndian.AppendUint16([]byte{c + 1}, uint16(n))
	case c == 0xd9 || c == 0xc4:
		b = []byte{c, byte(n)}
	case c == 0xda || c == 0xc5:
		b = binary.BigEndian.AppendUint16([]byte{c}, uint16(n))
	default:
		b = binary.BigEndian.AppendUint32([]byte{c}, uint32(n))
	}
	return append(b, s...)
}

// encodeInt writes n in any integer code, truncating it to the code's
// width.
func encodeInt(t *rapid.T, n int64) []byte {
	switch rapid.IntRange(0, 8).Draw(t, "intCode") {
	case 0:
		return []byte{byte(n)} // a fixnum when it fits, other codes when not
	case 1:
		return []byte{0xcc, byte(n)}
	case 2:
		return []byte{0xd0, byte(n)}
	case 3:
		return binary.BigEndian.AppendUint16([]byte{0xcd}, uint16(n))
	case 4:
		return binary.BigEndian.AppendUint16([]byte{0xd1}, uint16(n))
	case 5:
		return binary.BigEndian.AppendUint32([]byte{0xce}, uint32(n))
	case 6:
		return binary.BigEndian.AppendUint32([]byte{0xd2}, uint32(n))
	case 7:
		return binary.BigEndian.AppendUint64([]byte{0xcf}, uint64(n))
	}
	return binary.BigEndian.AppendUint64([]byte{0xd3}, uint64(n))
}

func encodeArrayLen(t *rapid.T, n int) []byte {
	switch rapid.IntRange(0, 2).Draw(t, "arrayCode") {
	case 0:
		if n < 16 {
			return []byte{0x90 | byte(n)}
		}
		fallthrough
	case 1:
		return binary.BigEndian.AppendUint16([]byte{0xdc}, uint16(n))
	}
	return binary.BigEndian.AppendUint32([]byte{0xdd}, uint32(n))
}

func encodeMapLen(t *rapid.T, n int) []byte {
	switch rapid.IntRange(0, 2).Draw(t, "mapCode") {
	case 0:
		if n < 16 {
			return []byte{0x80 | byte(n)}
		}
		fallthrough
	case 1:
		return binary.BigEndian.AppendUint16([]byte{0xde}, uint16(n))
	}
	return binary.BigEndian.AppendUint32([]byte{0xdf}, uint32(n))
}

func TestDecodeScope(t *testing.T) {
	body := reflectMarshal(t, &Scope{Project: &Project{Name: "p"}, Tasks: []*Task{{ID: "T-1", Steps: []Step{}}}})
	unknown := func(depth int) []byte { // {"x": [[...nil...]]}, then the state's fields
		b := append([]byte{0x87, 0xa1, 'x'}, bytes.Repeat([]byte{0x91}, depth)...)
		return append(append(b, 0xc0), body[1:]...)
	}
	t.Run("OK", func(t *testing.T) {
		s, n, err := DecodeScope(append(bytes.Clone(body), 0xc0))
		if err != nil || n != len(body) || s.Project.Name != "p" || s.Tasks[0].ID != "T-1" {
			t.Fatalf("DecodeScope = %+v, %d, %v; want the state and %d bytes", s, n, err, len(body))
		}
	})
	t.Run("UnknownFieldNestedToTheLimit", func(t *testing.T) {
		if _, _, err := DecodeScope(unknown(MaxSkipDepth - 1)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ErrUnknownFieldNestedTooDeep", func(t *testing.T) {
		if _, _, err := DecodeScope(unknown(MaxSkipDepth)); err == nil {
			t.Fatal("no error")
		}
	})
}
