package projection

import (
	"encoding/json"
	"testing"
)

// FuzzMergePatch: MergePatch never panics; what it returns is canonical
// JSON; and a merge patch is idempotent (RFC 7396): applying it twice
// gives what applying it once gave.
func FuzzMergePatch(f *testing.F) {
	f.Add(`{"a":"b"}`, `{"a":{"b":"d","c":null}}`)
	f.Add(`{}`, `{"a":{"bb":{"ccc":null}}}`)
	f.Add(`{"n":1.50,"x":[1,{"y":null}]}`, `{"x":null,"m":12345678901234567890}`)
	f.Add(`{"a":1}`, `[1]`)
	f.Fuzz(func(t *testing.T, doc, patch string) {
		once, err := MergePatch(JSON(doc), JSON(patch))
		if err != nil {
			return
		}
		if !json.Valid([]byte(once)) {
			t.Fatalf("MergePatch(%s, %s) = %s, not JSON", doc, patch, once)
		}
		if c, err := Canonical(once); err != nil || c != once {
			t.Fatalf("result %s is not canonical (%s, %v)", once, c, err)
		}
		twice, err := MergePatch(once, JSON(patch))
		if err != nil || twice != once {
			t.Fatalf("patch %s applied twice = %s, %v; once = %s", patch, twice, err, once)
		}
	})
}
