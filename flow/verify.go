package flow

import (
	"encoding/hex"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

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
// the log, and the log index against the log (logidx.Compare). It returns a
// *store.CorruptionError naming the first bad seq, or the first entity
// that differs when the log is sound.
//
// The projections are read only once the store says its trees hold no
// cycle (eventlog: the shape check of its branch pages; its check of the
// whole page structure then runs beside every read, and its finding is
// the one reported): a walk of a file whose branch pages lead back up
// could loop. A store that says when
// and lends the records its walk checked (overlapVerifier) has the
// projections checked on a second goroutine, in a transaction of its
// own, while its record walk goes on and feeds the log index's check
// (logidx.Checker, compared once the walk has ended) and the
// projections' (projstore.Stream: every project folded from that one
// walk, its projects dealt to a goroutine per CPU); the scans that need
// no fold (the children index, the projection buckets' key counts) run
// meanwhile, their findings held until the projections' are known. Other stores' projections are
// replayed project by project, a project on each CPU
// (projstore.VerifyProjects). A problem in the
// log is reported before one in the projections either way. A store that
// can (trimmer) keeps the part of its file held in memory small
// throughout: the peak resident memory is then that of the projects
// being compared, not of the file.
func (e *Engine) Verify() (VerifyReport, error) {
	if err := e.acquire(); err != nil {
		return VerifyReport{}, err
	}
	v, ok := e.log.(store.Verifier)
	if !ok {
		return VerifyReport{}, fmt.Errorf("%w: this store cannot verify itself", ErrInvalid)
	}
	if t, ok := e.log.(trimmer); ok {
		defer t.KeepTrimmed()()
	}
	out := VerifyReport{Projections: "stale"}
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }
	var rep store.VerifyReport
	var err, derr error
	if ov, ok := v.(overlapVerifier); ok {
		rep, err, derr = e.verifyOverlapped(ov, &out, warn)
	} else if rep, err = v.Verify(); err == nil {
		derr = e.log.View(func(tx store.Tx) error { return checkDerived(tx, e.log.View, &out, warn, nil) })
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

// overlapVerifier is a store.Verifier that says when its trees have
// passed the check that no read of them can loop (eventlog.Log.VerifyWith):
// from then on the caller may read the store on another goroutine while
// the record walk goes on. each, when not nil, is lent every record the walk has checked.
type overlapVerifier interface {
	VerifyWith(checked func(), each func(*store.Record) error) (store.VerifyReport, error)
}

// trimmer is a store that can keep the part of its file held in memory
// small while a function runs (eventlog's logStore): Verify reads the
// whole file, the projections' check part of it again after the walk;
// DiffEach (flowctl diff) reads the log between unlinked snapshots and
// the deltas between, each page once.
type trimmer interface {
	KeepTrimmed() (stop func())
}

// fed is what the store's record walk feeds for checkDerived: the log
// index's check, nil when the projections or the index are not current
// (not compared).
type fed struct {
	idx *logidx.Checker
	// stream is the projections' check, fed the records (nil: the
	// projections are not current).
	stream *projstore.Stream
	// walked is closed once the walk has ended; failed then says whether
	// it found a problem (idx then saw part of the log).
	walked chan struct{}
	failed bool
}

// verifyOverlapped is Verify through ov: once the page check passed, a
// goroutine reads what the checks need (setup), hands the walk what it
// feeds, and runs checkDerived in a transaction of its own.
func (e *Engine) verifyOverlapped(ov overlapVerifier, out *VerifyReport, warn func(string, ...any)) (rep store.VerifyReport, err, derr error) {
	setup := make(chan *fed, 1)
	var once sync.Once
	send := func(f *fed) { once.Do(func() { setup <- f }) }
	f := &fed{walked: make(chan struct{})}
	done := make(chan error, 1)
	started := false
	checked := func() {
		started = true
		go func() {
			err := e.log.View(func(tx store.Tx) error {
				serr := f.setup(tx, e.log.View, warn)
				send(f)
				if serr != nil {
					return serr
				}
				return checkDerived(tx, e.log.View, out, warn, f)
			})
			send(nil) // a View that could not begin
			done <- err
		}()
	}
	var feed *fed
	first := true
	each := func(r *store.Record) error {
		if first {
			first = false
			feed = <-setup
		}
		if feed == nil {
			return nil
		}
		if feed.idx != nil {
			feed.idx.Add(r.Seq, &r.Event)
		}
		if feed.stream != nil {
			feed.stream.Add(r)
		}
		return nil
	}
	rep, err = ov.VerifyWith(checked, each)
	if started && first {
		feed = <-setup // a log without records: its check waits for End too
	}
	if feed != nil && feed.stream != nil {
		feed.stream.End(err != nil)
	}
	f.failed = err != nil
	close(f.walked)
	if started {
		derr = <-done
	}
	return rep, err, derr
}

// setup makes f's projections' check when tx's projections are current
// (projstore.Stream, its fold in a transaction view begins), and its log
// index check when the index is current too.
func (f *fed) setup(tx store.Tx, view func(func(store.Tx) error) error, warn func(string, ...any)) error {
	current, err := projstore.Current(tx)
	if err != nil {
		return err
	}
	if !current {
		return nil // nothing more is compared
	}
	if f.stream, err = projstore.NewStream(tx, view, runtime.GOMAXPROCS(0), warn); err != nil {
		return err
	}
	if current, err = logidx.Current(tx); err != nil || !current {
		return err
	}
	f.idx = logidx.NewChecker()
	return nil
}

// checkDerived checks what the engine derives from the log against it:
// the rollback index, the digest log index, the snapshots (counted), the
// projections and the log index, setting out's Projections and
// Snapshots. With f, the store's walk feeds the log index's check: it is
// compared once the walk has ended. view begins the transactions of the
// projections' check's other workers (verifyProjections).
func checkDerived(tx store.Tx, view func(func(store.Tx) error) error, out *VerifyReport, warn func(string, ...any), f *fed) error {
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
	if out.Snapshots, out.BadSnapshots, err = countSnapshots(tx); err != nil {
		return err
	}
	if !current {
		return nil
	}
	out.Projections = "ok"
	var children error
	if f != nil && f.stream != nil {
		// While the walk goes on, the scans that need no fold: their
		// findings wait for the projections'.
		if err := f.stream.CountKeys(tx); err != nil {
			return err
		}
		children = projstore.CheckChildren(tx)
	}
	if err := verifyProjections(tx, view, warn, f); err != nil {
		return err
	}
	if f == nil || f.stream == nil {
		children = projstore.CheckChildren(tx)
	}
	if children != nil { // against the tasks, just compared with the log
		return children
	}
	return verifyLogIndex(tx, f)
}

// verifyProjections compares the stored projections and the digest log
// index with a replay of the log: with f's stream, fed by the store's
// walk; without, project by project, a project on each CPU (the others'
// in transactions view begins); or, when the projects' events are not
// the whole log, all at once.
func verifyProjections(tx store.Tx, view func(func(store.Tx) error) error, warn func(string, ...any), f *fed) error {
	var settled bool
	var err error
	if f != nil && f.stream != nil {
		settled, err = f.stream.Verify(tx, view, runtime.GOMAXPROCS(0), warn)
	} else {
		settled, err = projstore.VerifyProjects(tx, view, runtime.GOMAXPROCS(0), warn)
	}
	if err != nil || settled {
		return err
	}
	if err := projstore.CheckDigestLog(tx); err != nil {
		return err
	}
	mem, _, err := projstore.Replay(tx, warn, nil)
	if err != nil {
		return err
	}
	return projstore.Compare(tx, mem)
}

// verifyLogIndex compares the log index with the log when it is current:
// with f's check fed by the walk, or a replay of its own.
func verifyLogIndex(tx store.Tx, f *fed) error {
	if f != nil && f.idx != nil {
		if <-f.walked; f.failed {
			return nil // the log's problem is the one reported
		}
		return f.idx.Check(tx)
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
	err = store.ScanShared(tx, snapstore.Bucket, nil, func(k, v []byte) error {
		info, err := d.Describe(k, v) // keeps nothing of k and v
		if all++; !info.OK {
			bad++
		}
		return err
	})
	return all, bad, err
}
