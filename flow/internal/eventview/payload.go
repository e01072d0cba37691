package eventview

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
)

// JSON renders a msgpack payload as JSON: the view of its event type's
// rules (view.go) when the type and schema are known. A payload that is
// not valid msgpack (a newer binary's format, say) is shown as null;
// export still carries its exact bytes in Raw.
func JSON(typ string, schema uint32, data []byte) json.RawMessage {
	if len(data) == 0 {
		return json.RawMessage("null")
	}
	var v any
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&v); err != nil {
		return json.RawMessage("null")
	}
	v = jsonable(v)
	if rules := viewRulesOf(typ, schema); rules != nil {
		v, _ = rules.walk(v, toView) // toView never fails
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage("null")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// jsonable turns what msgpack decodes into something encoding/json takes:
// maps with non-string keys get their keys formatted.
func jsonable(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = jsonable(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[toString(k)] = jsonable(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = jsonable(x)
		}
		return t
	}
	return v
}

func toString(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	b, _ := json.Marshal(k)
	return string(b)
}

// Unview turns data, an event's payload in the view (as JSON renders it),
// back into the value that is stored (fromView), numbers as int64, uint64
// or float64, for the caller to encode as msgpack. Data of a type or
// schema this binary does not know is taken as it is.
func Unview(typ string, schema uint32, data json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	if err != nil {
		return nil, err
	}
	if rules := viewRulesOf(typ, schema); rules != nil {
		if v, err = rules.walk(v, fromView); err != nil {
			return nil, err
		}
	}
	return numbers(v), nil
}

// numbers turns json.Number into int64, uint64 or float64.
func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(t.String(), 10, 64); err == nil {
			return u
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, x := range t {
			t[k] = numbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = numbers(x)
		}
	}
	return v
}
