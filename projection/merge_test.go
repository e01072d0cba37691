package projection

import (
	"testing"
)

// The examples of RFC 7396, Appendix A, whose target and patch are
// objects (a context is always an object).
func TestMergePatch_RFC7396(t *testing.T) {
	tests := []struct{ target, patch, want string }{
		{`{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{`{"a":"b"}`, `{"a":null}`, `{}`},
		{`{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{`{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{`{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{`{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{`{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{`{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{`{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
		{`{"n":1.50}`, `{"m":12345678901234567890}`, `{"m":12345678901234567890,"n":1.50}`}, // numbers keep their text
	}
	for _, tt := range tests {
		got, err := MergePatch(JSON(tt.target), JSON(tt.patch))
		if err != nil || string(got) != tt.want {
			t.Errorf("MergePatch(%s, %s) = %s, %v; want %s", tt.target, tt.patch, got, err, tt.want)
		}
	}
}

func TestMergePatch_ErrNotObject(t *testing.T) {
	for _, patch := range []string{`[]`, `"x"`, `1`, `null`, `{`} {
		if _, err := MergePatch(EmptyContext, JSON(patch)); err == nil {
			t.Errorf("MergePatch with patch %s: no error, want one", patch)
		}
	}
}

func TestCompareIDs(t *testing.T) {
	ordered := []string{"A-1", "T-1", "T-2", "T-10", "X-3"}
	for i := range ordered {
		for j := range ordered {
			got := CompareIDs(ordered[i], ordered[j])
			if (i < j && got >= 0) || (i > j && got <= 0) || (i == j && got != 0) {
				t.Errorf("CompareIDs(%s, %s) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}
