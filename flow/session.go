package flow

import (
	"cmp"
	"slices"
	"time"

	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/store"
)

// Session is what the log holds of one session: the events appended by
// engines opened with Options.Session set to it.
type Session struct {
	Session   string    `json:"session"`
	Actor     string    `json:"actor"` // of its first event
	FirstSeq  uint64    `json:"first_seq"`
	LastSeq   uint64    `json:"last_seq"`
	FirstTime time.Time `json:"first_time"`
	LastTime  time.Time `json:"last_time"`
	Events    int       `json:"events"`
}

// Sessions lists every session of the log, the one whose last event is
// newest first. It reads the log index's session lists (and the log
// past them), or the whole log when the index is of another format.
func (e *Engine) Sessions() ([]Session, error) {
	var out []Session
	err := e.view(func(tx store.Tx) error {
		head, _ := tx.Head()
		through, ok, err := logidx.Through(tx)
		if err != nil {
			return err
		}
		byName := map[string]*Session{}
		if ok {
			lists, err := logidx.Sessions(tx)
			if err != nil {
				return err
			}
			for _, l := range lists {
				byName[l.Session] = &Session{Session: l.Session, FirstSeq: l.First, LastSeq: l.Last, Events: l.Events}
			}
		}
		from := through + 1
		if !ok {
			from = 1
		}
		if from <= head {
			err := tx.Replay(from, head, func(r *store.Record) error {
				if r.Session == "" {
					return nil
				}
				s := byName[r.Session]
				if s == nil {
					s = &Session{Session: r.Session, FirstSeq: r.Seq}
					byName[r.Session] = s
				}
				s.LastSeq, s.Events = r.Seq, s.Events+1
				return nil
			})
			if err != nil {
				return err
			}
		}
		for _, s := range byName {
			if err := sessionEnds(tx, s); err != nil {
				return err
			}
			out = append(out, *s)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Session) int {
		return cmp.Or(cmp.Compare(b.LastSeq, a.LastSeq), cmp.Compare(a.Session, b.Session))
	})
	return out, err
}

// sessionEnds fills the actor and the times of s from its first and last
// records.
func sessionEnds(tx store.Tx, s *Session) error {
	first, err := tx.Record(s.FirstSeq)
	if err != nil {
		return err
	}
	last, err := tx.Record(s.LastSeq)
	if err != nil {
		return err
	}
	if first == nil || last == nil {
		return &store.CorruptionError{Seq: s.LastSeq, Reason: "the log index lists a seq past the head (run 'flowctl rebuild')"}
	}
	s.Actor, s.FirstTime, s.LastTime = first.Actor, first.Time, last.Time
	return nil
}
