package searchidx

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// FuzzTexts: no payload, however malformed, makes the scanners panic or
// loop, and what they return is words of the input.
func FuzzTexts(f *testing.F) {
	f.Add([]byte("\x82\xa5title\xa3abc\xa4kind\xa6memory"), `{"a":["x\"y",{"b":"c"}]}`)
	f.Add([]byte("\xdf\xff\xff\xff\xff"), `{"a":`)
	f.Fuzz(func(t *testing.T, data []byte, doc string) {
		for _, typ := range []string{projection.TypeTaskCreated, projection.TypeTaskUpdated, projection.TypeTaskContextMerged,
			projection.TypeNoteAdded, projection.TypeExecRecorded} {
			for _, tx := range Texts(&store.Event{Type: typ, Schema: projection.SchemaVersion, Data: data}) {
				_ = Words(tx.Text)
			}
		}
		_ = Snippet(ContextText(doc), Words(doc))
	})
}

// FuzzEachImpact: no impact block, however malformed, makes the decoder
// panic, and one it decodes is the encoding of what it decoded.
func FuzzEachImpact(f *testing.F) {
	p := NewPosting(7, FieldTitle, 1, 3)
	f.Add(uint64(p), appendImpact(appendImpact(nil, p, p, 0x1203), p, p+1<<16, (p+1<<16).low()))
	f.Add(uint64(p), []byte{0x80})
	f.Fuzz(func(t *testing.T, first uint64, v []byte) {
		k := binary.BigEndian.AppendUint64([]byte{kindImpact}, first)
		var again []byte
		prev := Posting(first)
		err := eachImpact(1, k, v, func(p Posting, impact uint16) {
			again, prev = appendImpact(again, prev, p, impact), p
		})
		if err == nil && !bytes.Equal(again, v) {
			t.Fatalf("%x decodes to what encodes as %x", v, again)
		}
	})
}
