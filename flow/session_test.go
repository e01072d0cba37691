package flow

import (
	"fmt"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/logidx"
	"pgregory.net/rapid"
)

// TestEngine_SessionFilter: for any history written by engines of a few
// sessions (and none), the session filter of the log, oldest first and
// newest first with a limit, equals the whole log filtered by session,
// and Sessions equals the log grouped by session, with the log index and
// without it.
func TestEngine_SessionFilter(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := mustOpen(t)
		sessions := []string{"", "s1", "s2", "agent-7"}
		as := func(s string) *Engine {
			v := *e
			v.opts.Session = s
			return &v
		}
		if _, err := as("s1").CreateProject(NewProject{Name: "p"}); err != nil {
			rt.Fatal(err)
		}
		for i := range rapid.IntRange(0, 30).Draw(rt, "events") {
			s := rapid.SampledFrom(sessions).Draw(rt, fmt.Sprint("session", i))
			if _, err := as(s).AddNote(NewNote{Project: "p", Text: fmt.Sprint("n", i)}); err != nil {
				rt.Fatal(err)
			}
		}
		all := collect(t, e, Filter{})
		for _, s := range sessions[1:] {
			var want []uint64
			for _, ev := range all {
				if ev.Session == s {
					want = append(want, ev.Seq)
				}
			}
			if got := seqs(collect(t, e, Filter{Session: s})); !slices.Equal(got, want) {
				rt.Fatalf("session %s: %v, want %v", s, got, want)
			}
			limit := rapid.IntRange(1, 5).Draw(rt, "limit")
			if got, w := seqs(collect(t, e, Filter{Session: s, Limit: limit})), want[max(0, len(want)-limit):]; !slices.Equal(got, w) {
				rt.Fatalf("session %s limit %d: %v, want %v", s, limit, got, w)
			}
		}
		want := sessionsOf(all)
		got, err := e.Sessions()
		if err != nil {
			rt.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			rt.Fatalf("Sessions = %+v\nwant %+v", got, want)
		}
		noIndex(rt, e)
		if got, err = e.Sessions(); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			rt.Fatalf("Sessions without the index = %+v (%v)\nwant %+v", got, err, want)
		}
		if err := e.log.Update(logidx.Rebuild); err != nil {
			rt.Fatal(err)
		}
	})
}

// sessionsOf groups events by session, as Sessions lists them.
func sessionsOf(all []Event) []Session {
	var out []Session
	at := map[string]int{}
	for _, ev := range all {
		if ev.Session == "" {
			continue
		}
		i, ok := at[ev.Session]
		if !ok {
			i = len(out)
			at[ev.Session] = i
			out = append(out, Session{Session: ev.Session, Actor: ev.Actor, FirstSeq: ev.Seq, FirstTime: ev.Time})
		}
		out[i].LastSeq, out[i].LastTime, out[i].Events = ev.Seq, ev.Time, out[i].Events+1
	}
	slices.SortFunc(out, func(a, b Session) int { return int(b.LastSeq) - int(a.LastSeq) })
	return out
}
