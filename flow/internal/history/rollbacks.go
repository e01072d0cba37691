package history

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// BucketRollbacks indexes the rollbacks of whole projects: the
// rollback.applied events on each project's own stream, so that a read of
// one entity at a point (EntityAt) finds those that may have restored or
// removed it without reading the project's stream, which also holds its
// checkpoints and the notes, approvals and exec records of no task.
//
//	len(project) (2 bytes BE), project, seq (8 bytes BE, from 1) -> version of the event in project/<name> (8 bytes BE)
//	len(project) (2 bytes BE), project, 8 zero bytes (the mark)   -> version and seq of the last event of project/<name>
//	                                                                 indexed, and the number of entries (8 bytes BE each)
//
// It is derived from the log alone (not from the fold), written in the
// same transaction as the events by every command (IndexRollbacks, from
// autoSnapshot), and complete up to its mark: a reader reads the project
// stream after the mark itself (events appended by Import, or by an
// older flowctl), and ignores, with a warning, an index whose entries do
// not match the log or their count. CheckIndex checks it against
// the log; dropping the bucket loses nothing (the next command of each
// project writes it again).
const BucketRollbacks = "rollback_idx"

// Mark says how far a project's stream is indexed.
type Mark struct {
	Version, Seq uint64 // the last event of project/<name> indexed
	Entries      uint64 // the rollbacks among events 1..version
}

// Key is the key of project's rollback at seq in BucketRollbacks, laid out
// as a snapshot's key (snapstore.Prefix and the seq, 8 bytes BE); seq 0
// is the key of its mark.
func Key(project string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(snapstore.Prefix(project), seq)
}

// Bytes is m as it is stored under Key(project, 0).
func (m Mark) Bytes() []byte {
	b := binary.BigEndian.AppendUint64(nil, m.Version)
	b = binary.BigEndian.AppendUint64(b, m.Seq)
	return binary.BigEndian.AppendUint64(b, m.Entries)
}

// ReadMark returns project's mark; ok is false when there is none
// or it does not read.
func ReadMark(tx store.Tx, project string) (m Mark, ok bool, err error) {
	b, err := tx.Get(BucketRollbacks, Key(project, 0))
	if err != nil || len(b) != 24 {
		return Mark{}, false, err
	}
	m = Mark{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[16:])}
	return m, true, nil
}

// isProjectRollback reports whether r is a rollback of the whole project,
// on its own stream.
func isProjectRollback(r *store.Record, project string) bool {
	return r.Type == projection.TypeRollbackApplied && r.Project == project && r.Stream == projection.ProjectStream(project)
}

// IndexRollbacks brings project's rollback index up to its stream's head
// in tx. A mark that is not this log's (past the head, or not at the seq
// it names) drops the index, which is then written again.
func IndexRollbacks(tx store.Tx, project string) error {
	stream := projection.ProjectStream(project)
	head, headSeq := tx.StreamVersion(stream)
	m, ok, err := validMark(tx, project)
	if err != nil || ok && m.Version == head {
		return err
	}
	if !ok {
		if err := DropIndex(tx, project); err != nil {
			return err
		}
		m = Mark{}
	}
	if head == 0 {
		return nil
	}
	err = tx.ReadStream(stream, m.Version+1, func(r *store.Record) error {
		if !isProjectRollback(r, project) {
			return nil
		}
		m.Entries++
		return tx.Put(BucketRollbacks, Key(project, r.Seq), binary.BigEndian.AppendUint64(nil, r.Version))
	})
	if err != nil {
		return err
	}
	m.Version, m.Seq = head, headSeq
	return tx.Put(BucketRollbacks, Key(project, 0), m.Bytes())
}

// validMark returns project's mark when it has one that fits the log:
// its version is in the project's stream, at its seq.
func validMark(tx store.Tx, project string) (Mark, bool, error) {
	m, ok, err := ReadMark(tx, project)
	if err != nil || !ok || m.Version == 0 {
		return Mark{}, false, err
	}
	head, headSeq := tx.StreamVersion(projection.ProjectStream(project))
	switch {
	case m.Version == head:
		return m, m.Seq == headSeq, nil
	case m.Version > head:
		return Mark{}, false, nil
	}
	seq, err := streamSeq(tx, projection.ProjectStream(project), m.Version)
	return m, err == nil && seq == m.Seq, err
}

// DropIndex deletes project's rollback index, mark and entries.
func DropIndex(tx store.Tx, project string) error {
	var keys [][]byte
	err := tx.Scan(BucketRollbacks, snapstore.Prefix(project), func(k, v []byte) error {
		keys = append(keys, k)
		return nil
	})
	for _, k := range keys {
		if err == nil {
			err = tx.Delete(BucketRollbacks, k)
		}
	}
	return err
}

// ProjectRollbacks returns the rollbacks of the whole project with
// after < seq <= upTo, in seq order: from the index up to its mark, and
// from the project's stream after it. An index that does not match the
// log is reported through warn and not used.
func ProjectRollbacks(tx store.Tx, project string, after, upTo uint64, warn func(string, ...any)) ([]*store.Record, error) {
	stream := projection.ProjectStream(project)
	head, headSeq := tx.StreamVersion(stream)
	if headSeq <= after || upTo <= after {
		return nil, nil // nothing on the project's stream in the window
	}
	from := uint64(1) // the first version of the stream the index does not cover
	out, m, ok, err := indexedRollbacks(tx, project, after, upTo)
	switch {
	case err != nil:
		return nil, err
	case ok && m.Seq >= upTo:
		return out, nil
	case ok:
		from = m.Version + 1
	case m != (Mark{}):
		warn("the rollback index of project %s does not match the log; reading the project's stream instead (run 'flowctl verify')", project)
	}
	from, err = firstVersionAfter(tx, stream, from, head, after)
	if err != nil {
		return nil, err
	}
	err = tx.ReadStream(stream, from, func(r *store.Record) error {
		if r.Seq > upTo {
			return store.ErrStop
		}
		if r.Seq > after && isProjectRollback(r, project) {
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// indexedRollbacks returns the indexed rollbacks of project with after <
// seq <= upTo (and <= the mark), each checked against the log, and the
// mark. ok is false when there is no index (m is zero) or it does not
// match the log: its mark, an entry, or the mark's count of entries.
func indexedRollbacks(tx store.Tx, project string, after, upTo uint64) (out []*store.Record, m Mark, ok bool, err error) {
	m, found, err := ReadMark(tx, project)
	if err != nil || !found {
		return nil, Mark{}, false, err
	}
	if _, ok, err = validMark(tx, project); err != nil || !ok {
		return nil, m, false, err
	}
	pre := snapstore.Prefix(project)
	var seqs, versions []uint64
	n := uint64(0)
	ok = true
	err = tx.Scan(BucketRollbacks, pre, func(k, v []byte) error {
		seq := uint64(0)
		if len(k) == len(pre)+8 {
			seq = binary.BigEndian.Uint64(k[len(pre):])
		}
		switch {
		case len(k) != len(pre)+8 || seq > 0 && len(v) != 8:
			ok = false
			return store.ErrStop
		case seq == 0: // the mark
			return nil
		}
		n++
		if seq > after && seq <= min(upTo, m.Seq) {
			seqs, versions = append(seqs, seq), append(versions, binary.BigEndian.Uint64(v))
		}
		return nil
	})
	if err != nil || !ok || n != m.Entries {
		return nil, m, false, err
	}
	for i, seq := range seqs {
		r, err := tx.Record(seq)
		if err != nil {
			return nil, m, false, err
		}
		if r == nil || !isProjectRollback(r, project) || r.Version != versions[i] {
			return nil, m, false, nil
		}
		out = append(out, r)
	}
	return out, m, true, nil
}

// firstVersionAfter returns the first version in [lo, hi] of stream whose
// event's seq is past after (hi+1 when there is none), by binary search:
// a stream's versions are in seq order.
func firstVersionAfter(tx store.Tx, stream string, lo, hi, after uint64) (uint64, error) {
	hi++
	for lo < hi {
		mid := lo + (hi-lo)/2
		seq, err := streamSeq(tx, stream, mid)
		if err != nil {
			return 0, err
		}
		if seq > after {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

// streamSeq returns the seq of version v of stream.
func streamSeq(tx store.Tx, stream string, v uint64) (uint64, error) {
	var seq uint64
	err := tx.ReadStream(stream, v, func(r *store.Record) error {
		seq = r.Seq
		return store.ErrStop
	})
	if err == nil && seq == 0 {
		err = &store.CorruptionError{Reason: fmt.Sprintf("stream %s has no version %d below its head", stream, v)}
	}
	return seq, err
}

// CheckIndex checks the rollback index against the log: for each
// project it indexes, exactly the rollbacks of the whole project up to
// its mark, and a mark that is the project stream's event at its
// version. A mismatch is a *store.CorruptionError (reads do not trust
// such an index; dropping the bucket repairs it).
func CheckIndex(tx store.Tx) error {
	marks := map[string]bool{}
	var projects []string
	err := tx.Scan(BucketRollbacks, nil, func(k, v []byte) error {
		project, _, ok := snapstore.ParseKey(k)
		if !ok {
			return rollbackIndexError("malformed key %x", k)
		}
		if !marks[project] {
			marks[project] = true
			projects = append(projects, project)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, project := range projects {
		if err := checkProjectRollbacks(tx, project); err != nil {
			return err
		}
	}
	return nil
}

// checkProjectRollbacks checks one project's part of the rollback index.
func checkProjectRollbacks(tx store.Tx, project string) error {
	m, ok, err := ReadMark(tx, project)
	if err != nil {
		return err
	}
	if !ok {
		return rollbackIndexError("project %s has entries and no mark", project)
	}
	stream := projection.ProjectStream(project)
	if head, _ := tx.StreamVersion(stream); m.Version > head || m.Version == 0 {
		return rollbackIndexError("project %s is marked indexed to version %d, its stream is at %d", project, m.Version, head)
	}
	want := map[string][]byte{string(Key(project, 0)): m.Bytes()}
	n := uint64(0)
	err = tx.ReadStream(stream, 1, func(r *store.Record) error {
		if r.Version > m.Version {
			return store.ErrStop
		}
		if r.Version == m.Version && r.Seq != m.Seq {
			return rollbackIndexError("project %s is marked indexed to seq %d, its stream's version %d is seq %d", project, m.Seq, m.Version, r.Seq)
		}
		if isProjectRollback(r, project) {
			n++
			want[string(Key(project, r.Seq))] = binary.BigEndian.AppendUint64(nil, r.Version)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != m.Entries {
		return rollbackIndexError("project %s: its mark counts %d rollbacks, its stream has %d", project, m.Entries, n)
	}
	seen := 0
	err = tx.Scan(BucketRollbacks, snapstore.Prefix(project), func(k, v []byte) error {
		w, ok := want[string(k)]
		if !ok || !bytes.Equal(w, v) {
			return rollbackIndexError("project %s: entry %x is not a rollback of its stream", project, k)
		}
		seen++
		return nil
	})
	if err == nil && seen != len(want) {
		err = rollbackIndexError("project %s: %d of its %d rollbacks are missing from the index", project, len(want)-seen, len(want)-1)
	}
	return err
}

func rollbackIndexError(format string, args ...any) error {
	return &store.CorruptionError{Reason: "rollback index: " + fmt.Sprintf(format, args...)}
}
