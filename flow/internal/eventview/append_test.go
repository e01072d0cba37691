package eventview

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// TestAppendJSON: AppendJSON writes JSON's bytes for random payloads of
// every event type (the rules at their schema, none at another) built of
// every kind of msgpack value, including those it hands to JSON.
func TestAppendJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	types := append(projection.Types(), "unknown.type")
	for i := range 20000 {
		typ := types[i%len(types)]
		schema := uint32(projection.SchemaVersion)
		if i%7 == 0 {
			schema++
		}
		data := randomPayload(rng, typ)
		checkAppendJSON(t, typ, schema, data)
	}
}

func checkAppendJSON(t *testing.T, typ string, schema uint32, data []byte) {
	t.Helper()
	want := JSON(typ, schema, data)
	got := AppendJSON([]byte("prefix"), typ, schema, data)
	if !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Fatalf("%s schema %d, payload %x:\n got %s\nwant prefix%s", typ, schema, data, got, want)
	}
}

// TestAppender_AppendJSON: one Appender, reused for payload after payload
// (some of which it hands to JSON half-way through a map), writes what
// AppendJSON writes for each.
func TestAppender_AppendJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	types := append(projection.Types(), "unknown.type")
	var a Appender
	var got []byte
	for i := range 5000 {
		typ := types[i%len(types)]
		data := randomPayload(rng, typ)
		want := AppendJSON(nil, typ, projection.SchemaVersion, data)
		got = a.AppendJSON(got[:0], typ, projection.SchemaVersion, data)
		if !bytes.Equal(got, want) {
			t.Fatalf("payload %d (%s, %x):\n got %s\nwant %s", i, typ, data, got, want)
		}
	}
}

// randomPayload is a map with the fields of typ's rules (and others), as
// a write encodes it or not (keys unsorted), of random values.
func randomPayload(rng *rand.Rand, typ string) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(rng.IntN(2) == 0)
	var keys []string
	for k := range viewRulesOf(typ, projection.SchemaVersion) {
		keys = append(keys, k)
	}
	keys = append(keys, "a", "b", "zz", "é", "x\u2028")
	m := map[string]any{}
	for _, k := range keys {
		if rng.IntN(3) > 0 {
			m[k] = randomValue(rng, 3)
		}
	}
	if err := enc.Encode(m); err != nil {
		panic(err)
	}
	b := buf.Bytes()
	switch rng.IntN(20) {
	case 0:
		return b[:rng.IntN(len(b)+1)] // truncated
	case 1:
		return append(b, 0x01) // trailing bytes
	case 2:
		v, _ := msgpack.Marshal(randomValue(rng, 3)) // not a map
		return v
	}
	return b
}

func randomValue(rng *rand.Rand, depth int) any {
	texts := []string{`{"a": [1, 2.5e3, {"b": null}], "c": "é"}`, `[ ]`, `"x"`, `not json`, `{"a":1,"a":2}`,
		"\xff\xfe", "line\nbreak\t\"q\" \\ \u2028\u2029 \x01 <&>", "", `1e999`, ` 12 `}
	switch k := rng.IntN(14); {
	case k == 0 && depth > 0:
		m := map[string]any{}
		for range rng.IntN(5) {
			m[texts[rng.IntN(len(texts))]] = randomValue(rng, depth-1)
		}
		for _, key := range []string{"lease_until", "patch", "action", "context", "claim", "occurred_at"} {
			if rng.IntN(3) == 0 {
				m[key] = randomValue(rng, depth-1)
			}
		}
		return m
	case k == 1 && depth > 0:
		l := make([]any, rng.IntN(4))
		for i := range l {
			l[i] = randomValue(rng, depth-1)
		}
		return l
	case k == 2:
		return texts[rng.IntN(len(texts))]
	case k == 3:
		ints := []any{int8(-5), int16(-300), int32(-70000), int64(math.MinInt64), uint8(200), uint16(60000),
			uint32(4e9), uint64(math.MaxUint64), uint64(1795619949855530242), int64(0), int64(1795619949855530242)}
		return ints[rng.IntN(len(ints))]
	case k == 4:
		floats := []any{1.5, 1e21, 1e-7, 123456789.125, float32(0.1), float32(1e22), float32(1e-7), 0.0, -2.5e-9,
			math.Inf(1), math.NaN()}
		return floats[rng.IntN(len(floats))]
	case k == 5:
		return rng.IntN(2) == 0
	case k == 6:
		return nil
	case k == 7:
		return []byte("bin")
	case k == 8:
		return time.Unix(1, 2)
	case k == 9:
		return map[int]string{1: "x"}
	}
	return rng.Int64N(1 << 40)
}

// FuzzAppendJSON: AppendJSON writes JSON's bytes for any payload, of
// every event type.
func FuzzAppendJSON(f *testing.F) {
	for typ, p := range viewPayloads("T-1", `{"a":[1,{"b":null}],"c":"é"}`, 1795619949855530242, true) {
		b, err := marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(typ, b)
	}
	f.Add("task.claimed", []byte{0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02})
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		checkAppendJSON(t, typ, uint32(projection.SchemaVersion), data)
	})
}
