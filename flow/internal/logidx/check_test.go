package logidx

import (
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"pgregory.net/rapid"
)

// TestChecker_SumsWhatRebuildWrites: for any log, the entries a Checker
// fed the log sums (its lists' chunks, pending entries and the types'
// names) are those a Rebuild writes (Writer.each), whatever runs of repeated types,
// projects, actors and sessions the log has (the Checker's shortcut for
// a list it met last).
func TestChecker_SumsWhatRebuildWrites(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 2*PendingSpan+3*ChunkSize+5).Draw(rt, "events") // across two boundaries
		name := func(label string, values ...string) string {
			return rapid.SampledFrom(values).Draw(rt, label)
		}
		c := NewChecker()
		var w Writer
		for seq := uint64(1); seq <= uint64(n); seq++ {
			ev := store.Event{
				Type:    name("type", "task.created", "task.updated", "note.added"),
				Project: name("project", "", "a", "ab", "b"),
				Actor:   name("actor", "", "alice", "bob"),
				Session: name("session", "", "s1", "s2"),
			}
			// A string equal to the last one but another copy of it.
			ev.Type = string([]byte(ev.Type))
			c.Add(seq, &ev)
			w.Add(seq, &ev)
		}
		c.finish(uint64(n))
		tags := map[string]byte{Bucket: inChunks, PendingBucket: inPending}
		var want entrySum
		_ = w.each(uint64(n), func(bucket string, k, v []byte) error {
			want.add(c.hash(tags[bucket], k, v))
			return nil
		})
		if c.want != want {
			rt.Fatalf("checker's sum %+v, rebuild's entries %+v", c.want, want)
		}
	})
}
