package flow

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
)

// VerifyReport is the result of a clean Verify.
type VerifyReport struct {
	HeadSeq  uint64 `json:"head_seq"`
	HeadHash string `json:"head_hash"`
	Streams  int    `json:"streams"`
	Projects int    `json:"projects"`
	// Projections is "ok" when the inline projections equal a replay of
	// the log, "stale" when they were built by another version (a writable
	// open or 'flowctl rebuild' rebuilds them).
	Projections string `json:"projections"`
	// Snapshots is how many snapshots are stored; BadSnapshots how many
	// of them a read would skip (checksums, header, a delta's chain: see
	// Engine.Snapshots). Snapshots are derived data: a bad one fails
	// 'snapshot verify', not Verify.
	Snapshots    int `json:"snapshots"`
	BadSnapshots int `json:"bad_snapshots"`
}

// Verify checks the whole store (store.Verifier; for a file see
// eventlog.Log.Verify), then the stored projections against a replay of
// the log, project by project (projstore.VerifyByProject). It returns a
// *store.CorruptionError naming the first bad seq, or the first entity
// that differs when the log is sound.
//
// The projections are read only once the store's check of its page
// structure has passed: a walk of a file whose pages are damaged can
// crash or loop before that check has refused it. A store that says when
// (overlapVerifier) has the projections checked on a second goroutine,
// in a transaction of their own, while its record walk goes on; a
// problem in the log is reported before one in the projections either
// way.
func (e *Engine) Verify() (VerifyReport, error) {
	if err := e.acquire(); err != nil {
		return VerifyReport{}, err
	}
	v, ok := e.log.(store.Verifier)
	if !ok {
		return VerifyReport{}, fmt.Errorf("%w: this store cannot verify itself", ErrInvalid)
	}
	out := VerifyReport{Projections: "stale"}
	var warnings []string
	derived := func() error {
		warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
		return e.log.View(func(tx store.Tx) error { return checkDerived(tx, &out, warn) })
	}
	var rep store.VerifyReport
	var err, derr error
	if ov, ok := v.(overlapVerifier); ok {
		done := make(chan error, 1)
		started := false
		rep, err = ov.VerifyWith(func() {
			started = true
			go func() { done <- derived() }()
		}, nil)
		if started {
			derr = <-done
		}
	} else if rep, err = v.Verify(); err == nil {
		derr = derived()
	}
	for _, w := range warnings {
		e.warn("%s", w)
	}
	if err != nil {
		return VerifyReport{}, err
	}
	out.HeadSeq, out.HeadHash = rep.HeadSeq, hex.EncodeToString(rep.HeadHash[:])
	out.Streams, out.Projects = rep.Streams, rep.Projects
	return out, derr
}

// overlapVerifier is a store.Verifier that says when its check of the
// page structure has passed (eventlog.Log.VerifyWith): from then on the
// caller may read the store on another goroutine while the record walk
// goes on. each, when not nil, is lent every record the walk has checked.
type overlapVerifier interface {
	VerifyWith(checked func(), each func(*store.Record) error) (store.VerifyReport, error)
}

// checkDerived checks what the engine derives from the log against it:
// the rollback index, the digest log index, the snapshots (counted), the
// projections and the log index, setting out's Projections and
// Snapshots.
func checkDerived(tx store.Tx, out *VerifyReport, warn func(string, ...any)) error {
	if err := history.CheckIndex(tx); err != nil {
		return err
	}
	current, err := projstore.Current(tx)
	if err != nil {
		return err
	}
	if !current {
		// VerifyByProject checks the digest log index with the projections.
		if err := projstore.CheckDigestLog(tx); err != nil {
			return err
		}
	}
	if out.Snapshots, out.BadSnapshots, err = countSnapshots(tx); err != nil || !current {
		return err
	}
	out.Projections = "ok"
	return verifyProjections(tx, warn)
}

// verifyProjections compares the stored projections and the digest log
// index with a replay of the log: project by project, or, when the
// projects' events are not the whole log, all at once; and the log index
// with the log.
func verifyProjections(tx store.Tx, warn func(string, ...any)) error {
	settled, err := projstore.VerifyByProject(tx, warn)
	if err != nil {
		return err
	}
	if !settled {
		if err := projstore.CheckDigestLog(tx); err != nil {
			return err
		}
		mem, _, err := projstore.Replay(tx, warn, nil)
		if err != nil {
			return err
		}
		if err := projstore.Compare(tx, mem); err != nil {
			return err
		}
	}
	if current, err := logidx.Current(tx); err != nil || !current {
		return err
	}
	return logidx.Compare(tx)
}

// Head is a point of the log named by its seq and the hash there, written
// HASH@SEQ. A hash prefix of at least 8 hex digits is accepted.
type Head struct {
	Seq  uint64
	Hash string
}

func (h Head) String() string { return h.Hash + "@" + strconv.FormatUint(h.Seq, 10) }

// ParseHead parses HASH@SEQ.
func ParseHead(s string) (Head, error) {
	hash, seqText, ok := strings.Cut(s, "@")
	seq, err := strconv.ParseUint(seqText, 10, 64)
	if !ok || err != nil || seq == 0 || len(hash) < 8 || len(hash) > 64 {
		return Head{}, fmt.Errorf("%w: %q is not HASH@SEQ (a hash of 8-64 hex digits, a seq from 1)", ErrInvalid, s)
	}
	if strings.Trim(strings.ToLower(hash), "0123456789abcdef") != "" {
		return Head{}, fmt.Errorf("%w: %q: the hash is not hex", ErrInvalid, s)
	}
	return Head{Seq: seq, Hash: strings.ToLower(hash)}, nil
}

// CheckHead verifies that the log still holds h: a record at h.Seq whose
// hash starts with h.Hash. Otherwise it returns a *store.CorruptionError
// (the log was truncated or rewritten since h was noted).
func (e *Engine) CheckHead(h Head) error {
	return e.view(func(tx store.Tx) error {
		r, err := tx.Record(h.Seq)
		if err != nil {
			return err
		}
		if r == nil {
			head, _ := tx.Head()
			return &store.CorruptionError{Seq: h.Seq, Reason: fmt.Sprintf("expected head %s: the log ends at seq %d", h, head)}
		}
		if got := hex.EncodeToString(r.Hash[:]); !strings.HasPrefix(got, h.Hash) {
			return &store.CorruptionError{Seq: h.Seq, Reason: fmt.Sprintf("expected head %s: the hash at seq %d is %s", h, h.Seq, got)}
		}
		return nil
	})
}

// countSnapshots checks every stored snapshot as Engine.Snapshots does
// and counts them and the bad ones.
func countSnapshots(tx store.Tx) (all, bad int, err error) {
	d := snapstore.NewDescriber(tx)
	err = tx.Scan(snapstore.Bucket, nil, func(k, v []byte) error {
		info, err := d.Describe(k, v)
		if all++; !info.OK {
			bad++
		}
		return err
	})
	return all, bad, err
}
