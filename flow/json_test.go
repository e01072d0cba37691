package flow

import (
	"strings"
	"testing"
)

func TestCheckJSON(t *testing.T) {
	ok := []string{
		`{}`, `[]`, `1`, `"x"`, `null`, `{"a":{"b":[1,{"c":2}]},"d":"é"}`,
		`{"a":1,"b":{"a":2}}`, // the same key in different objects is fine
		strings.Repeat("[", 64) + strings.Repeat("]", 64),
	}
	for _, s := range ok {
		if err := CheckJSON([]byte(s)); err != nil {
			t.Errorf("CheckJSON(%.40q) = %v, want nil", s, err)
		}
	}
	bad := []string{
		``, `{`, `{"a":}`, `{"a":1,"a":2}`, `{"x":{"a":1,"a":1}}`, `[{"k":1,"k":1}]`,
		strings.Repeat("[", 65) + strings.Repeat("]", 65),
		strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65),
		"\"\xff\"", `{} {}`, `1 2`, `{"a":1}x`,
	}
	for _, s := range bad {
		if err := CheckJSON([]byte(s)); err == nil {
			t.Errorf("CheckJSON(%.40q) = nil, want an error", s)
		}
	}
}
