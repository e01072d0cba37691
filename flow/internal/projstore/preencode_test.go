package projstore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// TestFlush_PreEncodedSame: a batch's Flush of many entities, encoded on
// a second goroutine, stores the bytes of a Flush that encodes each as it
// writes it, and its FlushFunc hears each entity's sealed value and
// msgpack, or nil, nil for one removed.
func TestFlush_PreEncodedSame(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 4*preEncodeMin).Draw(rt, "entities")
		gone := rapid.SliceOfN(rapid.Bool(), n, n).Draw(rt, "removed")
		titles := rapid.SliceOfN(rapid.StringN(0, 300, -1), n, n).Draw(rt, "titles")
		type heard struct{ sealed, msgpack []byte }
		sub, err := os.MkdirTemp(dir, "case")
		if err != nil {
			rt.Fatal(err)
		}
		write := func(notify bool) (map[string][]byte, map[string]heard) {
			l, err := eventlog.Open(filepath.Join(sub, fmt.Sprintf("f%v.db", notify)), eventlog.Options{Create: true, NoSync: true})
			if err != nil {
				rt.Fatal(err)
			}
			defer l.Close()
			got := map[string]heard{}
			stored := map[string][]byte{}
			err = l.Update(func(tx *eventlog.Tx) error {
				p := NewPending(tx)
				if notify {
					p.OnFlush(func(bucket, key string, sealed, msgpack []byte) {
						got[bucket+"/"+key] = heard{sealed, bytes.Clone(msgpack)}
					})
				}
				s, _ := Writer(p)
				for i := range n {
					id := fmt.Sprintf("T-%d", i+1)
					var err error
					switch {
					case gone[i]:
						err = s.Delete(projection.KindTask, "p", id)
					case i%3 == 0:
						err = s.PutPlan(&projection.Plan{Project: "p", ID: fmt.Sprintf("P-%d", i+1), Title: titles[i]})
					default:
						err = s.PutTask(&projection.Task{Project: "p", ID: id, Title: titles[i], Status: projection.StatusTodo})
					}
					if err != nil {
						return err
					}
				}
				if err := p.Flush(); err != nil {
					return err
				}
				for _, b := range EntityBuckets {
					if err := tx.Scan(b, nil, func(k, v []byte) error {
						stored[b+"/"+string(k)] = bytes.Clone(v)
						return nil
					}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				rt.Fatal(err)
			}
			return stored, got
		}
		want, _ := write(false)
		stored, got := write(true)
		if len(stored) != len(want) {
			rt.Fatalf("%d entities stored, want %d", len(stored), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(stored[k], v) {
				rt.Fatalf("%s: stored %x, want %x", k, stored[k], v)
			}
			h, ok := got[k]
			if !ok || !bytes.Equal(h.sealed, v) {
				rt.Fatalf("%s: heard sealed %x (%v), want %x", k, h.sealed, ok, v)
			}
		}
		for k, h := range got {
			v, ok := want[k]
			switch {
			case !ok && (h.sealed != nil || h.msgpack != nil):
				rt.Fatalf("%s: heard a value for an entity removed", k)
			case ok:
				bucket, key, _ := strings.Cut(k, "/")
				body, err := EntityMsgpack(nil, bucket, []byte(key), v)
				if err != nil {
					rt.Fatal(err)
				}
				if !bytes.Equal(h.msgpack, body) {
					rt.Fatalf("%s: heard msgpack %x, want %x", k, h.msgpack, body)
				}
			}
		}
	})
}
