package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/flow/internal/hooks"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Hooks configure the hooks an engine runs around its commands
// (Options.Hooks; README "Hooks"): executables in a hooks directory that
// approve a command's events before they commit (pre-commit: exit 0
// allows, exit 2 vetoes, anything else refuses) and hear them after
// (post-commit: a failure is a warning). Imports, rebuilds and snapshot
// imports run none.
//
// No lock is held while a hook runs: the command runs once in a
// transaction that is rolled back, the file is closed, the pre-commit
// hooks run, and the command runs again and commits only if no one but
// the hooks of this very command appended meanwhile (else it asks again,
// up to maxHookRounds times, then fails with store.ErrBusy). An engine
// with hooks therefore lets go of its file during a write: it is for one
// operation at a time, as every front door uses it.
type Hooks struct {
	// Dir is the hooks directory; "" is hooks/ beside the file (none for
	// a store that is not a file).
	Dir string
	// Skip runs no hook (--no-hooks); every event is marked so (Session).
	Skip bool
	// Timeout bounds one hook's run; 0 is DefaultHookTimeout.
	Timeout time.Duration
	// Depth is how many hooks this process runs inside (FLOW_HOOK_DEPTH):
	// above 0 it runs no hook, and its events are marked as made by Hook
	// (Session) and carry Run as their correlation id.
	Depth int
	Hook  string   // the hook this process runs inside (FLOW_HOOK)
	Run   store.ID // that hook's run (FLOW_HOOK_RUN)
	// Environ is the environment hooks inherit; nil is os.Environ().
	Environ []string
}

// DefaultHookTimeout bounds one hook's run when Hooks.Timeout is 0.
const DefaultHookTimeout = hooks.DefaultTimeout

// HooksSupported reports whether hooks run on this system (Unix).
const HooksSupported = hooks.Supported

// HookAPI is the version of the hooks' input (its "api" field).
const HookAPI = 1

// ErrVetoed: a pre-commit hook vetoed the command or failed (exit 8).
var ErrVetoed = errors.New("flow: vetoed")

// maxHookRounds is how many times a command asks its pre-commit hooks
// when others keep writing while they run.
const maxHookRounds = 3

// Session markers (Hooks.Session).
const (
	markNoHooks = "[no-hooks]"
	markHook    = "[hook:%s]"
)

// Session is the session recorded on an engine's events: session itself,
// followed by " [no-hooks]" when hooks were skipped, or " [hook:NAME]"
// when the engine runs inside hook NAME. The envelope has no other field
// for it, and a marker in a free-text field changes no format.
func (h *Hooks) Session(session string) string {
	var mark string
	switch {
	case h == nil:
		return session
	case h.Depth > 0:
		mark = fmt.Sprintf(markHook, h.Hook)
	case h.Skip:
		mark = markNoHooks
	default:
		return session
	}
	if session == "" {
		return mark
	}
	return session + " " + mark
}

// correlation is the correlation id of an engine's events: its hook's run
// inside a hook, else none.
func (h *Hooks) correlation() store.ID {
	if h == nil || h.Depth == 0 {
		return store.ID{}
	}
	return h.Run
}

// HooksDir is the hooks directory of the store at path: h.Dir, else
// hooks/ beside the file; "" when there is none.
func HooksDir(path string, h *Hooks) string {
	if h != nil && h.Dir != "" {
		return h.Dir
	}
	if path == "" || store.DriverName(path) != store.PathDriver {
		return ""
	}
	return filepath.Join(filepath.Dir(path), "hooks")
}

// hookSet returns the hooks this engine's commands run, found once; an
// empty set when it runs none.
func (e *Engine) hookSet() (hooks.Set, error) {
	h := e.opts.Hooks
	if h == nil || h.Skip || h.Depth > 0 {
		return hooks.Set{}, nil
	}
	if e.hooks == nil {
		dir := HooksDir(e.path, h)
		if dir == "" {
			e.hooks = &hooks.Set{}
			return *e.hooks, nil
		}
		set, err := hooks.Find(dir)
		if err != nil {
			return hooks.Set{}, fmt.Errorf("%w: %w", ErrVetoed, err) // fail closed
		}
		e.hooks = &set
	}
	return *e.hooks, nil
}

// errDryRun rolls back the first run of a hooked command.
var errDryRun = errors.New("flow: dry run")

// errMoved: the file changed since the hooks were asked.
var errMoved = errors.New("flow: the file changed while the hooks ran")

// hookRun is one run of a command as its hooks see it.
type hookRun struct {
	head    uint64 // the head the run started from
	hash    store.Hash
	records []*store.Record
	before  map[string]json.RawMessage // the entity of each stream, before the run; by stream
	after   map[string]json.RawMessage // and after
}

// updateHooked is update with set's hooks around fn (see Hooks).
func (e *Engine) updateHooked(fn func(tx store.Tx) error, set hooks.Set) error {
	id := store.NewID(e.opts.Now())
	for range maxHookRounds {
		plan, err := e.dryRun(fn)
		if errors.Is(err, errMoved) {
			continue
		}
		if err != nil || plan == nil { // nil: nothing to ask about, committed
			return err
		}
		if len(set.Pre) > 0 {
			if err := e.withoutFile(func() error { return e.runHooks(hooks.PreCommit, set.Pre, plan, id) }); err != nil {
				return err
			}
		}
		done, err := e.commitRun(fn, plan, id, len(set.Post) > 0)
		if errors.Is(err, errMoved) {
			continue
		}
		if err != nil {
			return err
		}
		if len(set.Post) > 0 {
			e.postCommit(set.Post, done, id)
		}
		return nil
	}
	return fmt.Errorf("%w: others wrote to the file while the pre-commit hooks ran, %d times in a row: try again", store.ErrBusy, maxHookRounds)
}

// dryRun runs fn in a transaction that it rolls back, and returns what fn
// appended with the entities before and after; nil when fn appended
// nothing, in which case the transaction is committed (nothing to ask).
func (e *Engine) dryRun(fn func(tx store.Tx) error) (*hookRun, error) {
	var run *hookRun
	err := e.update(func(tx store.Tx) error {
		run = &hookRun{}
		run.head, run.hash = tx.Head()
		if err := fn(tx); err != nil {
			return err
		}
		var err error
		if run.records, err = appendedSince(tx, run.head); err != nil || len(run.records) == 0 {
			run = nil
			return err
		}
		if run.after, err = entitiesOf(tx, run.records); err != nil {
			return err
		}
		return errDryRun
	})
	if !errors.Is(err, errDryRun) {
		return nil, err
	}
	err = e.view(func(tx store.Tx) error {
		if head, hash := tx.Head(); head != run.head || hash != run.hash {
			return errMoved // another writer of this process: ask again
		}
		var err error
		run.before, err = entitiesOf(tx, run.records)
		return err
	})
	return run, err
}

// postCommit runs the post-commit hooks on the committed run: their
// failure is a warning, since the events are committed.
func (e *Engine) postCommit(hs []hooks.Hook, done *hookRun, id store.ID) {
	err := e.withoutFile(func() error { return e.runHooks(hooks.PostCommit, hs, done, id) })
	if err != nil {
		e.warn("post-commit %s; the command's events are committed", hookMessage(err))
	}
}

// commitRun runs fn again and commits it, if since plan began no one has
// appended but the hooks of run id, and fn appends what the hooks saw:
// as many events of the same types (sameShape). Else errMoved.
// With post, it returns the run with the entities for post-commit hooks.
func (e *Engine) commitRun(fn func(tx store.Tx) error, plan *hookRun, id store.ID, post bool) (*hookRun, error) {
	var done *hookRun
	err := e.update(func(tx store.Tx) error {
		done = &hookRun{}
		done.head, done.hash = tx.Head()
		if done.head != plan.head || done.hash != plan.hash {
			own, err := onlyRun(tx, plan.head, id)
			if err != nil {
				return err
			}
			if !own {
				return errMoved
			}
		}
		var err error
		if post {
			if done.before, err = entitiesOf(tx, plan.records); err != nil {
				return err
			}
		}
		if err := fn(tx); err != nil {
			return err
		}
		if done.records, err = appendedSince(tx, done.head); err != nil {
			return err
		}
		if !sameShape(done.records, plan.records) {
			return errMoved
		}
		if post {
			done.after, err = entitiesOf(tx, done.records)
		}
		return err
	})
	return done, err
}

// withoutFile runs fn with the file closed, so that a hook can open it,
// and opens it again. An engine made by New (no driver) keeps its store.
func (e *Engine) withoutFile(fn func() error) error {
	if e.driver == nil || e.log == nil {
		return fn()
	}
	e.held.forget()
	if err := e.log.Close(); err != nil {
		return err
	}
	e.log = nil
	err := fn()
	if aerr := e.acquire(); err == nil {
		err = aerr
	}
	return err
}

// appendedSince returns the records after seq from, in order.
func appendedSince(tx store.Tx, from uint64) ([]*store.Record, error) {
	head, _ := tx.Head()
	if head == from {
		return nil, nil
	}
	var out []*store.Record
	err := tx.ReadRange(from+1, head, func(r *store.Record) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// onlyRun reports whether every record after seq from was made inside a
// hook of run id.
func onlyRun(tx store.Tx, from uint64, id store.ID) (bool, error) {
	own := true
	err := tx.ReadRange(from+1, 0, func(r *store.Record) error {
		if r.Correlation != id {
			own = false
			return store.ErrStop
		}
		return nil
	})
	return own, err
}

// sameShape reports whether a and b are as many events of the same types.
// Their streams may differ when a hook wrote meanwhile: a task it added
// takes the id the command's own new task had in the dry run.
func sameShape(a, b []*store.Record) bool {
	return slices.EqualFunc(a, b, func(x, y *store.Record) bool { return x.Type == y.Type })
}

// entitiesOf returns, by stream, the JSON of the entity each record's
// stream names (a project, plan or task; null when there is none).
func entitiesOf(tx store.Tx, records []*store.Record) (map[string]json.RawMessage, error) {
	src := projstore.Reader(tx)
	out := make(map[string]json.RawMessage)
	for _, r := range records {
		if _, ok := out[r.Stream]; ok {
			continue
		}
		var v any
		var err error
		switch kind, project, id, _ := projection.ParseStream(r.Stream); kind {
		case projection.KindProject:
			v, err = orNil(src.Project(project))
		case projection.KindPlan:
			v, err = orNil(src.Plan(project, id))
		case projection.KindTask:
			v, err = orNil(src.Task(project, id))
		}
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[r.Stream] = b
	}
	return out, nil
}

// orNil turns a typed nil entity into an untyped nil (JSON null).
func orNil[T any](v *T, err error) (any, error) {
	if v == nil || err != nil {
		return nil, err
	}
	return v, nil
}

// hookLine is one line of a hook's input.
type hookLine struct {
	API    int             `json:"api"`
	Hook   string          `json:"hook"`
	Event  any             `json:"event"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// pendingEvent is an event before its commit: no seq, id or hashes yet.
type pendingEvent struct {
	Event
	Seq      uint64 `json:"seq,omitempty"`
	ID       string `json:"id,omitempty"`
	PrevHash string `json:"prev_hash,omitempty"`
	Hash     string `json:"hash,omitempty"`
}

// input is run's events as point's hooks read them: one JSON object per
// line.
func (run *hookRun) input(point string) ([]byte, error) {
	var b []byte
	for _, r := range run.records {
		line := hookLine{API: HookAPI, Hook: point, Before: run.before[r.Stream], After: run.after[r.Stream]}
		if point == hooks.PreCommit {
			line.Event = pendingEvent{Event: eventOf(r)}
		} else {
			line.Event = eventOf(r)
		}
		j, err := json.Marshal(line)
		if err != nil {
			return nil, err
		}
		b = append(append(b, j...), '\n')
	}
	return b, nil
}

// runHooks runs point's hooks on run in order, skipping (with a warning)
// the ones refused; the first that does not allow ends it with ErrVetoed.
func (e *Engine) runHooks(point string, hs []hooks.Hook, run *hookRun, id store.ID) error {
	stdin, err := run.input(point)
	if err != nil {
		return err
	}
	c := hookCall{h: e.opts.Hooks, db: e.path, actor: e.opts.Actor, session: e.opts.Session, id: id, warn: e.warn}
	if len(run.records) > 0 {
		c.project = run.records[0].Project
	}
	_, err = c.run(point, hs, stdin)
	return err
}

// hookCall is what a run of hooks is given beside its input.
type hookCall struct {
	h                           *Hooks
	db, actor, session, project string
	id                          store.ID
	warn                        func(format string, args ...any)
}

// run runs hs on stdin in order and returns each one's verdict, up to the
// first that does not allow (ErrVetoed naming point and the hook).
func (c hookCall) run(point string, hs []hooks.Hook, stdin []byte) ([]HookVerdict, error) {
	in := hooks.Input{Stdin: stdin, Timeout: c.h.Timeout}
	var out []HookVerdict
	for _, h := range hs {
		v := HookVerdict{Name: h.Name, Path: h.Path, Verdict: "allow"}
		if h.Refused != "" {
			c.warn("hook %s does not run: %s", h.Path, h.Refused)
			v.Verdict, v.Reason = "not run", h.Refused
			out = append(out, v)
			continue
		}
		in.Env = c.env(h.Name)
		err := h.Run(in)
		var r *hooks.Refusal
		if errors.As(err, &r) {
			v.Verdict, v.Reason = "fail", r.Reason
			if r.Vetoed {
				v.Verdict = "veto"
			}
		}
		out = append(out, v)
		if err != nil {
			return out, &vetoError{point: point, err: err}
		}
	}
	return out, nil
}

// env is the environment of hook name: the process's, and FLOW_*.
func (c hookCall) env(name string) []string {
	env := c.h.Environ
	if env == nil {
		env = os.Environ()
	}
	return append(slices.Clip(env),
		"FLOW_DB="+c.db,
		"FLOW_PROJECT="+c.project,
		"FLOW_ACTOR="+c.actor,
		"FLOW_SESSION="+c.session,
		"FLOW_HOOK="+name,
		"FLOW_HOOK_DEPTH="+strconv.Itoa(c.h.Depth+1),
		"FLOW_HOOK_RUN="+c.id.String(),
	)
}

// HookVerdict is what one hook said in TestHooks.
type HookVerdict struct {
	Name    string `json:"name"`    // below the hooks directory: "pre-commit.d/10-check"
	Path    string `json:"path"`    // the file
	Verdict string `json:"verdict"` // allow, veto, fail (another exit, a signal, the timeout) or "not run" (refused)
	Reason  string `json:"reason,omitempty"`
}

// HookFile is a hook file as `flowctl hooks ls` shows it.
type HookFile struct {
	Point   string `json:"point"` // pre-commit or post-commit
	Name    string `json:"name"`  // below the hooks directory
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Runs    bool   `json:"runs"`              // whether a command would run it
	Refused string `json:"refused,omitempty"` // why not
}

// HookPoints are the points hooks run at, in the order they run.
var HookPoints = hooks.Points

// ListHooks lists the hook files in dir, in the order they run. Errors:
// the system's, reading a directory that exists.
func ListHooks(dir string) ([]HookFile, error) {
	set, err := hooks.Find(dir)
	if err != nil {
		return nil, err
	}
	var out []HookFile
	for _, point := range hooks.Points {
		for _, h := range set.Of(point) {
			f := HookFile{Point: point, Name: h.Name, Path: h.Path, Runs: h.Refused == "", Refused: h.Refused}
			if f.SHA256, err = h.SHA256(); err != nil {
				f.Runs, f.Refused = false, fmt.Sprintf("cannot be read: %v", err)
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// TestHooks runs the hooks of point in dir on input, lines as hooks read
// them, as a command would (the environment from the first line's event,
// db as FLOW_DB), without touching any file: the verdicts up to the
// first refusal, and ErrVetoed then. It returns ErrInvalid for an unknown
// point.
func TestHooks(dir, point, db string, input []byte, h *Hooks, warn func(string)) ([]HookVerdict, error) {
	if !slices.Contains(hooks.Points, point) {
		return nil, fmt.Errorf("%w: no hook point %q (pre-commit or post-commit)", ErrInvalid, point)
	}
	set, err := hooks.Find(dir)
	if err != nil {
		return nil, err
	}
	if h == nil {
		h = &Hooks{}
	}
	c := hookCall{h: h, db: db, id: store.NewID(time.Now()), warn: func(format string, args ...any) {
		if warn != nil {
			warn(fmt.Sprintf(format, args...))
		}
	}}
	var first struct {
		Event struct{ Actor, Session, Project string } `json:"event"`
	}
	if line, _, _ := bytes.Cut(input, []byte("\n")); json.Unmarshal(line, &first) == nil {
		c.actor, c.session, c.project = first.Event.Actor, first.Event.Session, first.Event.Project
	}
	return c.run(point, set.Of(point), input)
}

// vetoError is a hook's refusal of a command: ErrVetoed, worded as
// "pre-commit hook NAME vetoed: REASON" or "... failed: HOW".
type vetoError struct {
	point string
	err   error // a *hooks.Refusal
}

func (e *vetoError) Error() string   { return e.point + " " + e.err.Error() }
func (e *vetoError) Unwrap() []error { return []error{ErrVetoed, e.err} }

// hookMessage is a hook's failure as a warning says it.
func hookMessage(err error) string {
	var r *hooks.Refusal
	if errors.As(err, &r) {
		return r.Error()
	}
	return err.Error()
}
