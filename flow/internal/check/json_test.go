package check

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestJSON(t *testing.T) {
	ok := []string{
		`{}`, `[]`, `1`, `"x"`, `null`, `{"a":{"b":[1,{"c":2}]},"d":"é"}`,
		`{"a":1,"b":{"a":2}}`, // the same key in different objects is fine
		strings.Repeat("[", 64) + strings.Repeat("]", 64),
	}
	for _, s := range ok {
		if err := JSON([]byte(s)); err != nil {
			t.Errorf("JSON(%.40q) = %v, want nil", s, err)
		}
	}
	bad := []string{
		``, `{`, `{"a":}`, `{"a":1,"a":2}`, `{"x":{"a":1,"a":1}}`, `[{"k":1,"k":1}]`,
		strings.Repeat("[", 65) + strings.Repeat("]", 65),
		strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65),
		"\"\xff\"", `{} {}`, `1 2`, `{"a":1}x`,
	}
	for _, s := range bad {
		if err := JSON([]byte(s)); err == nil {
			t.Errorf("JSON(%.40q) = nil, want an error", s)
		}
	}
}

// TestJSON_NumberRange: a number beyond the range of a double is
// refused (I-JSON, RFC 7493); one within it is accepted however many
// digits it has, since precision is not the check's business.
func TestJSON_NumberRange(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		for _, s := range []string{
			`123456789012345678901234567890`, `{"a":-123456789012345678901234567890}`,
			`1.7976931348623157e308`, `-1e308`, `[1e-400]`, `0.000000000000000000000000000001`,
		} {
			if err := JSON([]byte(s)); err != nil {
				t.Errorf("JSON(%s) = %v, want nil", s, err)
			}
		}
	})
	t.Run("OutOfRange", func(t *testing.T) {
		for _, s := range []string{
			`{"a":1e999}`, `-1e999`, `1e400`, `[1,1e309]`, `{"a":{"b":[-1.8e308]}}`,
			`1` + strings.Repeat("0", 400),
		} {
			if err := JSON([]byte(s)); err == nil {
				t.Errorf("JSON(%.40s) = nil, want an error", s)
			}
		}
	})
}

// FuzzCheckJSON: JSON (flow.CheckJSON) never panics, and what it accepts
// is JSON.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":null}]}`, `{"a":1,"a":2}`, "\"\xff\"", `[[[[]]]]`, `1 2`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if JSON(b) == nil && !json.Valid(b) {
			t.Fatalf("JSON accepted %q, which is not JSON", b)
		}
	})
}
