package searchidx

import (
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
