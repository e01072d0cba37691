package snapstore

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// SummaryBucket holds, beside each snapshot Put stores, the project's
// status summary at the snapshot's seq (Summary), under the snapshot's
// key: what `flowctl status --at` needs of the state there, so that a
// status at a point reads it and folds only the events after it, instead
// of decoding the whole state. It is derived data, as snapshots are: a
// summary names the fold version and the log's chain hash at its seq, and
// one that does not fit this log and binary, fails its checksum or does
// not decode is skipped (the read then takes the whole state).
const SummaryBucket = "snapshot_sums"

// summaryFormat is the first byte of a stored summary: 2 lists the
// tasks doing (SetDoing) after the four lists of format 1, which is still
// read (its summaries list no tasks doing: Summary.Lists says so).
const summaryFormat = 2

// summarySetsOf is how many id lists a summary of each format holds.
var summarySetsOf = map[byte]int{1: 4, 2: 5}

// The status index's buckets a summary counts, in its order.
var summaryBuckets = [4]string{projstore.BucketPlans, projstore.BucketTasks, projstore.BucketApprovals, projstore.BucketExecs}

// SummarySet names one list of ids a summary holds.
type SummarySet int

// The lists of ids a summary holds: what status decodes.
const (
	SetTodo    SummarySet = iota // tasks of status todo
	SetBlocked                   // tasks of status blocked
	SetPending                   // approvals of status pending
	SetClaimed                   // tasks that hold a claim, live or not
	SetDoing                     // tasks of status doing (format 2 on)
	summarySets
)

// Summary is a project's status summary at a seq: the status index's
// counts and the ids status reads, as of that seq.
type Summary struct {
	Seq     uint64
	Project []byte                    // the project entity (projection.AppendEntity)
	Counts  map[string]map[string]int // by status index bucket, then status
	Sets    [summarySets][]string     // by SummarySet, sorted by number
	lists   int                       // how many of Sets the summary holds (the first ones)
}

// Lists reports whether s holds the list set (a summary of an older
// format holds fewer lists; one not held is not empty but unknown).
func (s *Summary) Lists(set SummarySet) bool { return int(set) < s.lists }

// SummarySource is what a summary is read from: the inline projections'
// status index, current (projstore.Tx).
type SummarySource interface {
	SummaryCounts(bucket, project string) (map[string]int, error)
	SummaryIDs(bucket, project, status string) ([]string, error)
	ClaimedTaskIDs(project string, now time.Time) ([]string, error)
}

// putSummary stores the status summary of project at the head of tx,
// read from src's status index, when src is one and holds no unflushed
// write (else it stores none: a read at a point then takes the whole
// state). project is the project entity's encoding.
func putSummary(tx store.Tx, src Source, name string, project []byte) error {
	idx, ok := src.(SummarySource)
	if c, committed := src.(interface{ Committed() bool }); !ok || !committed || !c.Committed() {
		return nil
	}
	seq, hash := tx.Head()
	return putSummaryAt(tx, idx, name, project, seq, hash)
}

// putSummaryAt stores the status summary of project name at seq (whose
// chain hash is hash), read from idx as of that seq.
func putSummaryAt(tx store.Tx, idx SummarySource, name string, project []byte, seq uint64, hash store.Hash) error {
	s := &Summary{Seq: seq, Project: project, Counts: map[string]map[string]int{}, lists: int(summarySets)}
	for _, b := range summaryBuckets {
		c, err := idx.SummaryCounts(b, name)
		if err != nil {
			return err
		}
		s.Counts[b] = c
	}
	var err error
	for set, q := range map[SummarySet][2]string{
		SetTodo:    {projstore.BucketTasks, projection.StatusTodo},
		SetBlocked: {projstore.BucketTasks, projection.StatusBlocked},
		SetPending: {projstore.BucketApprovals, projection.ApprovalPending},
		SetDoing:   {projstore.BucketTasks, projection.StatusDoing},
	} {
		if s.Sets[set], err = idx.SummaryIDs(q[0], name, q[1]); err != nil {
			return err
		}
	}
	// every claim the index holds: its lease is after the epoch
	if s.Sets[SetClaimed], err = idx.ClaimedTaskIDs(name, time.Unix(0, 0)); err != nil {
		return err
	}
	return tx.Put(SummaryBucket, Key(name, seq), encodeSummary(s, hash))
}

// encodeSummary writes s for the log whose chain hash at s.Seq is hash:
// the format, the fold version, the chain hash, the project entity, the
// counts (bucket by bucket: a count of statuses, each a status and its
// count), the sets (each a count and its ids), then the CRC32C of all
// that. Strings and byte strings are a uvarint length and the bytes. A
// summary of format 1's lists (a test's old file) is written as format 1.
func encodeSummary(s *Summary, hash store.Hash) []byte {
	format := byte(summaryFormat)
	for f, n := range summarySetsOf {
		if n == s.lists {
			format = f
		}
	}
	b := []byte{format}
	b = binary.BigEndian.AppendUint32(b, writeVersion())
	b = append(b, hash[:]...)
	b = appendBytes(b, s.Project)
	for _, bucket := range summaryBuckets {
		c := s.Counts[bucket]
		statuses := make([]string, 0, len(c))
		for st := range c {
			statuses = append(statuses, st)
		}
		slices.Sort(statuses)
		b = binary.AppendUvarint(b, uint64(len(statuses)))
		for _, st := range statuses {
			b = binary.AppendUvarint(appendBytes(b, []byte(st)), uint64(c[st]))
		}
	}
	for _, ids := range s.Sets[:s.lists] {
		b = binary.AppendUvarint(b, uint64(len(ids)))
		for _, id := range ids {
			b = appendBytes(b, []byte(id))
		}
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendBytes(b, p []byte) []byte { return append(binary.AppendUvarint(b, uint64(len(p))), p...) }

// errSummary is a stored summary that does not decode.
var errSummary = errors.New("a status summary that does not decode")

// decodeSummary reads v, a summary stored for seq, and returns it with
// the chain hash it names; errSummary when it does not decode (its
// checksum, format, fold version or framing).
func decodeSummary(v []byte, seq uint64) (*Summary, store.Hash, error) {
	var hash store.Hash
	n := len(v) - 4
	if n < 1+4+len(hash) || binary.BigEndian.Uint32(v[n:]) != crc32.Checksum(v[:n], castagnoli) ||
		summarySetsOf[v[0]] == 0 || binary.BigEndian.Uint32(v[1:]) != projection.Version {
		return nil, hash, errSummary
	}
	copy(hash[:], v[5:])
	r := reader{b: v[5+len(hash) : n], ok: true}
	s := &Summary{Seq: seq, Project: r.bytes(), Counts: map[string]map[string]int{}, lists: summarySetsOf[v[0]]}
	for _, bucket := range summaryBuckets {
		c := map[string]int{}
		for k := r.count(); k > 0 && r.ok; k-- {
			st := string(r.bytes())
			c[st] = int(r.uvarint())
		}
		s.Counts[bucket] = c
	}
	for i := range s.Sets[:s.lists] {
		for k := r.count(); k > 0 && r.ok; k-- {
			s.Sets[i] = append(s.Sets[i], string(r.bytes()))
		}
	}
	if !r.ok || len(r.b) != 0 {
		return nil, hash, errSummary
	}
	return s, hash, nil
}

// reader reads a summary's fields; ok turns false at the first that does
// not fit.
type reader struct {
	b  []byte
	ok bool
}

func (r *reader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.ok, r.b = false, nil
		return 0
	}
	r.b = r.b[k:]
	return v
}

// count reads a count of items, each at least a byte.
func (r *reader) count() uint64 {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.ok, r.b = false, nil
		return 0
	}
	return n
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if !r.ok || n > uint64(len(r.b)) {
		r.ok, r.b = false, nil
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

// NearestSummary returns project's status summary at the seq of its
// newest snapshot at or below seq, when one is stored there and fits this
// log and binary (nil otherwise: a snapshot of an older binary, an
// imported one, or a summary skipped as damaged, reported to warn). The
// summary's byte strings are copies, valid after the transaction.
func NearestSummary(tx store.Tx, project string, seq uint64, warn func(format string, args ...any)) (*Summary, error) {
	at, ok := newestAt(tx, project, seq)
	if !ok {
		return nil, nil
	}
	v, err := tx.Get(SummaryBucket, Key(project, at))
	if err != nil || v == nil {
		return nil, err
	}
	s, hash, err := decodeSummary(slices.Clone(v), at)
	if err == nil {
		var want store.Hash
		if want, ok, err = ChainHashAt(tx, at); err != nil {
			return nil, err
		}
		if !ok || want != hash {
			err = errSummary
		}
	}
	if err != nil {
		warn("skipping the status summary of %s@%d: it does not fit this log", project, at)
		return nil, nil
	}
	return s, nil
}
