package flow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// Write carries the options every write command takes.
type Write struct {
	// IfVersion, when not 0, makes the command fail with a conflict unless
	// the entity's stream is at exactly this version (its "version" field).
	IfVersion uint64 `json:"if_version,omitempty"`
	// Key is an idempotency key: a retried command with the same key
	// returns the original result and appends nothing; the same key used
	// for a different command is a conflict.
	Key string `json:"-"`
}

// Ref names the entity a command created or changed.
type Ref struct {
	Kind    string `msgpack:"kind"`
	Project string `msgpack:"project"`
	ID      string `msgpack:"id"`
}

// writer is one command's view of its write transaction: validation reads
// go through the same store that the fold writes, and emit appends an
// event and folds it at once.
type writer struct {
	*projstore.Tx
	e       *Engine
	tx      store.Tx
	emitted []string       // the projects it appended events of, each once
	oneProj [1]string      // emitted's array for a command of one project: no allocation
	batched bool           // the Tx is its batch's, flushed at the batch's end
	idx     *logidx.Writer // the events' entries in the log index
	digest  *projstore.DigestWriter
	marks   *snapstore.Marks // the snapshot marks read in the transaction (its batch's)
	// corr is the id of the command's first event: every later event
	// the command emits carries it as its correlation id, so that the
	// events of one command can be told apart in the log (flowctl undo).
	// Imported events (emitEvent alone) carry none, and the events of a
	// write made inside a hook all carry the hook run's id (Hooks.Run), so
	// that the command around the hook knows them and undo takes them as
	// one.
	corr store.ID
}

// emit appends one event to stream and folds it into the projections.
func (w *writer) emit(stream string, exp store.Expect, project, typ string, payload any) (*store.Record, error) {
	schema, _ := projection.Schema(typ)
	ev, err := w.e.newEvent(typ, schema, project, payload)
	if err != nil {
		return nil, err
	}
	if ev.Correlation.IsZero() { // a write made inside a hook keeps the hook run's id
		ev.Correlation = w.corr
	}
	r, err := w.emitEvent(stream, exp, ev)
	if err == nil && w.corr.IsZero() {
		w.corr = r.ID
	}
	return r, err
}

// emitEvent appends a built event to stream and folds it at once.
func (w *writer) emitEvent(stream string, exp store.Expect, ev store.Event) (*store.Record, error) {
	res, err := w.tx.Append(stream, exp, ev)
	if err != nil {
		return nil, err
	}
	r, err := appended(w.tx, res.Seqs[0])
	if err != nil {
		return nil, err
	}
	if err := projection.Apply(w.e.snaps.Track(w.Tx, r), r); err != nil { // the snapshot cache hears what it writes
		return nil, fmt.Errorf("flow: folding %s: %w", ev.Type, err)
	}
	if !slices.Contains(w.emitted, ev.Project) {
		w.emitted = append(w.emitted, ev.Project)
	}
	w.idx.Add(r.Seq, &r.Event)
	if err := w.digest.Add(w.tx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// freshRecorder is a transaction that hands back the records it just
// appended without a copy of their payloads (eventlog.Tx.FreshRecord,
// projstore.Pending's).
type freshRecorder interface {
	FreshRecord(seq uint64) *store.Record
}

// appended returns the record at seq that tx just appended: the one it
// kept, when it can, else read back. Its Data may be shared with tx:
// nothing changes it.
func appended(tx store.Tx, seq uint64) (*store.Record, error) {
	if f, ok := tx.(freshRecorder); ok {
		if r := f.FreshRecord(seq); r != nil {
			return r, nil
		}
	}
	return tx.Record(seq)
}

// autoSnapshot stores a snapshot of each project this command wrote to
// that is due one (snapstore.Due), and brings the project's rollback index
// up to date (history.IndexRollbacks; a batch's, at its end). It runs
// after flush, at the head of the transaction.
func (w *writer) autoSnapshot() error {
	every := w.e.snapshotEvery()
	for _, project := range w.emitted {
		if w.batched {
			w.e.batch.projects[project] = true // indexed at the batch's end
		} else if err := history.IndexRollbacks(w.tx, project); err != nil {
			return err
		}
		if every == 0 {
			continue
		}
		p, err := w.Project(project)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		due, err := w.marks.Due(w.tx, project, p.Events, every)
		if err == nil && due {
			err = w.putSnapshot(project)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// putSnapshot stores a snapshot of project (snapstore.Put), which moves
// its mark.
func (w *writer) putSnapshot(project string) error {
	w.marks.Forget(project)
	return snapstore.Put(w.tx, w.Tx, project, w.e.snaps)
}

// expect turns IfVersion into the expected-version condition of an append.
func (wr Write) expect() store.Expect {
	if wr.IfVersion == 0 {
		return store.Any
	}
	return store.Exact(wr.IfVersion)
}

// idemRecord is what the idem bucket keeps per idempotency key.
type idemRecord struct {
	Hash string `msgpack:"hash"`
	Ref  Ref    `msgpack:"ref"`
}

// command runs fn in one write transaction: validation, events, folded
// projections and the idempotency record commit together or not at all.
// name and input identify the command for idempotency.
func (e *Engine) command(wr Write, name string, input any, fn func(w *writer) (Ref, error)) (Ref, error) {
	if err := check.Line("idempotency key", wr.Key, MaxTitle, false); err != nil {
		return Ref{}, err
	}
	var hash string // of the command, for its idempotency key only
	if wr.Key != "" {
		var err error
		if hash, err = commandHash(name, input); err != nil {
			return Ref{}, err
		}
	}
	var out Ref
	err := e.commit(func(tx store.Tx) error {
		if done, err := replayed(tx, wr.Key, hash, &out); done || err != nil {
			return err
		}
		s, batched := projstore.Writer(tx)
		w := &writer{Tx: s, e: e, tx: tx, batched: batched && e.batch != nil, idx: e.idx}
		w.emitted = w.oneProj[:0]
		if e.batch != nil {
			w.digest, w.marks = &e.batch.digest, &e.batch.marks
		} else {
			w.digest, w.marks = new(projstore.DigestWriter), new(snapstore.Marks)
		}
		if w.idx == nil { // not in a Batch: written with the projections
			w.idx = new(logidx.Writer)
		}
		ref, err := fn(w)
		if err != nil {
			return err
		}
		if !w.batched {
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if e.idx == nil {
			if err := w.idx.Flush(tx); err != nil {
				return err
			}
		}
		if e.batch == nil {
			if err := w.digest.Flush(tx); err != nil {
				return err
			}
		}
		if err := w.autoSnapshot(); err != nil {
			return err
		}
		out = ref
		if wr.Key == "" {
			return nil
		}
		b, err := marshal(idemRecord{Hash: hash, Ref: ref})
		if err != nil {
			return err
		}
		return tx.Put(bucketIdem, []byte(wr.Key), b)
	})
	return out, versionConflict(err)
}

// bucketIdem holds, by idempotency key, the command's hash and result.
const bucketIdem = "idem"

// replayed reports whether key was already used for this command, setting
// out to its result; the same key for another command is a conflict.
func replayed(tx store.Tx, key, hash string, out *Ref) (bool, error) {
	if key == "" {
		return false, nil
	}
	b, err := tx.Get(bucketIdem, []byte(key))
	if err != nil || b == nil {
		return false, err
	}
	var rec idemRecord
	if err := msgpack.Unmarshal(b, &rec); err != nil {
		return false, &store.CorruptionError{Reason: fmt.Sprintf("idempotency record %q does not decode", key)}
	}
	if rec.Hash != hash {
		return false, fmt.Errorf("%w: idempotency key %q was already used for a different command", store.ErrConflict, key)
	}
	*out = rec.Ref
	return true, nil
}

func commandHash(name string, input any) (string, error) {
	b, err := json.Marshal(input)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(append([]byte(name+"\x00"), b...))
	return hex.EncodeToString(h[:]), nil
}

// versionConflict words a stale --if-version for users.
func versionConflict(err error) error {
	if err == nil {
		return nil
	}
	var vc *store.VersionConflict
	if errors.As(err, &vc) {
		return fmt.Errorf("%w: %s is at version %d, not %d (re-read it and retry)", store.ErrConflict, vc.Stream, vc.Actual, vc.Expected)
	}
	return err
}
