package serve

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// call is one request's open engine and resolved project.
type call struct {
	eng     *flow.Engine
	project string
	r       *http.Request
}

// query returns a query parameter.
func (c *call) query(name string) string { return c.r.URL.Query().Get(name) }

// open opens the file for one request, with the server's read cache;
// a write records cfg.Actor.
func (s *server) open(readOnly bool) (*flow.Engine, error) {
	opts := s.cfg.Options
	opts.ReadOnly, opts.Create, opts.Cache = readOnly, false, s.cache
	opts.Actor = ""
	if !readOnly {
		opts.Actor = s.cfg.Actor
	}
	return flow.Open(s.cfg.Path, opts)
}

// scope says what a request works on: the file, a project, or a project
// as it stood at ?at=POINT.
type scope int

const (
	wholeFile scope = iota
	project
	projectAt
	projectOwnAt // a project; the handler reads ?at itself (log)
)

// serveRead answers a read: it opens the file read-only, resolves {p}
// (a unique prefix of a name is accepted, as the CLI's --project) and
// ?at, runs fn, closes the file and then writes what fn answered.
func (s *server) serveRead(w http.ResponseWriter, r *http.Request, sc scope, fn func(c *call, a *answer) error) {
	a := &answer{}
	if err := s.with(r, true, sc, func(c *call) error { return fn(c, a) }); err != nil {
		s.fail(w, err)
		return
	}
	a.write(w, http.StatusOK)
}

// with opens the file, resolves the scope, runs fn and closes the file.
func (s *server) with(r *http.Request, readOnly bool, sc scope, fn func(c *call) error) (err error) {
	if r.URL.Query().Has("at") && sc != projectAt && sc != projectOwnAt {
		return invalid("at: %s takes no point", r.URL.Path)
	}
	eng, err := s.open(readOnly)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := eng.Close(); err == nil {
			err = cerr
		}
	}()
	c := &call{eng: eng, r: r}
	if sc == wholeFile {
		return fn(c)
	}
	if c.project, err = eng.ResolveProject(r.PathValue("p")); err != nil {
		return err
	}
	if sc == projectAt {
		if err := c.at(); err != nil {
			return err
		}
	}
	return fn(c)
}

// at swaps the call's engine for a read-only view of its project at
// ?at=POINT, as the CLI's --at: a bad point or a seq past the head is
// invalid, an unknown checkpoint or a point before the project's first
// event not found.
func (c *call) at() error {
	if !c.r.URL.Query().Has("at") {
		return nil
	}
	p, err := ParsePoint(c.query("at"))
	if err != nil {
		return err
	}
	if err := c.eng.Begun(c.project, p); err != nil {
		return err
	}
	c.eng = c.eng.At(c.project, p)
	return nil
}

// Head is the point HEAD: a time after every event, so that the last
// event at or before it is the head, whatever the head is then (as the
// CLI's HEAD).
var Head = flow.Point{Time: time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)}

// ParsePoint reads a point as the CLI does: a seq, a checkpoint (C-n), an
// RFC 3339 time or HEAD. A bad one is ErrInvalid.
func ParsePoint(s string) (flow.Point, error) {
	if strings.EqualFold(strings.TrimSpace(s), "HEAD") {
		return Head, nil
	}
	return flow.ParsePoint(s)
}

// page is a list with an optional limit (0: none), as the CLI's --limit:
// past it the walk stops with flow.ErrStop.
type page struct {
	a     *answer
	limit int
	n     int
}

func (p *page) add(v any) error {
	if p.limit > 0 && p.n == p.limit {
		return flow.ErrStop
	}
	p.n++
	return p.a.add(v)
}

// oneOf checks an enumerated query parameter ("" passes).
func oneOf(name, v string, allowed []string) error {
	if v == "" || slices.Contains(allowed, v) {
		return nil
	}
	return invalid("%s=%q: use one of %s", name, v, strings.Join(allowed, ", "))
}

var (
	taskStatuses     = []string{projection.StatusTodo, projection.StatusDoing, projection.StatusDone, projection.StatusBlocked, projection.StatusCancelled}
	approvalStatuses = []string{projection.ApprovalPending, flow.ApprovalStatusExpired, projection.ApprovalGranted, projection.ApprovalDenied}
)

// GET /api/v1/projects: `project ls -o json`.
func (s *server) projects(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, wholeFile, func(c *call, a *answer) error {
		all, err := c.eng.Projects()
		if err != nil {
			return err
		}
		for _, p := range all {
			if err := a.add(p); err != nil {
				return err
			}
		}
		a.end()
		return nil
	})
}

// GET /api/v1/projects/{p}/status: `status -o json`, for cfg.Actor.
func (s *server) status(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, projectAt, func(c *call, a *answer) error {
		st, err := c.eng.StatusFor(c.project, s.cfg.Actor)
		if err != nil {
			return err
		}
		return a.one(st)
	})
}

// GET /api/v1/projects/{p}/tasks: `task ls -o json` with its filters,
// in pages of DefaultTaskLimit tasks unless limit says otherwise (0: all);
// after=T-n starts after that task (NextAfterHeader).
func (s *server) tasks(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, projectAt, func(c *call, a *answer) error {
		f := flow.TaskFilter{Status: c.query("status"), Owner: c.query("owner"), Tag: c.query("tag")}
		if err := oneOf("status", f.Status, taskStatuses); err != nil {
			return err
		}
		if v := c.query("plan"); v != "" {
			id, err := flow.ParsePlanID(v)
			if err != nil {
				return err
			}
			f.Plan = id
		}
		if v := c.query("after"); v != "" {
			id, err := flow.ParseTaskID(v)
			if err != nil {
				return err
			}
			f.After = id
		}
		limit, err := intParam(r, "limit", DefaultTaskLimit)
		if err != nil {
			return err
		}
		return eachTaskPage(c, a, f, limit)
	})
}

// GET /api/v1/projects/{p}/tasks/{id}: `task show -o json`.
func (s *server) task(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, projectAt, func(c *call, a *answer) error {
		id, err := flow.ParseTaskID(r.PathValue("id"))
		if err != nil {
			return err
		}
		f, err := c.eng.TaskFamily(c.project, id)
		if err != nil {
			return err
		}
		return a.one(f)
	})
}

// GET /api/v1/projects/{p}/ready: `ready -o json` (explain, limit), for
// cfg.Actor.
func (s *server) ready(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, projectAt, func(c *call, a *answer) error {
		explain, err := boolParam(r, "explain")
		if err != nil {
			return err
		}
		limit, err := intParam(r, "limit", 0)
		if err != nil {
			return err
		}
		pg := &page{a: a, limit: limit}
		err = c.eng.EachReady(c.project, s.cfg.Actor, explain, func(rd flow.Readiness) error { return pg.add(rd) })
		if err != nil && !errors.Is(err, flow.ErrStop) {
			return err
		}
		a.end()
		return nil
	})
}

func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, invalid("%s=%q: must be true or false", name, v)
	}
	return b, nil
}

// GET /api/v1/projects/{p}/diff?a=&b=: `diff A B --limit N -o json` (b:
// HEAD), a page at a time: limit changes (DefaultDiffLimit unless given,
// 0: all) after the first offset; while more follow, NextOffsetHeader
// names the offset of the next page.
func (s *server) diff(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, project, func(c *call, a *answer) error {
		limit, err := intParam(r, "limit", DefaultDiffLimit)
		if err != nil {
			return err
		}
		offset, err := intParam(r, "offset", 0)
		if err != nil {
			return err
		}
		if c.query("a") == "" {
			return invalid("a: give the point to compare from (a seq, C-n, a time or HEAD)")
		}
		from, err := ParsePoint(c.query("a"))
		if err != nil {
			return err
		}
		to := Head
		if c.query("b") != "" {
			if to, err = ParsePoint(c.query("b")); err != nil {
				return err
			}
		}
		d, err := digest.DiffPage(c.eng, c.project, from, to, offset, limit)
		if err != nil {
			return err
		}
		if d.Truncated {
			a.header = map[string]string{NextOffsetHeader: strconv.Itoa(offset + len(d.Changes))}
		}
		return a.one(d)
	})
}

// GET /api/v1/projects/{p}/approvals: `approval ls -o json` (status,
// task, limit).
func (s *server) approvals(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, projectAt, func(c *call, a *answer) error {
		f := flow.ApprovalFilter{Status: c.query("status"), Task: c.query("task")}
		if err := oneOf("status", f.Status, approvalStatuses); err != nil {
			return err
		}
		limit, err := intParam(r, "limit", 0)
		if err != nil {
			return err
		}
		pg := &page{a: a, limit: limit}
		err = c.eng.EachApproval(c.project, f, func(ap *projection.Approval) error { return pg.add(ap) })
		if err != nil && !errors.Is(err, flow.ErrStop) {
			return err
		}
		a.end()
		return nil
	})
}

// GET /api/v1/projects/{p}/checkpoints: `checkpoint ls -o json` (limit).
func (s *server) checkpoints(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, projectAt, func(c *call, a *answer) error {
		limit, err := intParam(r, "limit", 0)
		if err != nil {
			return err
		}
		cs, err := c.eng.Checkpoints(c.project)
		if err != nil {
			return err
		}
		pg := &page{a: a, limit: limit}
		for _, cp := range cs {
			if err := pg.add(cp); errors.Is(err, flow.ErrStop) {
				break
			} else if err != nil {
				return err
			}
		}
		a.end()
		return nil
	})
}
