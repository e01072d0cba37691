package check

import (
	"strings"
	"testing"
)

// fastJSONCases are documents on both sides of every rule fastJSON
// settles by itself, and some it leaves to the slow check.
var fastJSONCases = []string{
	`{}`, `[]`, `1`, `-0`, `0.5e-3`, `"x"`, `null`, `true`, `false`, ` {"a" : [ 1 , 2 ] } `,
	`{"a":{"b":[1,{"c":2}]},"d":"é"}`, `{"a":1,"b":{"a":2}}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`,
	`{"x":"\n\"\\\/\b\f\r\t\u00e9"}`, `"\x"`, `"\u12"`, "\"\x01\"", "\"\xff\"", `01`, `1.`, `1e`, `-`,
	`1e400`, `-1e999`, `1e-400`, `1` + strings.Repeat("0", 400), `{} {}`, `1 2`, `{"a":1}x`, ``,
	`{`, `{"a":}`, `[1,]`, `{"a":1,}`, `tru`, `nul`, `[1 2]`, `{"a" 1}`, `{1:2}`,
	strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65),
}

// TestFastJSON: what fastJSON accepts the slow check accepts too, and the
// common documents it does accept (so that it is the fast path).
func TestFastJSON(t *testing.T) {
	for _, s := range fastJSONCases {
		if fastJSON([]byte(s), MaxJSONDepth) {
			if err := slowJSON([]byte(s), MaxJSONDepth); err != nil {
				t.Errorf("fastJSON(%.40q) = true, the slow check says %v", s, err)
			}
		}
	}
	for _, s := range []string{`{"a":{"b":[1,{"c":2.5e3}]},"d":"é\n"}`, `[]`, `"x"`, `{"k":null,"l":true}`} {
		if !fastJSON([]byte(s), MaxJSONDepth) {
			t.Errorf("fastJSON(%q) = false, want true", s)
		}
	}
}

// FuzzFastJSON: fastJSON never accepts what the slow check refuses.
func FuzzFastJSON(f *testing.F) {
	for _, s := range fastJSONCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if fastJSON(b, 3) && slowJSON(b, 3) != nil {
			t.Fatalf("fastJSON accepted %q, the slow check refuses it: %v", b, slowJSON(b, 3))
		}
	})
}
