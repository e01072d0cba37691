package projstore

import (
	"bytes"
	"maps"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// BucketChildren indexes the subtasks of every task, so that a task's
// children are a prefix scan rather than a walk over every task of its
// project (task show, the done check of a parent). For every task with a
// parent:
//
//	"c" project 0x00 parent 0x00 child -> sealed empty body
//	"p" project 0x00 child             -> sealed body: the parent's id
//
// The "p" entry is what a flush reads to find the "c" entry a change of
// parent (or a removal) leaves stale. Tx.Flush keeps the index with the
// tasks (flushChildren), a rebuild writes it from the replay (writeFresh,
// writeChildren), DropProject drops a project's; verify compares it with
// the stored tasks, which it compares with a replay (CheckChildren).
// Every file whose projections carry this binary's stamp (Format 5 and
// on) holds it whole: an older file is rebuilt on its first writable
// open, and read around (a replay in memory, whose children are a walk)
// by a read-only one, as for any format change.
const BucketChildren = "proj_children"

// ChildKey is the key of the entry of child under parent.
func ChildKey(project, parent, child string) []byte {
	return []byte("c" + project + "\x00" + parent + "\x00" + child)
}

// childPrefix is the prefix of the entries of parent's children.
func childPrefix(project, parent string) []byte {
	return []byte("c" + project + "\x00" + parent + "\x00")
}

// ParentKey is the key of the entry that names child's parent.
func ParentKey(project, child string) []byte { return []byte("p" + project + "\x00" + child) }

// flushChildren brings the index in line with the entity v (or its
// removal) that a flush writes under key in bucket: a task whose parent
// changed moves from the old parent's entries to the new one's. A task
// at version 1 is new (a stream's versions are never reused, even by a
// rollback): it had no entries, and its flush reads none (one query
// fewer per task add on a remote store).
func flushChildren(tx store.Tx, bucket, key string, v any) error {
	if bucket != BucketTasks {
		return nil
	}
	project, id := splitKey(key)
	var parent string
	t, live := v.(*projection.Task)
	if live {
		parent = t.Parent
	}
	pk := ParentKey(project, id)
	var old string
	if !live || t.Version != 1 {
		var err error
		if old, err = storedParent(tx, pk); err != nil {
			return err
		}
	}
	if old == parent {
		return nil
	}
	if old != "" {
		if err := tx.Delete(BucketChildren, ChildKey(project, old, id)); err != nil {
			return err
		}
	}
	if parent == "" {
		return tx.Delete(BucketChildren, pk)
	}
	return putChild(tx, project, parent, id)
}

// putChild writes both entries of child under parent.
func putChild(tx store.Tx, project, parent, child string) error {
	pk, ck := ParentKey(project, child), ChildKey(project, parent, child)
	if err := tx.Put(BucketChildren, pk, Seal(pk, []byte(parent))); err != nil {
		return err
	}
	return tx.Put(BucketChildren, ck, Seal(ck, nil))
}

// storedParent is the parent the index holds for the task under pk, ""
// for none.
func storedParent(tx store.Tx, pk []byte) (string, error) {
	v, err := tx.Get(BucketChildren, pk)
	if err != nil || v == nil {
		return "", err
	}
	body, err := Unseal(BucketChildren, pk, v)
	return string(body), err
}

// ChildIDs returns the ids of the children of task parent of project, in
// id order, from the index, as the Tx sees them: what it put and has not
// flushed yet counts too (a command reading its own changes).
func (s *Tx) ChildIDs(project, parent string) ([]string, error) {
	if s.pending != nil && len(s.pending.keys) > 0 {
		if err := s.pending.Flush(); err != nil { // a Reader reads what is stored
			return nil, err
		}
	}
	ids := map[string]bool{}
	prefix := childPrefix(project, parent)
	err := s.raw.Scan(BucketChildren, prefix, func(k, v []byte) error {
		if _, err := Unseal(BucketChildren, k, v); err != nil {
			return err
		}
		ids[string(k[len(prefix):])] = true
		return nil
	})
	for _, k := range s.keys { // unflushed: the index does not know them yet
		if p, id := splitKey(k.key); k.bucket == BucketTasks && p == project {
			t, live := s.dirty[k].(*projection.Task)
			ids[id] = live && t.Parent == parent
		}
	}
	var out []string
	for id, ok := range ids {
		if ok {
			out = append(out, id)
		}
	}
	return SortIDs(out), err
}

// childEntries is the whole index the tasks of mem imply: key -> sealed
// value.
func childEntries(tasks map[string]*projection.Task) map[string][]byte {
	out := map[string][]byte{}
	for _, t := range tasks {
		if t.Parent == "" {
			continue
		}
		pk, ck := ParentKey(t.Project, t.ID), ChildKey(t.Project, t.Parent, t.ID)
		out[string(pk)] = Seal(pk, []byte(t.Parent))
		out[string(ck)] = Seal(ck, nil)
	}
	return out
}

// writeChildren writes the index of mem's tasks, in key order (a
// rebuild's, into a bucket without them).
func writeChildren(tx store.Tx, mem *projection.Memory) error {
	entries := childEntries(mem.Tasks)
	for _, k := range slices.Sorted(maps.Keys(entries)) {
		if err := tx.Put(BucketChildren, []byte(k), entries[k]); err != nil {
			return err
		}
	}
	return nil
}

// dropChildren deletes project's entries (DropProject).
func dropChildren(tx store.Tx, project string) error {
	for _, prefix := range []string{"c", "p"} {
		if err := deletePrefix(tx, BucketChildren, []byte(prefix+project+"\x00"), nil); err != nil {
			return err
		}
	}
	return nil
}

// CheckChildren compares the index with the stored tasks, entry by
// entry; the first difference is a *store.CorruptionError naming the
// key. Verify runs it once it has compared the tasks with a replay of
// the log, so the index is checked against the replay too. Only a task
// whose stored msgpack holds the key parent is decoded.
func CheckChildren(tx store.Tx) error {
	tasks := map[string]*projection.Task{}
	hasParent := func(m []byte) bool { return bytes.Contains(m, []byte("\xa6parent")) }
	err := store.ScanShared(tx, BucketTasks, nil, func(k, v []byte) error {
		body, err := Unseal(BucketTasks, k, v)
		if err != nil {
			return err
		}
		t, err := unpackDecode[projection.Task](BucketTasks, k, body, hasParent)
		if t != nil && strings.Contains(string(k), "/") {
			tasks[string(k)] = t
		}
		return err
	})
	if err != nil {
		return err
	}
	return compareBucket(tx, BucketChildren, childEntries(tasks))
}

// compareChildren is CheckChildren against mem, a replay of the log.
func compareChildren(tx store.Tx, mem *projection.Memory) error {
	return compareBucket(tx, BucketChildren, childEntries(mem.Tasks))
}
