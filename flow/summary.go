package flow

import (
	"bytes"
	"encoding/binary"
	"slices"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
)

// bucketSummaries indexes the inline projections by status, so that
// `status` and `ready` read what is open (todo and blocked tasks, pending
// approvals, live claims) and a few counters, never every entity of a
// project. For every plan, task, approval and exec (the entity's bucket
// is B, its key project/id):
//
//	"r" B 0x00 project/id                  -> summary value (below)
//	"s" B 0x00 project 0x00 status 0x00 id -> empty
//	"n" B 0x00 project 0x00 status         -> uint64 BE, entities with that status
//	"l" project 0x00 lease id              -> empty, for a task with a claim
//
// A summary value is the status (plans, tasks, approvals) or "ok"/"failed"
// (execs), and for a task with a claim 0x00 and the lease's end; lease is
// that end as uint64 BE unix ns, so that live claims are a seek to now.
//
// txStore.flush keeps the index with the entities; a rebuild drops and
// refills it with the projections; verify compares it with a replay.
const bucketSummaries = "proj_summary"

// summarized are the entity buckets the index covers.
var summarized = map[string]bool{bucketPlans: true, bucketTasks: true, bucketApprovals: true, bucketExecs: true}

// summary is an entity's entry in the index.
type summary struct {
	Status string
	Lease  uint64 // a task's claim's end, unix ns; 0 without a claim
}

// indexSummary is the entry of entity v, and false for an entity the index
// does not cover.
func indexSummary(v any) (summary, bool) {
	switch v := v.(type) {
	case *projection.Plan:
		return summary{Status: v.Status}, true
	case *projection.Task:
		s := summary{Status: v.Status}
		if v.Claim != nil {
			s.Lease = uint64(v.Claim.LeaseUntil)
		}
		return s, true
	case *projection.Approval:
		return summary{Status: v.Status}, true
	case *projection.Exec:
		if v.Success {
			return summary{Status: "ok"}, true
		}
		return summary{Status: "failed"}, true
	}
	return summary{}, false
}

func (s summary) value() []byte {
	if s.Lease == 0 {
		return []byte(s.Status)
	}
	return binary.BigEndian.AppendUint64(append([]byte(s.Status), 0), s.Lease)
}

func parseSummary(v []byte) summary {
	status, lease, claimed := bytes.Cut(v, []byte{0})
	s := summary{Status: string(status)}
	if claimed && len(lease) == 8 {
		s.Lease = binary.BigEndian.Uint64(lease)
	}
	return s
}

func summaryRefKey(bucket, key string) []byte { return []byte("r" + bucket + "\x00" + key) }

func summaryStatusPrefix(bucket, project, status string) []byte {
	return []byte("s" + bucket + "\x00" + project + "\x00" + status + "\x00")
}

func summaryCountPrefix(bucket, project string) []byte {
	return []byte("n" + bucket + "\x00" + project + "\x00")
}

func summaryLeaseKey(project string, lease uint64, id string) []byte {
	k := binary.BigEndian.AppendUint64([]byte("l"+project+"\x00"), lease)
	return append(k, id...)
}

// summaryEntries are the index entries of one entity (its count aside).
func summaryEntries(bucket, key string, s summary) map[string][]byte {
	project, id := splitKey(key)
	out := map[string][]byte{
		string(summaryRefKey(bucket, key)):                          s.value(),
		string(summaryStatusPrefix(bucket, project, s.Status)) + id: {},
	}
	if s.Lease != 0 {
		out[string(summaryLeaseKey(project, s.Lease, id))] = []byte{}
	}
	return out
}

// splitKey splits an entity key project/id; ids have no slash.
func splitKey(key string) (project, id string) {
	i := len(key) - 1
	for i >= 0 && key[i] != '/' {
		i--
	}
	return key[:max(i, 0)], key[i+1:]
}

// flushSummary brings the index in line with the entity v (or its
// removal) stored under bucket and key.
func flushSummary(tx *eventlog.Tx, bucket, key string, v any) error {
	if !summarized[bucket] {
		return nil
	}
	old, err := tx.Get(bucketSummaries, summaryRefKey(bucket, key))
	if err != nil {
		return err
	}
	now, live := indexSummary(v)
	if old != nil && live && bytes.Equal(old, now.value()) {
		return nil
	}
	project, _ := splitKey(key)
	if old != nil {
		was := parseSummary(old)
		for k := range summaryEntries(bucket, key, was) {
			if err := tx.Delete(bucketSummaries, []byte(k)); err != nil {
				return err
			}
		}
		if err := addCount(tx, bucket, project, was.Status, -1); err != nil {
			return err
		}
	}
	if !live {
		return nil
	}
	for k, v := range summaryEntries(bucket, key, now) {
		if err := tx.Put(bucketSummaries, []byte(k), v); err != nil {
			return err
		}
	}
	return addCount(tx, bucket, project, now.Status, 1)
}

// addCount adds d to the number of project's entities in bucket with
// status; a count that reaches zero is deleted.
func addCount(tx *eventlog.Tx, bucket, project, status string, d int64) error {
	k := append(summaryCountPrefix(bucket, project), status...)
	b, err := tx.Get(bucketSummaries, k)
	if err != nil {
		return err
	}
	var n int64
	if len(b) == 8 {
		n = int64(binary.BigEndian.Uint64(b))
	}
	if n += d; n <= 0 {
		return tx.Delete(bucketSummaries, k)
	}
	return tx.Put(bucketSummaries, k, binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// wantSummaries is the whole index a replay in memory implies, for verify.
func wantSummaries(mem *projection.Memory) map[string][]byte {
	want := map[string][]byte{}
	counts := map[string]uint64{}
	eachMemEntity(mem, func(bucket, key string, v any) {
		if !summarized[bucket] {
			return
		}
		s, _ := indexSummary(v)
		for k, v := range summaryEntries(bucket, key, s) {
			want[k] = v
		}
		project, _ := splitKey(key)
		counts[string(summaryCountPrefix(bucket, project))+s.Status]++
	})
	for k, n := range counts {
		want[k] = binary.BigEndian.AppendUint64(nil, n)
	}
	return want
}

// The index's queries, on the file. They read committed entities only:
// reads never run with unflushed writes.

func (s *txStore) summaryCounts(bucket, project string) (map[string]int, error) {
	prefix := summaryCountPrefix(bucket, project)
	out := map[string]int{}
	err := s.tx.Scan(bucketSummaries, prefix, func(k, v []byte) error {
		if len(v) == 8 {
			out[string(k[len(prefix):])] = int(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	return out, err
}

func (s *txStore) summaryIDs(bucket, project, status string) ([]string, error) {
	prefix := summaryStatusPrefix(bucket, project, status)
	var out []string
	err := s.tx.Scan(bucketSummaries, prefix, func(k, _ []byte) error {
		out = append(out, string(k[len(prefix):]))
		return nil
	})
	return sortIDs(out), err
}

func (s *txStore) summaryStatus(bucket, project, id string) (string, error) {
	b, err := s.tx.Get(bucketSummaries, summaryRefKey(bucket, projection.Key(project, id)))
	if err != nil || b == nil {
		return "", err
	}
	return parseSummary(b).Status, nil
}

// claimedTaskIDs lists the tasks whose claim holds at now. It walks the
// project's claims in lease order, the live ones last.
func (s *txStore) claimedTaskIDs(project string, now time.Time) ([]string, error) {
	prefix := []byte("l" + project + "\x00")
	live := now.UnixNano()
	var out []string
	err := s.tx.Scan(bucketSummaries, prefix, func(k, _ []byte) error {
		if len(k) >= len(prefix)+8 && int64(binary.BigEndian.Uint64(k[len(prefix):])) > live {
			out = append(out, string(k[len(prefix)+8:]))
		}
		return nil
	})
	return sortIDs(out), err
}

// The same queries on a replay in memory (a view at a point).

func (m memSource) summaryList(bucket, project string) map[string]summary {
	out := map[string]summary{}
	add := func(id string, v any) { out[id], _ = indexSummary(v) }
	switch bucket {
	case bucketPlans:
		for _, v := range m.PlansOf(project) {
			add(v.ID, v)
		}
	case bucketTasks:
		for _, v := range m.TasksOf(project) {
			add(v.ID, v)
		}
	case bucketApprovals:
		for _, v := range m.ApprovalsOf(project) {
			add(v.ID, v)
		}
	case bucketExecs:
		for _, v := range m.ExecsOf(project) {
			add(v.ID, v)
		}
	}
	return out
}

func (m memSource) summaryCounts(bucket, project string) (map[string]int, error) {
	out := map[string]int{}
	for _, s := range m.summaryList(bucket, project) {
		out[s.Status]++
	}
	return out, nil
}

func (m memSource) summaryIDs(bucket, project, status string) ([]string, error) {
	var out []string
	for id, s := range m.summaryList(bucket, project) {
		if s.Status == status {
			out = append(out, id)
		}
	}
	return sortIDs(out), nil
}

func (m memSource) summaryStatus(bucket, project, id string) (string, error) {
	if bucket == bucketTasks {
		if t := m.Memory.Tasks[projection.Key(project, id)]; t != nil {
			return t.Status, nil
		}
		return "", nil
	}
	return m.summaryList(bucket, project)[id].Status, nil
}

func (m memSource) claimedTaskIDs(project string, now time.Time) ([]string, error) {
	var out []string
	for _, t := range m.TasksOf(project) {
		if t.Claim.Live(now) {
			out = append(out, t.ID)
		}
	}
	return sortIDs(out), nil
}

func sortIDs(ids []string) []string {
	slices.SortFunc(ids, projection.CompareIDs)
	return ids
}
