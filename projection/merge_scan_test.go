package projection

import (
	"strings"
	"testing"

	"github.com/flowctl/flowctl/internal/workload"
	"pgregory.net/rapid"
)

// checkScan: scanCanonical says yes only to a document that canonical
// writes back as it is, and then finds the members and keys canonical
// finds.
func checkScan(t interface{ Fatalf(string, ...any) }, doc string) bool {
	var c canon
	var top []member
	if !c.scanCanonical(doc, &top) {
		if len(top) != 0 || len(c.keys) != 0 {
			t.Fatalf("scanCanonical(%q) = false, leaving members %v and keys %q", doc, top, c.keys)
		}
		return false
	}
	var want canon
	out, err := want.canonical(nil, doc)
	if err != nil || string(out) != doc {
		t.Fatalf("scanCanonical(%q) = true; canonical gives %q, %v", doc, out, err)
	}
	if len(top) != len(want.top) {
		t.Fatalf("scanCanonical(%q): %d members, canonical finds %d", doc, len(top), len(want.top))
	}
	for i, m := range top {
		w := want.top[i]
		if m.start != w.start || m.val != w.val || m.end != w.end || string(c.key(m)) != string(want.key(w)) {
			t.Fatalf("scanCanonical(%q): member %d is %+v key %q; canonical finds %+v key %q", doc, i, m, c.key(m), w, want.key(w))
		}
	}
	return true
}

func TestScanCanonical(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want bool
	}{
		{`{}`, true},
		{`{"a":1,"b":[true,false,null,"x",{"c":{}}],"c":-0.5e+10}`, true},
		{`{"":{"":""}}`, true},
		{`{"a":"\"\\\b\f\n\r\t\u0000\u001f\u2028\u2029 é 😀 ` + "\ufffd" + `"}`, true},
		{`{"a":"\/"}`, false},       // written /
		{`{"a":"\u0041"}`, false},   // written A
		{`{"a":"\u000a"}`, false},   // written \n
		{`{"a":"\u001F"}`, false},   // upper-case hex
		{`{"a":"\ufffd"}`, false},   // written as the character
		{"{\"a\":\"\xff\"}", false}, // invalid UTF-8: written \ufffd
		{"{\"a\":\"\u2028\"}", false},
		{"{\"a\":\"\x01\"}", false},
		{`{"b":1,"a":2}`, false},
		{`{"a":1,"a":2}`, false},
		{`{"a":{"b":1,"a":2}}`, false},
		{`{"a": 1}`, false},
		{` {"a":1}`, false},
		{`{"a":1} `, false},
		{`{"a":1}{}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":[1,]}`, false},
		{`{"a":tru}`, false},
		{`[]`, false},
		{``, false},
		{`{"a":1`, false},
		{`{"\u0061":1}`, false}, // a key with an escape takes the long way
		{`{"a":` + strings.Repeat("[", maxScanDepth) + strings.Repeat("]", maxScanDepth) + `}`, false},
		{`{"a":` + strings.Repeat("[", maxScanDepth-2) + strings.Repeat("]", maxScanDepth-2) + `}`, true},
	} {
		if got := checkScan(t, tt.doc); got != tt.want {
			t.Errorf("scanCanonical(%q) = %v, want %v", tt.doc, got, tt.want)
		}
	}
}

// TestScanCanonical_Random: on generated documents, canonical or not,
// scanCanonical agrees with canonical; and it takes every canonical
// document whose keys have no escapes (the fast path is taken).
func TestScanCanonical_Random(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		doc := genJSONObject(t, 0)
		checkScan(t, doc)
		if c, err := refCanonical(JSON(doc)); err == nil && !checkScan(t, string(c)) && !strings.Contains(string(c), `\`) {
			t.Fatalf("scanCanonical(%q) = false for a canonical document", c)
		}
		plain := genPlainKeyObject(t, 0) // often canonical but for one thing
		checkScan(t, plain)
		if c, err := refCanonical(JSON(plain)); err == nil {
			if !checkScan(t, string(c)) {
				t.Fatalf("scanCanonical(%q) = false for a canonical document", c)
			}
			for range 4 {
				checkScan(t, mutate(t, string(c)))
			}
		}
	})
}

// genPlainKeyObject is genJSONObject without space and with keys that
// need no escapes (values still have them, canonical or not): its
// canonical form is all scanCanonical takes, and it is often canonical
// itself but for one thing (keys out of order or repeated, an escape
// written otherwise).
func genPlainKeyObject(t *rapid.T, depth int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range rapid.IntRange(0, 5).Draw(t, "members") {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + rapid.SampledFrom([]string{"a", "b", "ab", "é", "", "k0", "😀"}).Draw(t, "key") + `":`)
		b.WriteString(genPlainKeyValue(t, depth+1))
	}
	b.WriteByte('}')
	return b.String()
}

func genPlainKeyValue(t *rapid.T, depth int) string {
	if depth > 3 {
		return genJSONValue(t, 4) // no objects or arrays
	}
	switch rapid.IntRange(0, 5).Draw(t, "plainKind") {
	case 0:
		return genPlainKeyObject(t, depth)
	case 1:
		parts := make([]string, rapid.IntRange(0, 3).Draw(t, "elems"))
		for i := range parts {
			parts[i] = genPlainKeyValue(t, depth+1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return genJSONValue(t, 4)
}

// mutate puts into a canonical document, at a random place, something
// that canonical writes otherwise, or not at all.
func mutate(t *rapid.T, doc string) string {
	i := rapid.IntRange(0, len(doc)).Draw(t, "at")
	junk := rapid.SampledFrom([]string{" ", `\/`, `\u0041`, `\u000a`, `\u001F`, `\u0022`, `\u005c`, `\ufffd`, `\uD83D\uDE00`,
		"\xff", "\u2028", "\x01", `\`, `"`, ",", `"a":1,`, `"":0,`, "0", "-", ".5", "e1", "[", "}"}).Draw(t, "junk")
	return doc[:i] + junk + doc[i:]
}

// TestMergePatch_CanonicalTargetsMatchReference: merges into canonical
// documents MergePatch has not returned (the targets scanCanonical
// reads) agree with the reference.
func TestMergePatch_CanonicalTargetsMatchReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		doc, err := refCanonical(JSON(rapid.OneOf(rapid.Custom(func(t *rapid.T) string { return genJSONObject(t, 0) }),
			rapid.Custom(func(t *rapid.T) string { return genPlainKeyObject(t, 0) })).Draw(t, "doc")))
		if err != nil {
			return
		}
		checkMerge(t, string(doc), genJSONObject(t, 0))
	})
}

// FuzzScanCanonical: on any input, scanCanonical says yes only to a
// canonical object, and finds its members as canonical does.
func FuzzScanCanonical(f *testing.F) {
	f.Add(`{"a":1,"b":[true,false,null,"x",{"c":{}}],"c":-0.5e+10}`)
	f.Add(`{"a":"\"\\\b\f\n\r\t\u0000\u001f\u2028\u2029"}`)
	f.Add(`{"b":1,"a":2}`)
	f.Add(`{"a":"\u000a"}`)
	f.Fuzz(func(t *testing.T, doc string) {
		checkScan(t, doc)
	})
}

// BenchmarkMergePatch_Interleaved: merges into the contexts of 64 tasks
// in turn (seven keys each, as in BenchmarkMergePatch), as a replay of
// many tasks at work at once does.
func BenchmarkMergePatch_Interleaved(b *testing.B) {
	docs := make([]JSON, 64)
	for n := range docs {
		docs[n] = EmptyContext
		for c := range 5 {
			var err error
			if docs[n], err = MergePatch(docs[n], JSON(workload.ContextPatch(n, c))); err != nil {
				b.Fatal(err)
			}
		}
	}
	patch := JSON(workload.ContextPatch(7, 5))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := MergePatch(docs[i%len(docs)], patch); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
