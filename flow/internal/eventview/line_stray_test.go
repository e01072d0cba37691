package eventview

import "testing"

// TestParseLine_StrayByteInAValue: a byte that starts no JSON value inside
// an object or array (FuzzImport found one that looped for ever) refuses
// the line.
func TestParseLine_StrayByteInAValue(t *testing.T) {
	for _, line := range []string{
		`{"id":"x","data":{"title"` + "\x15" + `?2-:"t"}}`,
		`{"id":"x","data":[1,?]}`,
		`{"id":"x","data":{"a":` + "\xf8" + `}}`,
	} {
		var l Line
		if ParseLine([]byte(line), &l) {
			t.Errorf("ParseLine(%q) = true, want false", line)
		}
	}
}
