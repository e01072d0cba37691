package snapstore

import (
	"encoding/binary"
	"testing"
)

func TestParseKey(t *testing.T) {
	t.Parallel()
	for _, scope := range []string{"", "p", "a longer project name"} {
		for _, seq := range []uint64{0, 1, 1 << 40} {
			got, gotSeq, ok := ParseKey(Key(scope, seq))
			if !ok || got != scope || gotSeq != seq {
				t.Errorf("ParseKey(Key(%q, %d)) = %q, %d, %v", scope, seq, got, gotSeq, ok)
			}
		}
	}
	for _, k := range [][]byte{nil, {0}, {0, 1, 'p'}, append(Key("p", 1), 0), binary.BigEndian.AppendUint16(nil, 0xffff)} {
		if _, _, ok := ParseKey(k); ok {
			t.Errorf("ParseKey(%x) accepted a malformed key", k)
		}
	}
}
