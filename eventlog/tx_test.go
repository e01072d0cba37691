package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestTx_KeyValue(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		l := mustOpen(t)
		err := l.Update(func(tx *Tx) error {
			for i, k := range []string{"task/1", "task/2", "task/3", "plan/1"} {
				if err := tx.Put("proj_tasks", []byte(k), []byte(fmt.Sprint(i))); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		err = l.View(func(tx *Tx) error {
			got, err := tx.Get("proj_tasks", []byte("task/2"))
			if err != nil || string(got) != "1" {
				t.Errorf("Get(task/2) = %q, %v; want \"1\"", got, err)
			}
			if got, err := tx.Get("proj_tasks", []byte("task/9")); got != nil || err != nil {
				t.Errorf("Get(missing key) = %q, %v; want nil, nil", got, err)
			}
			if got, err := tx.Get("proj_none", []byte("k")); got != nil || err != nil {
				t.Errorf("Get(missing bucket) = %q, %v; want nil, nil", got, err)
			}
			var keys []string
			err = tx.Scan("proj_tasks", []byte("task/"), func(k, v []byte) error {
				keys = append(keys, string(k)+"="+string(v))
				return nil
			})
			if want := "task/1=0 task/2=1 task/3=2"; err != nil || fmt.Sprint(keys) != "["+want+"]" {
				t.Errorf("Scan(task/) = %v, %v; want [%s]", keys, err, want)
			}
			keys = nil
			err = tx.Scan("proj_tasks", nil, func(k, v []byte) error { keys = append(keys, string(k)); return nil })
			if err != nil || len(keys) != 4 || keys[0] != "plan/1" {
				t.Errorf("Scan(all) = %v, %v; want 4 keys from plan/1", keys, err)
			}
			if err := tx.Scan("proj_none", nil, func(k, v []byte) error { t.Error("called"); return nil }); err != nil {
				t.Errorf("Scan(missing bucket) = %v, want nil", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("OK/ScanErrStop", func(t *testing.T) {
		l := mustOpen(t)
		mustPut(t, l, "b", "k1", "v")
		mustPut(t, l, "b", "k2", "v")
		n := 0
		err := l.View(func(tx *Tx) error {
			return tx.Scan("b", nil, func(k, v []byte) error { n++; return ErrStop })
		})
		if err != nil || n != 1 {
			t.Fatalf("Scan with ErrStop: %d calls, err %v; want 1, nil", n, err)
		}
		errMine := errors.New("mine")
		err = l.View(func(tx *Tx) error { return tx.Scan("b", nil, func(k, v []byte) error { return errMine }) })
		if !errors.Is(err, errMine) {
			t.Fatalf("Scan: err = %v, want the callback's error", err)
		}
	})

	t.Run("OK/Copies", func(t *testing.T) {
		l := mustOpen(t)
		mustPut(t, l, "b", "k", "value")
		var got, scanned []byte
		err := l.View(func(tx *Tx) (err error) {
			got, err = tx.Get("b", []byte("k"))
			if err != nil {
				return err
			}
			return tx.Scan("b", nil, func(k, v []byte) error { scanned = v; return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		got[0], scanned[0] = 'X', 'Y'
		if v := mustGet(t, l, "b", "k"); string(v) != "value" {
			t.Fatalf("stored value changed to %q through a returned slice", v)
		}
	})

	t.Run("OK/Delete", func(t *testing.T) {
		l := mustOpen(t)
		mustPut(t, l, "b", "k", "v")
		mustPut(t, l, "b", "k2", "v")
		err := l.Update(func(tx *Tx) error {
			if err := tx.Delete("b", []byte("k")); err != nil {
				return err
			}
			if err := tx.Delete("b", []byte("absent")); err != nil {
				return err
			}
			return tx.Delete("no_such_bucket", []byte("k"))
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if v := mustGet(t, l, "b", "k"); v != nil {
			t.Fatalf("deleted key has value %q", v)
		}
		if v := mustGet(t, l, "b", "k2"); string(v) != "v" {
			t.Fatalf("other key has value %q", v)
		}
	})

	t.Run("OK/DeleteBucket", func(t *testing.T) {
		l := mustOpen(t)
		mustPut(t, l, "b", "k", "v")
		err := l.Update(func(tx *Tx) error {
			if err := tx.DeleteBucket("b"); err != nil {
				return err
			}
			return tx.DeleteBucket("no_such_bucket")
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if v := mustGet(t, l, "b", "k"); v != nil {
			t.Fatalf("key of deleted bucket has value %q", v)
		}
		mustPut(t, l, "b", "k", "again") // the bucket can be recreated
	})

	t.Run("ErrInvalid/LogBuckets", func(t *testing.T) {
		l := mustOpen(t)
		mustAppend(t, l, "s", NoStream, ev("a", "1"))
		names := []string{"", "meta", "log", "streams", "stream_idx", "ids", "project_idx"}
		err := l.Update(func(tx *Tx) error {
			for _, name := range names {
				ops := map[string]error{
					"Put":          tx.Put(name, []byte("head_seq"), []byte("x")),
					"Delete":       tx.Delete(name, []byte("head_seq")),
					"DeleteBucket": tx.DeleteBucket(name),
					"Scan":         tx.Scan(name, nil, func(k, v []byte) error { return nil }),
				}
				_, ops["Get"] = tx.Get(name, []byte("head_seq"))
				for op, err := range ops {
					if !errors.Is(err, ErrInvalid) {
						t.Errorf("%s(%q): err = %v, want ErrInvalid", op, name, err)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
	})

	t.Run("ErrReadOnly/InView", func(t *testing.T) {
		l := mustOpen(t)
		mustPut(t, l, "b", "k", "v")
		err := l.View(func(tx *Tx) error {
			for op, err := range map[string]error{
				"Put":          tx.Put("b", []byte("k"), []byte("x")),
				"PutNewBucket": tx.Put("c", []byte("k"), []byte("x")),
				"Delete":       tx.Delete("b", []byte("k")),
				"DeleteBucket": tx.DeleteBucket("b"),
			} {
				if !errors.Is(err, ErrReadOnly) {
					t.Errorf("%s in View: err = %v, want ErrReadOnly", op, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if v := mustGet(t, l, "b", "k"); string(v) != "v" {
			t.Fatalf("value = %q after refused writes, want v", v)
		}
	})

	t.Run("OK/AtomicWithAppend", func(t *testing.T) {
		l := mustOpen(t)
		errMine := errors.New("rolled back")
		err := l.Update(func(tx *Tx) error {
			if _, err := tx.Append("s", NoStream, ev("a", "1")); err != nil {
				return err
			}
			if err := tx.Put("proj", []byte("k"), []byte("v")); err != nil {
				return err
			}
			return errMine
		})
		if !errors.Is(err, errMine) {
			t.Fatalf("Update: err = %v, want the callback's error", err)
		}
		if seq := mustHead(t, l); seq != 0 {
			t.Fatalf("head = %d, want 0: the append must roll back", seq)
		}
		if v := mustGet(t, l, "proj", "k"); v != nil {
			t.Fatalf("put survived a rolled-back Update: %q", v)
		}

		err = l.Update(func(tx *Tx) error {
			got, err := tx.Append("s", NoStream, ev("a", "1"))
			if err != nil {
				return err
			}
			return tx.Put("proj", []byte("k"), fmt.Append(nil, got.Version))
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if v := mustGet(t, l, "proj", "k"); !bytes.Equal(v, []byte("1")) || mustHead(t, l) != 1 {
			t.Fatalf("after commit: value %q, head %d; want \"1\", 1", v, mustHead(t, l))
		}
	})
}

func mustPut(tb testing.TB, l *Log, bucket, key, value string) {
	tb.Helper()
	if err := l.Update(func(tx *Tx) error { return tx.Put(bucket, []byte(key), []byte(value)) }); err != nil {
		tb.Fatalf("Put(%s, %s): %v", bucket, key, err)
	}
}

func mustGet(tb testing.TB, l *Log, bucket, key string) []byte {
	tb.Helper()
	var v []byte
	if err := l.View(func(tx *Tx) (err error) { v, err = tx.Get(bucket, []byte(key)); return err }); err != nil {
		tb.Fatalf("Get(%s, %s): %v", bucket, key, err)
	}
	return v
}

func TestTx_Last(t *testing.T) {
	l := mustOpen(t)
	err := l.Update(func(tx *Tx) error {
		for _, k := range []string{"a/1", "a/3", "a/5", "b/1"} {
			if err := tx.Put("x", []byte(k), []byte("v"+k)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ prefix, max, want string }{
		{"a/", "a/4", "a/3"},
		{"a/", "a/5", "a/5"},
		{"a/", "a/9", "a/5"},
		{"a/", "a/0", ""},
		{"b/", "b/9", "b/1"},
		{"c/", "c/9", ""},
		{"a/", "z", "a/5"[:0]}, // the last key <= z is b/1: not under a/
	}
	for _, tt := range tests {
		var got string
		err := l.View(func(tx *Tx) error {
			k, v, err := tx.Last("x", []byte(tt.prefix), []byte(tt.max))
			if k != nil && string(v) != "v"+string(k) {
				t.Errorf("value %q for key %q", v, k)
			}
			got = string(k)
			return err
		})
		if err != nil || got != tt.want {
			t.Errorf("Last(%q, %q) = %q, %v; want %q", tt.prefix, tt.max, got, err, tt.want)
		}
	}
}

// TestTx_BucketDeletedAndMadeAgain deletes a caller bucket and puts into
// it again in the same transaction: the handle the transaction keeps for
// the name (Tx.buckets) must not outlive the bucket.
func TestTx_BucketDeletedAndMadeAgain(t *testing.T) {
	l := mustOpen(t)
	err := l.Update(func(tx *Tx) error {
		for _, err := range []error{
			tx.Put("b", []byte("old"), []byte("1")), tx.DeleteBucket("b"), tx.Put("b", []byte("new"), []byte("2")),
		} {
			if err != nil {
				return err
			}
		}
		if v, _ := tx.Get("b", []byte("old")); v != nil {
			t.Errorf("Get(old) in the transaction = %q after DeleteBucket", v)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = l.View(func(tx *Tx) error {
		old, _ := tx.Get("b", []byte("old"))
		v, _ := tx.Get("b", []byte("new"))
		if old != nil || string(v) != "2" {
			t.Errorf("after the transaction: old = %q, new = %q, want nil, 2", old, v)
		}
		return nil
	})
}
