package projstore

import (
	"bytes"
	"errors"
	"testing"

	"github.com/flowctl/flowctl/projection"
)

func TestSeal(t *testing.T) {
	key, body := []byte("alpha/T-1"), []byte("body")
	v := Seal(key, append([]byte(nil), body...))
	t.Run("OK", func(t *testing.T) {
		got, err := Unseal(BucketTasks, key, v)
		if err != nil || string(got) != string(body) {
			t.Fatalf("unseal = %q, %v; want %q", got, err, body)
		}
	})
	t.Run("ErrDamaged", func(t *testing.T) {
		for i := range v {
			for bit := range 8 {
				bad := append([]byte(nil), v...)
				bad[i] ^= 1 << bit
				if _, err := Unseal(BucketTasks, key, bad); !errors.Is(err, ErrDamaged) {
					t.Fatalf("byte %d bit %d flipped: unseal = %v, want ErrDamaged", i, bit, err)
				}
			}
		}
		for _, bad := range [][]byte{nil, v[:3], v[:len(v)-1]} {
			if _, err := Unseal(BucketTasks, key, bad); !errors.Is(err, ErrDamaged) {
				t.Fatalf("Unseal(%q) = %v, want ErrDamaged", bad, err)
			}
		}
		if _, err := Unseal(BucketTasks, []byte("alpha/T-2"), v); !errors.Is(err, ErrDamaged) {
			t.Fatalf("unseal under another key = %v, want ErrDamaged", err)
		}
	})
}

// FuzzDecodeEntity: decoding a stored task never panics and fails only
// with ErrDamaged, whether the value's seal is arbitrary bytes
// or a correct seal over an arbitrary body; a sealed body unseals to
// itself.
func FuzzDecodeEntity(f *testing.F) {
	task, err := encodeEntity("p/T-1", &projection.Task{Project: "p", ID: "T-1", Title: "one", Status: "todo"})
	if err != nil {
		f.Fatal(err)
	}
	f.Add("p/T-1", task)
	f.Add("p/T-1", task[:len(task)-SealSize])
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, key string, v []byte) {
		for _, stored := range [][]byte{v, Seal([]byte(key), bytes.Clone(v))} {
			if _, err := decodeEntity[projection.Task](nil, BucketTasks, []byte(key), stored); err != nil && !errors.Is(err, ErrDamaged) {
				t.Fatalf("decodeEntity(%q, %x) = %v, want nil or ErrDamaged", key, stored, err)
			}
		}
		body, err := Unseal(BucketTasks, []byte(key), Seal([]byte(key), bytes.Clone(v)))
		if err != nil || !bytes.Equal(body, v) {
			t.Fatalf("Unseal(Seal(%x)) = %x, %v", v, body, err)
		}
	})
}
