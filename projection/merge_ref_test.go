package projection

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/internal/workload"
	"pgregory.net/rapid"
)

// The merge patch and canonical form against their reference: the
// implementation on encoding/json they replace, kept here as it was.

func refMergePatch(doc, patch JSON) (JSON, error) {
	target, err := refDecodeObject(doc)
	if err != nil {
		return "", err
	}
	p, err := refDecodeObject(patch)
	if err != nil {
		return "", err
	}
	return refEncodeCanonical(refMergeObject(target, p))
}

func refCanonical(doc JSON) (JSON, error) {
	v, err := refDecodeObject(doc)
	if err != nil {
		return "", err
	}
	return refEncodeCanonical(v)
}

func refMergeObject(target, patch map[string]any) map[string]any {
	for k, pv := range patch {
		switch pv := pv.(type) {
		case nil:
			delete(target, k)
		case map[string]any:
			t, ok := target[k].(map[string]any)
			if !ok {
				t = map[string]any{}
			}
			target[k] = refMergeObject(t, pv)
		default:
			target[k] = pv
		}
	}
	return target
}

func refDecodeObject(doc JSON) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

func refEncodeCanonical(v any) (JSON, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return JSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// checkMerge compares MergePatch and Canonical with the reference on one
// input: the same result, or an error from both.
func checkMerge(t interface{ Fatalf(string, ...any) }, doc, patch string) {
	got, gerr := MergePatch(JSON(doc), JSON(patch))
	want, werr := refMergePatch(JSON(doc), JSON(patch))
	if (gerr == nil) != (werr == nil) || got != want {
		t.Fatalf("MergePatch(%q, %q) = %q, %v; reference %q, %v", doc, patch, got, gerr, want, werr)
	}
	for _, s := range []string{doc, patch} {
		got, gerr := Canonical(JSON(s))
		want, werr := refCanonical(JSON(s))
		if (gerr == nil) != (werr == nil) || got != want {
			t.Fatalf("Canonical(%q) = %q, %v; reference %q, %v", s, got, gerr, want, werr)
		}
	}
}

func TestMergePatch_MatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		doc := genJSONObject(t, 0)
		if rapid.Bool().Draw(t, "canonicalDoc") {
			if c, err := refCanonical(JSON(doc)); err == nil {
				doc = string(c) // as a task's context is
			}
		}
		checkMerge(t, doc, genJSONObject(t, 0))
	})
}

// TestMergePatch_ChainsMatchReference: merges into what the previous merge
// returned (what MergePatch remembers and does not read again), for
// several documents in turn, agree with the reference.
func TestMergePatch_ChainsMatchReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		docs := make([]JSON, rapid.IntRange(1, 20).Draw(t, "docs"))
		refs := make([]JSON, len(docs))
		for i := range docs {
			docs[i], refs[i] = EmptyContext, EmptyContext
		}
		for range rapid.IntRange(1, 60).Draw(t, "merges") {
			i := rapid.IntRange(0, len(docs)-1).Draw(t, "doc")
			patch := JSON(genJSONObject(t, 0))
			var got, want JSON
			var gerr, werr error
			if rapid.IntRange(0, 5).Draw(t, "replace") == 0 {
				got, gerr = Canonical(patch)
				want, werr = refCanonical(patch)
			} else {
				got, gerr = MergePatch(docs[i], patch)
				want, werr = refMergePatch(refs[i], patch)
			}
			if (gerr == nil) != (werr == nil) || got != want {
				t.Fatalf("merge %q into %q = %q, %v; reference %q, %v", patch, docs[i], got, gerr, want, werr)
			}
			if gerr == nil {
				docs[i], refs[i] = got, want
			}
		}
	})
}

func TestMergePatch_Chain(t *testing.T) {
	doc := EmptyContext
	for _, step := range []struct{ patch, want string }{
		{`{"b":2,"a":1,"c":{"x":1}}`, `{"a":1,"b":2,"c":{"x":1}}`},
		{`{"a":null}`, `{"b":2,"c":{"x":1}}`},
		{`{"aa":0,"c":{"y":2}}`, `{"aa":0,"b":2,"c":{"x":1,"y":2}}`},
		{`{"b":null,"d":[]}`, `{"aa":0,"c":{"x":1,"y":2},"d":[]}`},
		{`{"c":null,"aa":null,"d":null}`, `{}`},
		{`{"z":{"n":null}}`, `{"z":{}}`},
	} {
		got, err := MergePatch(doc, JSON(step.patch))
		if err != nil || string(got) != step.want {
			t.Fatalf("MergePatch(%s, %s) = %s, %v; want %s", doc, step.patch, got, err, step.want)
		}
		doc = got
	}
}

// FuzzMergePatch_MatchesReference: on any input, MergePatch and Canonical
// agree with the reference.
func FuzzMergePatch_MatchesReference(f *testing.F) {
	f.Add(`{"a":"b"}`, `{"a":{"b":"d","c":null}}`)
	f.Add(`{"b":1,"a":2,"b":3}`, `{"\u00e9":"\ud83d\ude00","\ud800":"x\u2028"}`)
	f.Add(" {\"a\" : [1, {\"b\":null}] } trailing", `{"a":-0.5e+10,"c":"\/\b\f\n\r\t\u0001"}`)
	f.Add(`{"x":"`+"\xff\xfe"+`"}`, `{"":{"":{}}}`)
	f.Add(`{"a":{"b":1}}`, `{"a":{"b":null,"c":{"d":null}},"e":null}`)
	f.Add("", "{}") // an empty document is not the empty entry of MergePatch's memory
	f.Fuzz(func(t *testing.T, doc, patch string) {
		checkMerge(t, doc, patch)
	})
}

func TestMergePatch_DeepNesting(t *testing.T) {
	for _, depth := range []int{maxNesting - 1, maxNesting, maxNesting + 1} {
		doc := `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + "}"
		checkMerge(t, doc, `{"b":1}`)
	}
}

// JSON text generators: valid most of the time, with every variation the
// decoder reads (space, escapes, repeated keys, invalid UTF-8, numbers
// as written), and now and then a syntax error.

var jsonKeys = []string{"a", "b", "ab", "é", "files", "k0", "phase", "", `\"q`, `\u0061`, `\ud83d\ude00`, "\xff", "\u2028"}

func genJSONObject(t *rapid.T, depth int) string {
	var b strings.Builder
	ws := func() { b.WriteString(rapid.SampledFrom([]string{"", "", "", " ", "\n\t", "\r "}).Draw(t, "ws")) }
	ws()
	b.WriteByte('{')
	n := rapid.IntRange(0, 5).Draw(t, "members")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		ws()
		b.WriteString(`"` + rapid.SampledFrom(jsonKeys).Draw(t, "key") + `"`)
		ws()
		b.WriteByte(':')
		ws()
		b.WriteString(genJSONValue(t, depth+1))
		ws()
	}
	b.WriteByte('}')
	if rapid.IntRange(0, 10).Draw(t, "trailing") == 0 {
		b.WriteString(rapid.SampledFrom([]string{" ", "}", "x", `{"a":1}`}).Draw(t, "after"))
	}
	s := b.String()
	if rapid.IntRange(0, 25).Draw(t, "break") == 0 && len(s) > 0 {
		i := rapid.IntRange(0, len(s)-1).Draw(t, "at")
		s = s[:i] + rapid.SampledFrom([]string{"", ",", "\x01", "]", `"`}).Draw(t, "junk") + s[i+1:]
	}
	return s
}

func genJSONValue(t *rapid.T, depth int) string {
	max := 6
	if depth > 3 {
		max = 4
	}
	switch rapid.IntRange(0, max).Draw(t, "kind") {
	case 0:
		return rapid.SampledFrom([]string{"null", "true", "false"}).Draw(t, "literal")
	case 1:
		if rapid.IntRange(0, 30).Draw(t, "badNumber") == 0 {
			return rapid.SampledFrom([]string{"01", "1.", "-", "2e", "+1", ".5"}).Draw(t, "number")
		}
		return rapid.SampledFrom([]string{"0", "-0", "1.50", "12345678901234567890", "1e5", "-2.5E-3", "1E+2", "0.0e-0"}).Draw(t, "number")
	case 2, 3:
		return `"` + genJSONStringBody(t) + `"`
	case 4:
		return "null"
	case 5:
		n := rapid.IntRange(0, 3).Draw(t, "elems")
		parts := make([]string, n)
		for i := range parts {
			parts[i] = genJSONValue(t, depth+1)
		}
		return "[" + strings.Join(parts, rapid.SampledFrom([]string{",", " , "}).Draw(t, "sep")) + "]"
	}
	return genJSONObject(t, depth)
}

func genJSONStringBody(t *rapid.T) string {
	var b strings.Builder
	for range rapid.IntRange(0, 6).Draw(t, "pieces") {
		b.WriteString(rapid.SampledFrom([]string{"x", "hello world", "é", "日本", "😀", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`,
			`\r`, `\t`, `\u0041`, `\u00e9`, `\u0001`, `\u001f`, `\u2028`, `\u2029`, "\u2028", `\ud83d\ude00`, `\ud800`,
			`\udc00x`, `\ud800\u0041`, `\uD83D\uDE00`, "\xff", "\xed\xa0\x80", "\x7f", "<&>"}).Draw(t, "piece"))
	}
	if rapid.IntRange(0, 50).Draw(t, "badString") == 0 {
		b.WriteString(rapid.SampledFrom([]string{`\x`, `\u12`, "\x01", `\'`}).Draw(t, "bad"))
	}
	return b.String()
}

// BenchmarkMergePatch: the sixth context merge of a task of the replay
// benchmark (a context of seven keys), by MergePatch and by the
// reference.
func BenchmarkMergePatch(b *testing.B) {
	doc := EmptyContext
	for c := range 5 {
		var err error
		if doc, err = MergePatch(doc, JSON(workload.ContextPatch(7, c))); err != nil {
			b.Fatal(err)
		}
	}
	patch := JSON(workload.ContextPatch(7, 5))
	for _, impl := range []struct {
		name  string
		merge func(doc, patch JSON) (JSON, error)
	}{{"Hand", MergePatch}, {"Reference", refMergePatch}} {
		b.Run(impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc) + len(patch)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := impl.merge(doc, patch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
