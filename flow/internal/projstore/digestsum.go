package projstore

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// This file keeps what a digest (prime, the project report) shows of a
// whole project without folding its history: two small indexes, updated
// in the write transaction.
//
// Plan counts, in BucketSummaries with the status index (so that a
// rebuild refills them and verify compares them with a replay), for every
// task that is in a plan:
//
//	"T" project/id              -> plan 0x00 status
//	"P" project 0x00 plan       -> tasks, done (uint64 BE each)
//
// The digest log index, BucketDigestLog, derived from the log alone (as
// the rollback index is) and complete up to its mark:
//
//	project 0x00 0x00           -> mark: seq of the last event of the project
//	                               indexed, and its events, streams and
//	                               memory notes up to it (uint64 BE each)
//	project 0x00 0x01 ^seq      -> empty: a note of kind memory at seq
//	                               (the seq inverted, newest first)
//
// A DigestWriter brings it up to the head in every command (or batch of
// them) that wrote to the project, counting the events it appends; a
// reader reads the project's events after the mark itself (an import, an
// older flowctl), and a project with no mark from its start. Its values
// are sealed as the projections' are.

// BucketDigestLog is the digest log index.
const BucketDigestLog = "digest_log"

// Plan counts.

func planTaskKey(key string) []byte { return []byte("T" + key) }

// PlanCountKey is the key of the counts of plan's tasks.
func PlanCountKey(project, plan string) []byte { return []byte("P" + project + "\x00" + plan) }

// planTask is a planned task's entry: its plan and status; "" for a task
// in no plan (or gone).
func planTask(v any) []byte {
	t, ok := v.(*projection.Task)
	if !ok || t.Plan == "" {
		return nil
	}
	return []byte(t.Plan + "\x00" + t.Status)
}

// flushPlanCounts brings the plan counts in line with the task v (or its
// removal) stored under key: it writes the task's entry and leaves the
// change to the counts in c.
func flushPlanCounts(tx store.Tx, bucket, key string, v any, c *flushCounts) error {
	if bucket != BucketTasks {
		return nil
	}
	k := planTaskKey(key)
	old, err := tx.Get(BucketSummaries, k)
	if err != nil {
		return err
	}
	if old != nil {
		if old, err = Unseal(BucketSummaries, k, old); err != nil {
			return err
		}
	}
	now := planTask(v)
	if bytes.Equal(old, now) {
		return nil
	}
	project, _ := splitKey(key)
	if old != nil {
		addPlanEntry(c, project, old, -1)
	}
	if now == nil {
		return tx.Delete(BucketSummaries, k)
	}
	addPlanEntry(c, project, now, 1)
	return tx.Put(BucketSummaries, k, Seal(k, now))
}

// addPlanEntry adds d to the change of the counts of the plan of entry
// (plan 0x00 status).
func addPlanEntry(c *flushCounts, project string, entry []byte, d int64) {
	plan, status, _ := bytes.Cut(entry, []byte{0})
	var done int64
	if string(status) == projection.StatusDone {
		done = d
	}
	c.addPlan(string(PlanCountKey(project, string(plan))), d, done)
}

// addPlanCount adds tasks and done to the counts under k; counts whose
// tasks reach zero are deleted.
func addPlanCount(tx store.Tx, k []byte, dTasks, dDone int64) error {
	tasks, done, err := readPlanCount(tx, k)
	if err != nil {
		return err
	}
	tasks = uint64(int64(tasks) + dTasks)
	done = uint64(int64(done) + dDone)
	if tasks == 0 {
		return tx.Delete(BucketSummaries, k)
	}
	return tx.Put(BucketSummaries, k, planCountValue(k, tasks, done))
}

func planCountValue(k []byte, tasks, done uint64) []byte {
	return Seal(k, binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, tasks), done))
}

func readPlanCount(tx store.Tx, k []byte) (tasks, done uint64, err error) {
	v, err := tx.Get(BucketSummaries, k)
	if err != nil || v == nil {
		return 0, 0, err
	}
	body, err := Unseal(BucketSummaries, k, v)
	if err == nil && len(body) != 16 {
		err = Damaged(BucketSummaries, k, "is not a plan's counts")
	}
	if err != nil {
		return 0, 0, err
	}
	return binary.BigEndian.Uint64(body), binary.BigEndian.Uint64(body[8:]), nil
}

// wantPlanCounts adds the plan counts a replay in memory implies to want.
func wantPlanCounts(mem *projection.Memory, want map[string][]byte) {
	type count struct{ tasks, done uint64 }
	counts := map[string]*count{}
	for key, t := range mem.Tasks {
		entry := planTask(t)
		if entry == nil {
			continue
		}
		k := planTaskKey(key)
		want[string(k)] = Seal(k, entry)
		pk := string(PlanCountKey(t.Project, t.Plan))
		c := counts[pk]
		if c == nil {
			c = &count{}
			counts[pk] = c
		}
		c.tasks++
		if t.Status == projection.StatusDone {
			c.done++
		}
	}
	for k, c := range counts {
		want[k] = planCountValue([]byte(k), c.tasks, c.done)
	}
}

// PlanCount returns how many tasks plan has and how many of them are
// done, from the index.
func (s *Tx) PlanCount(project, plan string) (tasks, done int, err error) {
	t, d, err := readPlanCount(s.tx, PlanCountKey(project, plan))
	return int(t), int(d), err
}

// The digest log index.

// DigestMark is how far the digest log index of a project goes, and what
// it counted up to there.
type DigestMark struct {
	Seq     uint64 // the last event of the project indexed; 0: none
	Events  uint64 // the project's events up to Seq
	Streams uint64 // the project's streams with an event up to Seq
	Memory  uint64 // the project's notes of kind memory up to Seq
}

func digestMarkKey(project string) []byte { return []byte(project + "\x00\x00") }

// DigestMemoryPrefix is the prefix of the memory notes of project.
func DigestMemoryPrefix(project string) []byte { return []byte(project + "\x00\x01") }

func digestMemoryKey(project string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(DigestMemoryPrefix(project), ^seq)
}

// ReadDigestMark returns project's mark; the zero mark when there is none.
func ReadDigestMark(tx store.Tx, project string) (DigestMark, error) {
	k := digestMarkKey(project)
	v, err := tx.Get(BucketDigestLog, k)
	if err != nil || v == nil {
		return DigestMark{}, err
	}
	body, err := Unseal(BucketDigestLog, k, v)
	if err == nil && len(body) != 32 {
		err = Damaged(BucketDigestLog, k, "is not a mark")
	}
	if err != nil {
		return DigestMark{}, err
	}
	u := func(i int) uint64 { return binary.BigEndian.Uint64(body[8*i:]) }
	return DigestMark{Seq: u(0), Events: u(1), Streams: u(2), Memory: u(3)}, nil
}

func (m DigestMark) value(k []byte) []byte {
	var b []byte
	for _, n := range []uint64{m.Seq, m.Events, m.Streams, m.Memory} {
		b = binary.BigEndian.AppendUint64(b, n)
	}
	return Seal(k, b)
}

// DigestCount adds the event r of project to m; memory reports whether r
// is a note of kind memory. It is what the index and a reader of the
// events after its mark count alike.
func (m *DigestMark) DigestCount(r *store.Record) (memory bool) {
	m.Seq = r.Seq
	m.Events++
	if r.Version == 1 {
		m.Streams++
	}
	if IsMemoryNote(r) {
		m.Memory++
		return true
	}
	return false
}

// IsMemoryNote reports whether r is a note of kind memory of the schema
// this binary knows (a payload that does not decode is not).
func IsMemoryNote(r *store.Record) bool {
	if r.Type != projection.TypeNoteAdded || r.Schema != projection.SchemaVersion {
		return false
	}
	var p struct {
		Kind string `msgpack:"kind"`
	}
	return msgpack.Unmarshal(r.Data, &p) == nil && p.Kind == "memory"
}

// DigestWriter keeps the digest log index of the projects a write
// transaction appends to. It counts each event as it is appended (Add),
// from the record in hand, rather than reading the project's events back,
// and writes the marks and memory notes it counted once, at the end
// (Flush): until then the index stays at its mark, which readers read
// past. The zero DigestWriter is ready; one serves one transaction.
type DigestWriter struct {
	runs  map[string]*digestRun
	order []string // projects in the order first added
}

// digestRun is what a DigestWriter counted of one project.
type digestRun struct {
	mark   DigestMark
	memory []uint64 // memory notes counted, to write at Flush
}

// Add counts r, the newest event of its project in tx. The first event of
// a project first brings the index up to the event before it, reading
// the project's events after its mark (an import, an older flowctl, a
// rebuild left them unindexed); a mark at or past r (not this log's) drops
// the index, which is then written again from the project's first event.
func (w *DigestWriter) Add(tx store.Tx, r *store.Record) error {
	run := w.runs[r.Project]
	if run == nil {
		var err error
		if run, err = catchUpDigest(tx, r.Project, r.Seq); err != nil {
			return err
		}
		if w.runs == nil {
			w.runs = map[string]*digestRun{}
		}
		w.runs[r.Project] = run
		w.order = append(w.order, r.Project)
	}
	if run.mark.DigestCount(r) {
		run.memory = append(run.memory, r.Seq)
	}
	return nil
}

// catchUpDigest reads project's mark and counts its events after the mark
// and before seq.
func catchUpDigest(tx store.Tx, project string, seq uint64) (*digestRun, error) {
	m, err := ReadDigestMark(tx, project)
	if err != nil {
		return nil, err
	}
	run := &digestRun{mark: m}
	if m.Seq >= seq {
		if err := DropDigestLog(tx, project); err != nil {
			return nil, err
		}
		run.mark = DigestMark{}
	}
	err = tx.ReadProject(project, run.mark.Seq+1, func(r *store.Record) error {
		if r.Seq >= seq {
			return store.ErrStop
		}
		if run.mark.DigestCount(r) {
			run.memory = append(run.memory, r.Seq)
		}
		return nil
	})
	if err == store.ErrStop {
		err = nil
	}
	return run, err
}

// Flush writes what Add counted: each project's memory notes and mark.
func (w *DigestWriter) Flush(tx store.Tx) error {
	for _, project := range w.order {
		run := w.runs[project]
		for _, seq := range run.memory {
			k := digestMemoryKey(project, seq)
			if err := tx.Put(BucketDigestLog, k, Seal(k, nil)); err != nil {
				return err
			}
		}
		k := digestMarkKey(project)
		if err := tx.Put(BucketDigestLog, k, run.mark.value(k)); err != nil {
			return err
		}
	}
	w.runs, w.order = nil, nil
	return nil
}

// DropDigestLog deletes project's digest log index.
func DropDigestLog(tx store.Tx, project string) error {
	var keys [][]byte
	err := tx.Scan(BucketDigestLog, []byte(project+"\x00"), func(k, v []byte) error {
		keys = append(keys, k)
		return nil
	})
	for _, k := range keys {
		if err == nil {
			err = tx.Delete(BucketDigestLog, k)
		}
	}
	return err
}

// DigestMemory calls fn with the seqs of project's memory notes the index
// holds, newest first, until fn returns store.ErrStop.
func DigestMemory(tx store.Tx, project string, fn func(seq uint64) error) error {
	prefix := DigestMemoryPrefix(project)
	err := tx.Scan(BucketDigestLog, prefix, func(k, v []byte) error {
		if _, err := Unseal(BucketDigestLog, k, v); err != nil {
			return err
		}
		if len(k) != len(prefix)+8 {
			return Damaged(BucketDigestLog, k, "is not a memory note's key")
		}
		return fn(^binary.BigEndian.Uint64(k[len(prefix):]))
	})
	if err == store.ErrStop {
		return nil
	}
	return err
}

// CheckDigestLog checks every project's digest log index against the
// log: its mark's counts and its memory notes, read again from the
// project's events up to the mark.
func CheckDigestLog(tx store.Tx) error {
	marks, err := digestMarks(tx)
	if err != nil {
		return err
	}
	for project, m := range marks {
		var got DigestMark
		var memory []uint64
		err := tx.ReadProject(project, 1, func(r *store.Record) error {
			if r.Seq > m.Seq {
				return store.ErrStop
			}
			if got.DigestCount(r) {
				memory = append(memory, r.Seq)
			}
			return nil
		})
		if err != nil && err != store.ErrStop {
			return err
		}
		if err := compareDigest(tx, project, m, got, memory); err != nil {
			return err
		}
	}
	return nil
}

// compareDigest compares project's digest log index, its mark stored and
// the memory notes it lists, with what the log's records count (got) and
// the seqs of their memory notes (memory, in order).
func compareDigest(tx store.Tx, project string, stored, got DigestMark, memory []uint64) error {
	if got != stored {
		return &store.CorruptionError{Reason: fmt.Sprintf("the digest index of project %s counts %+v, the log %+v (run 'flowctl rebuild')", project, stored, got)}
	}
	i := len(memory)
	err := DigestMemory(tx, project, func(seq uint64) error {
		if i--; i < 0 || memory[i] != seq {
			return &store.CorruptionError{Reason: fmt.Sprintf("the digest index of project %s lists a memory note at seq %d the log does not have there (run 'flowctl rebuild')", project, seq)}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if i != 0 {
		return &store.CorruptionError{Reason: fmt.Sprintf("the digest index of project %s lacks %d memory notes (run 'flowctl rebuild')", project, i)}
	}
	return nil
}

// IndexDigestLog brings project's digest log index up to the head of tx,
// reading the project's events after its mark: for the writers that do
// not count events as they append them (an import, a rebuild).
func IndexDigestLog(tx store.Tx, project string) error {
	head, _ := tx.Head()
	run, err := catchUpDigest(tx, project, head+1)
	if err != nil {
		return err
	}
	w := DigestWriter{runs: map[string]*digestRun{project: run}, order: []string{project}}
	return w.Flush(tx)
}
