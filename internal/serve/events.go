package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/view"
)

// GET /api/v1/events?since=SEQ&project=P&type=GLOB: the events as a
// server-sent event stream, each as `id: SEQ`, `event: flow` and `data:`
// the event's JSON as `flowctl log -o json` prints it. Without since only
// new events come (as `watch`); Last-Event-ID, which a browser sends when
// it reconnects, resumes after that seq. The stream runs flow.Follow with
// the request's context, so it ends when the client goes.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	f, onlyNew, err := s.eventFilter(r)
	if err == nil && onlyNew {
		// A writer holding the file past the lock timeout leaves the start
		// to Follow's first poll, as before, rather than failing the
		// stream: a browser's EventSource gives up on an error answer.
		if seq, serr := s.nextSeq(r); serr == nil {
			f.SinceSeq, onlyNew = seq, false
		} else if !errors.Is(serr, store.ErrBusy) {
			err = serr
		}
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: %d\n: flowctl events\n\n", RetryMS)
	if rc.Flush() != nil {
		return
	}
	s.stream(r.Context(), w, rc, f, onlyNew)
}

// nextSeq is the seq the next event appended will have: a stream of only
// new events starts there, fixed before the client hears anything, so an
// event appended once the connection is answered is never taken for an
// old one (Follow's New would start wherever its first poll found the
// head, which may come later).
func (s *server) nextSeq(r *http.Request) (seq uint64, err error) {
	err = s.with(r, true, wholeFile, func(c *call) error {
		return c.eng.Read(func(rd *flow.Reader) error {
			seq = rd.Head() + 1
			return nil
		})
	})
	return seq, err
}

// stream runs flow.Follow and writes what it delivers, with a comment
// every keepAlive while nothing comes, until ctx ends or a write fails.
func (s *server) stream(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, f flow.Filter, onlyNew bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	evs := make(chan flow.Event)
	done := make(chan error, 1)
	opts := flow.FollowOptions{Options: s.cfg.Options, Interval: s.interval, New: onlyNew}
	opts.Cache, opts.Actor = s.cache, ""
	go func() {
		done <- flow.Follow(ctx, s.cfg.Path, opts, f, func(ev flow.Event) error {
			select {
			case evs <- ev:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	tick := time.NewTicker(s.keepAlive)
	defer tick.Stop()
	for {
		var err error
		select {
		case ev := <-evs:
			err = writeEvent(w, ev)
		case <-tick.C:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		case ferr := <-done:
			if ctx.Err() == nil && ferr != nil {
				writeStreamError(w, s, ferr)
			}
			return
		case <-ctx.Done():
			return
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// writeEvent writes one event as an SSE message.
func writeEvent(w http.ResponseWriter, ev flow.Event) error {
	ev.Raw = nil
	b, err := marshalJSON(view.Of(ev))
	if err != nil {
		return err
	}
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "id: %d\nevent: flow\n", ev.Seq)
	for _, line := range bytes.Split(b, []byte("\n")) {
		fmt.Fprintf(&msg, "data: %s\n", line)
	}
	msg.WriteString("\n")
	_, err = w.Write(msg.Bytes())
	return err
}

// writeStreamError ends a stream whose Follow failed with an `error`
// message holding the CLI's JSON error object.
func writeStreamError(w http.ResponseWriter, s *server, err error) {
	_, body := s.classify(err)
	b, _ := marshalJSON(map[string]errorBody{"error": body})
	fmt.Fprintf(w, "event: error\ndata: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// eventFilter reads the stream's query: since (a seq or an RFC 3339
// time), project (a unique prefix of a name), type (a type or a prefix
// ending in *), and the Last-Event-ID header, which wins over since.
func (s *server) eventFilter(r *http.Request) (flow.Filter, bool, error) {
	q := r.URL.Query()
	f := flow.Filter{Type: q.Get("type")}
	if f.Type != "" {
		if err := flow.CheckTypePattern(f.Type); err != nil {
			return f, false, invalid("type=%q: %v", f.Type, err)
		}
	}
	var err error
	if f.SinceSeq, f.Since, err = flow.ParseBound("since", q.Get("since")); err != nil {
		return f, false, err
	}
	onlyNew := !q.Has("since")
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		seq, err := strconv.ParseUint(id, 10, 64)
		if err != nil {
			return f, false, invalid("Last-Event-ID %q: must be an event's seq", id)
		}
		f.SinceSeq, f.Since, onlyNew = seq+1, time.Time{}, false
	}
	if p := q.Get("project"); p != "" {
		err := s.with(r, true, wholeFile, func(c *call) error {
			var err error
			f.Project, err = c.eng.ResolveProject(p)
			return err
		})
		if err != nil && !errors.Is(err, flow.ErrStop) {
			return f, false, err
		}
	}
	return f, onlyNew, nil
}
