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
// The projections are read only once the log has passed: a walk of a
// file whose pages are damaged can crash or loop before the store's own
// check of its page structure has refused it. (Overlapping the two on two
// cores needs that check apart from the record walk, in the backend.)
func (e *Engine) Verify() (VerifyReport, error) {
	if err := e.acquire(); err != nil {
		return VerifyReport{}, err
	}
	v, ok := e.log.(store.Verifier)
	if !ok {
		return VerifyReport{}, fmt.Errorf("%w: this store cannot verify itself", ErrInvalid)
	}
	rep, err := v.Verify()
	if err != nil {
		return VerifyReport{}, err
	}
	out := VerifyReport{
		HeadSeq:     rep.HeadSeq,
		HeadHash:    hex.EncodeToString(rep.HeadHash[:]),
		Streams:     rep.Streams,
		Projects:    rep.Projects,
		Projections: "stale",
	}
	err = e.log.View(func(tx store.Tx) error {
		if err := history.CheckIndex(tx); err != nil {
			return err
		}
		if err := projstore.CheckDigestLog(tx); err != nil {
			return err
		}
		if out.Snapshots, out.BadSnapshots, err = countSnapshots(tx); err != nil {
			return err
		}
		current, err := projstore.Current(tx)
		if err != nil || !current {
			return err
		}
		out.Projections = "ok"
		return e.verifyProjections(tx)
	})
	return out, err
}

// verifyProjections compares the stored projections with a replay of the
// log: project by project, or, when the projects' events are not the
// whole log, all at once; and the log index with the log.
func (e *Engine) verifyProjections(tx store.Tx) error {
	settled, err := projstore.VerifyByProject(tx, e.warn)
	if err != nil {
		return err
	}
	if !settled {
		return e.compareProjections(tx)
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
