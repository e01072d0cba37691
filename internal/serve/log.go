package serve

import (
	"net/http"
	"strconv"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// DefaultLogLimit is how many events a log page holds when the request
// names no limit (limit=0 asks for every match).
const DefaultLogLimit = 100

// NextBeforeHeader names the cursor of the next (older) page of a log
// answer whose page is full: pass it as before=.
const NextBeforeHeader = "X-Flowctl-Next-Before"

// GET /api/v1/projects/{p}/log: `log --project P -o json` with the
// filters type, actor, session, task (its stream), since, until and limit
// (the newest N, oldest first), paging backwards from the newest with
// before=SEQ (events before that seq). at=POINT ends the log at the point.
func (s *server) log(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, projectOwnAt, func(c *call, a *answer) error {
		f, err := c.logFilter()
		if err != nil || f == nil {
			a.end() // before=1: nothing is older
			return err
		}
		var first uint64
		err = c.eng.Events(*f, func(ev flow.Event) error {
			if a.n == 0 {
				first = ev.Seq
			}
			return a.add(ev)
		})
		if err != nil {
			return err
		}
		a.end()
		if f.Limit > 0 && a.n == f.Limit && first > 1 {
			a.header = map[string]string{NextBeforeHeader: strconv.FormatUint(first, 10)}
		}
		return nil
	})
}

// logFilter reads the log's query; nil when nothing can match (before=1).
func (c *call) logFilter() (*flow.Filter, error) {
	f := &flow.Filter{Project: c.project, Type: c.query("type"), Actor: c.query("actor"), Session: c.query("session")}
	if f.Type != "" {
		if err := flow.CheckTypePattern(f.Type); err != nil {
			return nil, invalid("type=%q: %v", f.Type, err)
		}
	}
	if t := c.query("task"); t != "" {
		id, err := flow.ParseTaskID(t)
		if err != nil {
			return nil, err
		}
		f.Stream = projection.TaskStream(c.project, id)
	}
	var err error
	if f.Limit, err = intParam(c.r, "limit", DefaultLogLimit); err != nil {
		return nil, err
	}
	if f.SinceSeq, f.Since, err = flow.ParseBound("since", c.query("since")); err != nil {
		return nil, err
	}
	if f.UntilSeq, f.Until, err = flow.ParseBound("until", c.query("until")); err != nil {
		return nil, err
	}
	if err := c.logAt(f); err != nil {
		return nil, err
	}
	if v := c.query("before"); v != "" {
		before, err := strconv.ParseUint(v, 10, 64)
		if err != nil || before == 0 {
			return nil, invalid("before=%q: must be a seq (1 or more)", v)
		}
		if before == 1 {
			return nil, nil
		}
		if f.UntilSeq == 0 || before-1 < f.UntilSeq {
			f.UntilSeq = before - 1
		}
	}
	return f, nil
}

// logAt ends the log at ?at=POINT: a seq, a checkpoint's seq, or a time.
func (c *call) logAt(f *flow.Filter) error {
	if !c.r.URL.Query().Has("at") {
		return nil
	}
	p, err := ParsePoint(c.query("at"))
	if err != nil || p == Head {
		return err
	}
	switch {
	case p.Checkpoint != "":
		cp, err := c.eng.Checkpoint(c.project, p.Checkpoint)
		if err != nil {
			return err
		}
		p.Seq = cp.AtSeq
	case !p.Time.IsZero():
		if f.Until.IsZero() || p.Time.Before(f.Until) {
			f.Until = p.Time
		}
		return nil
	}
	if f.UntilSeq == 0 || p.Seq < f.UntilSeq {
		f.UntilSeq = p.Seq
	}
	return nil
}
