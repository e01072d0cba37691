package projection

import (
	"bytes"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// entityTypes are the types AppendEntity and DecodeEntity take.
var entityTypes = []reflect.Type{
	reflect.TypeFor[Project](), reflect.TypeFor[Plan](), reflect.TypeFor[Task](),
	reflect.TypeFor[Approval](), reflect.TypeFor[Exec](), reflect.TypeFor[Checkpoint](),
}

// TestEntityCodec: AppendEntity writes what reflection writes, and
// DecodeEntity reads it back to the same value, for the entities of a
// realistic history and for random ones.
func TestEntityCodec(t *testing.T) {
	check := func(t tHelper, v any) {
		t.Helper()
		want := reflectMarshal(t, v)
		got, ok := AppendEntity([]byte("prefix"), v)
		if !ok || !bytes.Equal(got[len("prefix"):], want) || string(got[:len("prefix")]) != "prefix" {
			t.Fatalf("AppendEntity(%T) = % x, %v; reflection writes % x", v, got, ok, want)
		}
		back := reflect.New(reflect.TypeOf(v).Elem())
		if ok, err := DecodeEntity(want, back.Interface()); !ok || err != nil {
			t.Fatalf("DecodeEntity(%T) = %v, %v", v, ok, err)
		}
		ref := reflect.New(reflect.TypeOf(v).Elem())
		if err := reflectUnmarshal(want, ref.Interface()); err != nil {
			t.Fatal(err)
		}
		if !sameValue(back.Elem(), ref.Elem()) {
			t.Fatalf("DecodeEntity(%T):\ngot        %#v\nreflection %#v", v, back.Elem(), ref.Elem())
		}
	}

	t.Run("History", func(t *testing.T) {
		mem := replay(t, genHistory(t, 2, 3000))
		n := 0
		for _, m := range []any{mem.Projects, mem.Plans, mem.Tasks, mem.Approvals, mem.Execs, mem.Checkpoints} {
			iter := reflect.ValueOf(m).MapRange()
			for iter.Next() {
				check(t, iter.Value().Interface())
				n++
			}
		}
		if n < 100 {
			t.Fatalf("the history has only %d entities", n)
		}
	})

	t.Run("Random", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) {
			typ := entityTypes[rapid.IntRange(0, len(entityTypes)-1).Draw(rt, "type")]
			check(rt, genValue(rt, typ, 0).Interface())
		})
	})

	t.Run("OtherTypes", func(t *testing.T) {
		if b, ok := AppendEntity([]byte("x"), &Step{}); ok || string(b) != "x" {
			t.Fatalf("AppendEntity(*Step) = %q, %v; want the input and false", b, ok)
		}
		if ok, err := DecodeEntity(nil, &Step{}); ok || err != nil {
			t.Fatalf("DecodeEntity(*Step) = %v, %v; want false, nil", ok, err)
		}
	})

	t.Run("Garbage", func(t *testing.T) {
		for _, b := range [][]byte{nil, {0xc1}, {0x81, 0xa2, 'i', 'd'}, {0xdf, 0xff, 0xff, 0xff, 0xff}} {
			for _, typ := range entityTypes {
				v := reflect.New(typ)
				ok, err := DecodeEntity(b, v.Interface())
				werr := reflectUnmarshal(b, reflect.New(typ).Interface())
				if !ok || (err == nil) != (werr == nil) {
					t.Errorf("DecodeEntity(% x) into %s: %v, %v; reflection's error %v", b, typ.Name(), ok, err, werr)
				}
			}
		}
	})
}

// TestEntityClone: every entity's Clone is equal to it and shares no
// slice element or pointer with it.
func TestEntityClone(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		typ := entityTypes[rapid.IntRange(0, len(entityTypes)-1).Draw(rt, "type")]
		v := genValue(rt, typ, 0)
		c := v.MethodByName("Clone").Call(nil)[0]
		if c.Type() != v.Type() || !sameValue(c.Elem(), v.Elem()) {
			rt.Fatalf("Clone of %#v = %#v", v.Elem(), c.Elem())
		}
		if path := shared(v.Elem(), c.Elem(), typ.Name()); path != "" {
			rt.Fatalf("Clone of %s shares %s", typ.Name(), path)
		}
	})
}

// shared names a slice or pointer that a and b, equal values, share.
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		return shared(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for i := range a.Len() {
			if p := shared(a.Index(i), b.Index(i), path+"[]"); p != "" {
				return p
			}
		}
	case reflect.Struct:
		for i := range a.NumField() {
			if p := shared(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p
			}
		}
	}
	return ""
}
