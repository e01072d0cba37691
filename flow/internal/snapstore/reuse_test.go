package snapstore

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// putEntity stores entity v under project/id in bucket, sealed, its body
// its encoding unpacked (as projstore reads it back).
func putEntity(t *testing.T, tx store.Tx, bucket, key string, v any) {
	t.Helper()
	b, ok := projection.AppendEntity(nil, v)
	if !ok {
		t.Fatalf("%T does not encode", v)
	}
	if err := tx.Put(bucket, []byte(key), projstore.Seal([]byte(key), b)); err != nil {
		t.Fatal(err)
	}
}

// TestReadRaw_ReusesUnchangedEntities: readRaw given the entities of a
// state it read before reads again only those whose stored values
// changed (a changed task, a new one); it takes the others' bytes as they
// were read (it trusts the stored value's fingerprint), and a deleted one
// is gone. Its state is the one read afresh.
func TestReadRaw_ReusesUnchangedEntities(t *testing.T) {
	t.Parallel()
	l, err := eventlog.Open(filepath.Join(t.TempDir(), "log.db"), eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Store()
	defer s.Close()
	task := func(id, title string) *projection.Task {
		return &projection.Task{Project: "p", ID: id, Title: title}
	}
	err = s.Update(func(tx store.Tx) error {
		putEntity(t, tx, projstore.BucketProjects, "p", &projection.Project{Name: "p", Events: 1})
		for _, id := range []string{"T-1", "T-2", "T-3", "T-10"} {
			putEntity(t, tx, projstore.BucketTasks, "p/"+id, task(id, "first"))
		}
		first, err := readRaw(tx, "p", nil)
		if err != nil {
			return err
		}
		reuse := printsOf(first, true)
		if reuse.scan[1] == nil || reuse.size == 0 {
			t.Fatalf("printsOf kept no entity: %+v", reuse)
		}
		// T-3's bytes as read: marked, so that a reuse shows.
		for i, e := range reuse.scan[1] {
			if e.id == "T-3" {
				reuse.scan[1][i].b = append(bytes.Clone(e.b), 0xc0)
			}
		}
		putEntity(t, tx, projstore.BucketTasks, "p/T-2", task("T-2", "changed"))
		putEntity(t, tx, projstore.BucketTasks, "p/T-4", task("T-4", "new"))
		if err := tx.Delete(projstore.BucketTasks, []byte("p/T-1")); err != nil {
			return err
		}
		got, err := readRaw(tx, "p", reuse)
		if err != nil {
			return err
		}
		fresh, err := readRaw(tx, "p", nil)
		if err != nil {
			return err
		}
		var ids []string
		for i, e := range got.lists[1] {
			ids = append(ids, e.id)
			want := fresh.lists[1][i]
			if e.id == "T-3" {
				if !bytes.HasSuffix(e.b, []byte{0xc0}) {
					t.Errorf("T-3 was read again, not reused")
				}
				continue
			}
			if e.id != want.id || !bytes.Equal(e.b, want.b) || e.fp != want.fp {
				t.Errorf("%s: got %x, want %s %x", e.id, e.b, want.id, want.b)
			}
		}
		if want := "[T-2 T-3 T-4 T-10]"; fmtIDs(ids) != want {
			t.Errorf("ids %s, want %s", fmtIDs(ids), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func fmtIDs(ids []string) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(id)
	}
	b.WriteByte(']')
	return b.String()
}

// TestCache_KeepsEntitiesUpToItsBound: a state whose entities would take
// the Cache over MaxCacheBytes is kept as fingerprints only; replacing a
// project's entry gives its bytes back.
func TestCache_KeepsEntitiesUpToItsBound(t *testing.T) {
	t.Parallel()
	c := &Cache{}
	big := func(n int) *prints {
		p := &prints{size: n}
		p.scan[0] = []rawEntity{{id: "P-1", b: []byte{0x80}}}
		return p
	}
	c.put("a", cached{seq: 1, hash: [32]byte{1}, state: big(MaxCacheBytes / 2)})
	c.put("b", cached{seq: 1, hash: [32]byte{2}, state: big(MaxCacheBytes/2 + 1)})
	if p := c.get("b", 1, [32]byte{2}); p == nil || p.scan[0] != nil || p.size != 0 {
		t.Fatalf("b over the bound kept its entities: %+v", p)
	}
	if p := c.get("a", 1, [32]byte{1}); p == nil || p.scan[0] == nil {
		t.Fatalf("a lost its entities: %+v", p)
	}
	c.put("a", cached{seq: 2, hash: [32]byte{3}, state: big(10)})
	c.put("b", cached{seq: 2, hash: [32]byte{4}, state: big(MaxCacheBytes / 2)})
	if p := c.get("b", 2, [32]byte{4}); p == nil || p.scan[0] == nil {
		t.Fatalf("b within the bound kept no entity: %+v", p)
	}
	if c.size != MaxCacheBytes/2+10 {
		t.Fatalf("size %d, want %d", c.size, MaxCacheBytes/2+10)
	}
}
