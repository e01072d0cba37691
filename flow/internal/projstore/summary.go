package projstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// BucketSummaries indexes the inline projections by status, so that
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
// Every value is sealed with the CRC32C of its key and body (checksum.go);
// the bodies are:
//
//	"r": the summary value (below); "s", "l": empty; "n": the count.
//
// A summary value is the status (plans, tasks, approvals) or "ok"/"failed"
// (execs), and for a task with a claim 0x00 and the lease's end; lease is
// that end as uint64 BE unix ns, so that live claims are a seek to now.
//
// Tx.flush keeps the index with the entities; a rebuild drops and
// refills it with the projections; verify compares it with a replay.
const BucketSummaries = "proj_summary"

// summarized are the entity buckets the index covers.
var summarized = map[string]bool{BucketPlans: true, BucketTasks: true, BucketApprovals: true, BucketExecs: true}

// summary is an entity's entry in the index.
type summary struct {
	Status string
	Lease  uint64 // a task's claim's end, unix ns; 0 without a claim
	Title  string // a plan's or task's title, an approval's message
}

// indexSummary is the entry of entity v, and false for an entity the index
// does not cover.
func indexSummary(v any) (summary, bool) {
	switch v := v.(type) {
	case *projection.Plan:
		return summary{Status: v.Status, Title: v.Title}, true
	case *projection.Task:
		s := summary{Status: v.Status, Title: v.Title}
		if v.Claim != nil {
			s.Lease = uint64(v.Claim.LeaseUntil)
		}
		return s, true
	case *projection.Approval:
		return summary{Status: v.Status, Title: v.Message}, true
	case *projection.Exec:
		if v.Success {
			return summary{Status: "ok"}, true
		}
		return summary{Status: "failed"}, true
	}
	return summary{}, false
}

// value is the entry's value: the status, and when there is a lease or a
// title, 0x00, the lease (uint64 BE, 0 for none) and the title.
func (s summary) value() []byte {
	if s.Lease == 0 && s.Title == "" {
		return []byte(s.Status)
	}
	return append(binary.BigEndian.AppendUint64(append([]byte(s.Status), 0), s.Lease), s.Title...)
}

func parseSummary(v []byte) summary {
	status, rest, more := bytes.Cut(v, []byte{0})
	s := summary{Status: string(status)}
	if more && len(rest) >= 8 {
		s.Lease = binary.BigEndian.Uint64(rest[:8])
		s.Title = string(rest[8:])
	}
	return s
}

// The index's keys: an entity's entry, the ids of a status, the count of
// a status, and a claim (BucketSummaries' layout above).

// SummaryRefKey is the key of the entry of the entity under key in bucket.
func SummaryRefKey(bucket, key string) []byte { return []byte("r" + bucket + "\x00" + key) }

// SummaryStatusPrefix is the prefix of the ids of project's entities in
// bucket with status.
func SummaryStatusPrefix(bucket, project, status string) []byte {
	return []byte("s" + bucket + "\x00" + project + "\x00" + status + "\x00")
}

// SummaryCountPrefix is the prefix of the counts of project's entities in
// bucket, by status.
func SummaryCountPrefix(bucket, project string) []byte {
	return []byte("n" + bucket + "\x00" + project + "\x00")
}

// SummaryLeaseKey is the key of task id's claim ending at lease.
func SummaryLeaseKey(project string, lease uint64, id string) []byte {
	k := binary.BigEndian.AppendUint64([]byte("l"+project+"\x00"), lease)
	return append(k, id...)
}

// summaryKeys are the keys of the index entries of one entity (its count
// aside): its entry, its id under its status and, for a task with a
// claim, the claim. The entry's body is the summary value, the others'
// are empty.
func summaryKeys(bucket, key string, s summary) [][]byte {
	project, id := splitKey(key)
	keys := [][]byte{SummaryRefKey(bucket, key), append(SummaryStatusPrefix(bucket, project, s.Status), id...)}
	if s.Lease != 0 {
		keys = append(keys, SummaryLeaseKey(project, s.Lease, id))
	}
	return keys
}

// summaryCountKey is the key of the number of project's entities in bucket
// with status.
func summaryCountKey(bucket, project, status string) string {
	return "n" + bucket + "\x00" + project + "\x00" + status
}

// countValue is the sealed value of the count n under k.
func countValue(k []byte, n uint64) []byte {
	return Seal(k, binary.BigEndian.AppendUint64(nil, n))
}

// parseCount checks and parses the count v stored under k.
func parseCount(k, v []byte) (uint64, error) {
	body, err := Unseal(BucketSummaries, k, v)
	if err == nil && len(body) != 8 {
		err = Damaged(BucketSummaries, k, "is not a count")
	}
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(body), nil
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
// removal) stored under bucket and key: it writes the entries that
// change and leaves the change to the counts in c, which a flush writes
// once for all its entities.
func flushSummary(tx store.Tx, bucket, key string, v any, c *flushCounts) error {
	if !summarized[bucket] {
		return nil
	}
	old, err := storedSummary(tx, bucket, key)
	if err != nil {
		return err
	}
	now, live := indexSummary(v)
	var value []byte
	if live {
		value = now.value()
	}
	if old != nil && live && bytes.Equal(old, value) {
		return nil
	}
	project, _ := splitKey(key)
	var was, is [][]byte
	if old != nil {
		s := parseSummary(old)
		was = summaryKeys(bucket, key, s)
		c.addStatus(summaryCountKey(bucket, project, s.Status), -1)
	}
	if live {
		is = summaryKeys(bucket, key, now)
		c.addStatus(summaryCountKey(bucket, project, now.Status), 1)
	}
	for _, k := range was {
		if !containsKey(is, k) {
			if err := tx.Delete(BucketSummaries, k); err != nil {
				return err
			}
		}
	}
	for i, k := range is {
		if i > 0 && containsKey(was, k) { // an empty body, there already
			continue
		}
		var body []byte
		if i == 0 {
			body = value
		}
		if err := tx.Put(BucketSummaries, k, Seal(k, body)); err != nil {
			return err
		}
	}
	return nil
}

func containsKey(keys [][]byte, k []byte) bool {
	return slices.ContainsFunc(keys, func(x []byte) bool { return bytes.Equal(x, k) })
}

// flushCounts gathers what a flush changes of the status index's counts
// and of the plans' task counts, so that each count it touches is read
// and written once.
type flushCounts struct {
	status map[string]int64    // summaryCountKey -> change
	plans  map[string][2]int64 // PlanCountKey -> change of tasks, of done tasks
}

func (c *flushCounts) addStatus(k string, d int64) {
	if c.status == nil {
		c.status = map[string]int64{}
	}
	c.status[k] += d
}

func (c *flushCounts) addPlan(k string, tasks, done int64) {
	if c.plans == nil {
		c.plans = map[string][2]int64{}
	}
	d := c.plans[k]
	c.plans[k] = [2]int64{d[0] + tasks, d[1] + done}
}

// write applies the changes, in key order.
func (c *flushCounts) write(tx store.Tx) error {
	for _, k := range slices.Sorted(maps.Keys(c.status)) {
		if d := c.status[k]; d != 0 {
			if err := addCount(tx, []byte(k), d); err != nil {
				return err
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.plans)) {
		if d := c.plans[k]; d != [2]int64{} {
			if err := addPlanCount(tx, []byte(k), d[0], d[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// storedSummary is the body of the stored summary value of the entity
// under key in bucket; nil when there is none.
func storedSummary(tx store.Tx, bucket, key string) ([]byte, error) {
	k := SummaryRefKey(bucket, key)
	v, err := tx.Get(BucketSummaries, k)
	if err != nil || v == nil {
		return nil, err
	}
	return Unseal(BucketSummaries, k, v)
}

// addCount adds d to the count under k (summaryCountKey); a count that
// reaches zero is deleted.
func addCount(tx store.Tx, k []byte, d int64) error {
	b, err := tx.Get(BucketSummaries, k)
	if err != nil {
		return err
	}
	var n uint64
	if b != nil {
		if n, err = parseCount(k, b); err != nil {
			return err
		}
	}
	if int64(n)+d <= 0 {
		return tx.Delete(BucketSummaries, k)
	}
	return tx.Put(BucketSummaries, k, countValue(k, uint64(int64(n)+d)))
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
		for i, k := range summaryKeys(bucket, key, s) {
			var body []byte
			if i == 0 {
				body = s.value()
			}
			want[string(k)] = Seal(k, body)
		}
		project, _ := splitKey(key)
		counts[summaryCountKey(bucket, project, s.Status)]++
	})
	for k, n := range counts {
		want[k] = countValue([]byte(k), n)
	}
	wantPlanCounts(mem, want)
	return want
}

// The index's queries, on the file (Tx). They read committed entities only:
// reads never run with unflushed writes.

func (s *Tx) SummaryCounts(bucket, project string) (map[string]int, error) {
	prefix := SummaryCountPrefix(bucket, project)
	out := map[string]int{}
	err := s.tx.Scan(BucketSummaries, prefix, func(k, v []byte) error {
		n, err := parseCount(k, v)
		out[string(k[len(prefix):])] = int(n)
		return err
	})
	return out, err
}

func (s *Tx) SummaryIDs(bucket, project, status string) ([]string, error) {
	prefix := SummaryStatusPrefix(bucket, project, status)
	var out []string
	err := s.tx.Scan(BucketSummaries, prefix, func(k, v []byte) error {
		out = append(out, string(k[len(prefix):]))
		_, err := Unseal(BucketSummaries, k, v)
		return err
	})
	if err != nil {
		return nil, err
	}
	return SortIDs(out), s.checkCount(bucket, project, status, len(out))
}

// checkCount checks that the index counts n entities of project in bucket
// with status, as many as it lists: an entry that a damaged key moved out
// of the list shows as a count that does not match.
func (s *Tx) checkCount(bucket, project, status string, n int) error {
	k := append(SummaryCountPrefix(bucket, project), status...)
	v, err := s.tx.Get(BucketSummaries, k)
	var want uint64
	if err == nil && v != nil {
		want, err = parseCount(k, v)
	}
	if err == nil && want != uint64(n) {
		err = Damaged(BucketSummaries, k, fmt.Sprintf("counts %d entities but the index lists %d", want, n))
	}
	return err
}

// Summaries lists the index entries of project's entities in bucket: one
// prefix scan of small values, not a read of every entity.
func (s *Tx) Summaries(bucket, project string) ([]IndexEntry, error) {
	prefix := SummaryRefKey(bucket, project+"/")
	var out []IndexEntry
	err := s.tx.Scan(BucketSummaries, prefix, func(k, v []byte) error {
		body, err := Unseal(BucketSummaries, k, v)
		sum := parseSummary(body)
		out = append(out, IndexEntry{ID: string(k[len(prefix):]), Status: sum.Status, Title: sum.Title})
		return err
	})
	return out, err
}

func (s *Tx) SummaryStatus(bucket, project, id string) (string, error) {
	key := projection.Key(project, id)
	b, err := storedSummary(s.tx, bucket, key)
	if err == nil && b == nil {
		err = s.checkIndexed(bucket, key)
	}
	if err != nil || b == nil {
		return "", err
	}
	return parseSummary(b).Status, nil
}

// checkIndexed checks that an entity the status index has no entry of is
// not stored either: when it is, the index lost the entry or a damaged key
// moved it.
func (s *Tx) checkIndexed(bucket, key string) error {
	v, err := s.tx.Get(bucket, []byte(key))
	if err != nil || v == nil {
		return err
	}
	return DamagedEntry(bucket, key, "is missing but the entity is stored")
}

// DamagedEntry is an ErrDamaged naming the status index's entry of the
// entity under key in bucket.
func DamagedEntry(bucket, key, what string) error {
	return Damaged(BucketSummaries, SummaryRefKey(bucket, key), what)
}

// ClaimedTaskIDs lists the tasks whose claim holds at now. It walks the
// project's claims in lease order, the live ones last.
func (s *Tx) ClaimedTaskIDs(project string, now time.Time) ([]string, error) {
	prefix := []byte("l" + project + "\x00")
	live := now.UnixNano()
	var out []string
	err := s.tx.Scan(BucketSummaries, prefix, func(k, v []byte) error {
		if _, err := Unseal(BucketSummaries, k, v); err != nil {
			return err
		}
		if len(k) >= len(prefix)+8 && int64(binary.BigEndian.Uint64(k[len(prefix):])) > live {
			out = append(out, string(k[len(prefix)+8:]))
		}
		return nil
	})
	return SortIDs(out), err
}

// The same queries on a replay in memory (a view at a point).

func (m Mem) summaryList(bucket, project string) map[string]summary {
	out := map[string]summary{}
	add := func(id string, v any) { out[id], _ = indexSummary(v) }
	switch bucket {
	case BucketPlans:
		for _, v := range m.PlansOf(project) {
			add(v.ID, v)
		}
	case BucketTasks:
		for _, v := range m.TasksOf(project) {
			add(v.ID, v)
		}
	case BucketApprovals:
		for _, v := range m.ApprovalsOf(project) {
			add(v.ID, v)
		}
	case BucketExecs:
		for _, v := range m.ExecsOf(project) {
			add(v.ID, v)
		}
	}
	return out
}

func (m Mem) Summaries(bucket, project string) ([]IndexEntry, error) {
	var out []IndexEntry
	for id, sum := range m.summaryList(bucket, project) {
		out = append(out, IndexEntry{ID: id, Status: sum.Status, Title: sum.Title})
	}
	return out, nil
}

func (m Mem) SummaryCounts(bucket, project string) (map[string]int, error) {
	out := map[string]int{}
	for _, s := range m.summaryList(bucket, project) {
		out[s.Status]++
	}
	return out, nil
}

func (m Mem) SummaryIDs(bucket, project, status string) ([]string, error) {
	var out []string
	for id, s := range m.summaryList(bucket, project) {
		if s.Status == status {
			out = append(out, id)
		}
	}
	return SortIDs(out), nil
}

func (m Mem) SummaryStatus(bucket, project, id string) (string, error) {
	if bucket == BucketTasks {
		if t := m.Memory.Tasks[projection.Key(project, id)]; t != nil {
			return t.Status, nil
		}
		return "", nil
	}
	return m.summaryList(bucket, project)[id].Status, nil
}

func (m Mem) ClaimedTaskIDs(project string, now time.Time) ([]string, error) {
	var out []string
	for _, t := range m.TasksOf(project) {
		if t.Claim.Live(now) {
			out = append(out, t.ID)
		}
	}
	return SortIDs(out), nil
}

// SortIDs sorts ids by number (T-2 before T-10) and returns them.
func SortIDs(ids []string) []string {
	slices.SortFunc(ids, projection.CompareIDs)
	return ids
}

// IndexEntry is an entity as the status index knows it: cheap to list
// for a whole project (shell completion reads it).
type IndexEntry struct {
	ID     string
	Status string
	Title  string // a plan's or task's title, an approval's message
}

// SortEntries sorts entries by id (T-2 before T-10), parsing each id once.
func SortEntries(entries []IndexEntry) {
	type numbered struct {
		n int
		e IndexEntry
	}
	ns := make([]numbered, len(entries))
	for i, e := range entries {
		ns[i].n, _ = strconv.Atoi(e.ID[strings.LastIndexByte(e.ID, '-')+1:])
		ns[i].e = e
	}
	slices.SortFunc(ns, func(a, b numbered) int { return cmp.Compare(a.n, b.n) })
	for i := range ns {
		entries[i] = ns[i].e
	}
}
