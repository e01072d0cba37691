package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// fixtureFile is a file holding only testdata/events.jsonl, so seqs 1-6:
//
//	1 project/alpha@1   project.created      alice alpha 2026-01-01T10:00:00Z
//	2 project/beta@1    project.created      bob   beta  2026-01-01T11:00:00Z
//	3 task/alpha/T-1@1  task.created         alice alpha 2026-01-02T09:00:00Z
//	4 task/alpha/T-1@2  task.status_changed  bob   alpha 2026-01-02T10:00:00Z
//	5 plan/beta/P-1@1   plan.created         bob   beta  2026-01-03T08:00:00Z
//	6 task/alpha/T-1@3  task.updated         alice alpha 2026-01-04T12:00:00.5Z
func fixtureFile(t testing.TB) *flowFile {
	t.Helper()
	f := mustInit(t)
	f.mustImportFixture()
	return f
}

func TestLog_Formats(t *testing.T) {
	t.Parallel()
	f := fixtureFile(t)

	t.Run("Text", func(t *testing.T) {
		stdout, stderr, code := f.run("", "log")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		golden(t, "log.golden", stdout)
	})

	t.Run("JSON", func(t *testing.T) {
		stdout := f.mustRun("", "log", "-o", "json")
		var raw []map[string]json.RawMessage
		if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
			t.Fatalf("not a JSON array: %v\n%s", err, stdout)
		}
		if len(raw) != 6 {
			t.Fatalf("got %d events, want 6", len(raw))
		}
		for _, ev := range raw {
			for _, field := range []string{"seq", "id", "stream", "version", "type", "schema", "time", "actor", "project", "data", "prev_hash", "hash"} {
				if _, ok := ev[field]; !ok {
					t.Errorf("event %s has no %q field", ev["seq"], field)
				}
			}
		}
		evs := decodeEvents(t, stdout)
		if got, want := seqsOf(evs), []uint64{1, 2, 3, 4, 5, 6}; !slices.Equal(got, want) {
			t.Errorf("seqs = %v, want %v", got, want)
		}
		ev := evs[5]
		if ev.ID != "019b7a4e-a400-7000-8000-000000000006" || ev.Stream != "task/alpha/T-1" || ev.Version != 3 ||
			ev.Type != "task.updated" || ev.Schema != 1 || ev.Actor != "alice" || ev.Project != "alpha" ||
			string(ev.Data) != `{"title":"write more tests"}` {
			t.Errorf("seq 6 = %+v, want the fixture's last event", ev)
		}
		if got, err := time.Parse(time.RFC3339Nano, ev.Time); err != nil || !got.Equal(time.Date(2026, 1, 4, 12, 0, 0, 5e8, time.UTC)) {
			t.Errorf("time = %q, want 2026-01-04T12:00:00.5Z in RFC 3339", ev.Time)
		}
		for i, ev := range evs {
			if i > 0 && ev.PrevHash != evs[i-1].Hash {
				t.Errorf("seq %d prev_hash %s, want the hash of seq %d %s", ev.Seq, ev.PrevHash, evs[i-1].Seq, evs[i-1].Hash)
			}
			if len(ev.Hash) != 64 {
				t.Errorf("seq %d hash %q is not 64 hex digits", ev.Seq, ev.Hash)
			}
		}
		if evs[0].PrevHash != strings.Repeat("0", 64) {
			t.Errorf("seq 1 prev_hash = %s, want zeros", evs[0].PrevHash)
		}
	})

	t.Run("JSONShorthand", func(t *testing.T) {
		if got, want := f.mustRun("", "log", "--json"), f.mustRun("", "log", "-o", "json"); got != want {
			t.Errorf("log --json = %s\nwant the output of -o json: %s", got, want)
		}
	})

	t.Run("JSONL", func(t *testing.T) {
		stdout := f.mustRun("", "log", "-o", "jsonl")
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		want := decodeEvents(t, f.mustRun("", "log", "-o", "json"))
		if len(lines) != len(want) {
			t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), stdout)
		}
		for i, line := range lines {
			var got event
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("line %d %q: %v", i+1, line, err)
			}
			if got.Seq != want[i].Seq || got.ID != want[i].ID || got.Hash != want[i].Hash || string(got.Data) != string(want[i].Data) {
				t.Errorf("line %d = %+v, want %+v", i+1, got, want[i])
			}
		}
	})
}

func TestLog_Empty(t *testing.T) {
	t.Parallel()
	empty := mustInit(t)
	full := fixtureFile(t)
	for _, tt := range []struct {
		name string
		f    *flowFile
		args []string
	}{
		{"EmptyFile", empty, nil},
		{"NoMatch", full, []string{"--type", "rollback.applied"}},
		{"UnknownProject", full, []string{"--project", "nope"}},
		{"UnknownStream", full, []string{"--stream", "task/nope/T-9"}},
		{"SincePastHead", full, []string{"--since", "99"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for format, want := range map[string]string{"text": "", "jsonl": ""} {
				stdout, stderr, code := tt.f.run("", append([]string{"log", "-o", format}, tt.args...)...)
				if code != 0 || stderr != "" || stdout != want {
					t.Errorf("-o %s: exit %d, stdout %q, stderr %q; want exit 0 and no output", format, code, stdout, stderr)
				}
			}
			stdout, stderr, code := tt.f.run("", append([]string{"log", "-o", "json"}, tt.args...)...)
			if code != 0 || stderr != "" {
				t.Fatalf("-o json: exit %d, stderr %q", code, stderr)
			}
			var got []json.RawMessage
			if err := json.Unmarshal([]byte(stdout), &got); err != nil || got == nil || len(got) != 0 {
				t.Errorf("-o json printed %q, want an empty JSON array", stdout)
			}
		})
	}
}

func TestLog_Filters(t *testing.T) {
	t.Parallel()
	f := fixtureFile(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want []uint64
	}{
		{"All", nil, nil, []uint64{1, 2, 3, 4, 5, 6}},
		{"TypeExact", nil, []string{"--type", "task.created"}, []uint64{3}},
		{"TypePrefix", nil, []string{"--type", "task.*"}, []uint64{3, 4, 6}},
		{"TypeStarMatchesAll", nil, []string{"--type", "*"}, []uint64{1, 2, 3, 4, 5, 6}},
		{"TypeNotInTheFile", nil, []string{"--type", "rollback.applied"}, []uint64{}},
		{"Stream", nil, []string{"--stream", "task/alpha/T-1"}, []uint64{3, 4, 6}},
		{"Actor", nil, []string{"--actor", "bob"}, []uint64{2, 4, 5}},
		{"Project", nil, []string{"--project", "beta"}, []uint64{2, 5}},
		{"ProjectFromEnv", map[string]string{"FLOW_PROJECT": "beta"}, nil, []uint64{2, 5}},
		{"ProjectFlagBeatsEnv", map[string]string{"FLOW_PROJECT": "beta"}, []string{"--project", "alpha"}, []uint64{1, 3, 4, 6}},
		{"SinceSeq", nil, []string{"--since", "3"}, []uint64{3, 4, 5, 6}},
		{"UntilSeq", nil, []string{"--until", "4"}, []uint64{1, 2, 3, 4}},
		{"SinceUntilSeq", nil, []string{"--since", "2", "--until", "4"}, []uint64{2, 3, 4}},
		{"SinceEqualsUntil", nil, []string{"--since", "5", "--until", "5"}, []uint64{5}},
		{"SinceAfterUntil", nil, []string{"--since", "5", "--until", "4"}, []uint64{}},
		{"UntilPastHead", nil, []string{"--until", "99"}, []uint64{1, 2, 3, 4, 5, 6}},
		{"SinceTime", nil, []string{"--since", "2026-01-02T00:00:00Z"}, []uint64{3, 4, 5, 6}},
		{"SinceTimeInclusive", nil, []string{"--since", "2026-01-02T09:00:00Z"}, []uint64{3, 4, 5, 6}},
		{"SinceTimeWithOffset", nil, []string{"--since", "2026-01-02T10:00:00+01:00"}, []uint64{3, 4, 5, 6}},
		{"UntilTimeInclusive", nil, []string{"--until", "2026-01-02T10:00:00Z"}, []uint64{1, 2, 3, 4}},
		{"UntilTimeNanos", nil, []string{"--until", "2026-01-04T12:00:00.499999999Z"}, []uint64{1, 2, 3, 4, 5}},
		{"SinceTimeUntilSeq", nil, []string{"--since", "2026-01-01T10:30:00Z", "--until", "3"}, []uint64{2, 3}},
		{"Limit", nil, []string{"--limit", "2"}, []uint64{5, 6}},
		{"LimitOne", nil, []string{"--limit", "1"}, []uint64{6}},
		{"LimitZeroIsAll", nil, []string{"--limit", "0"}, []uint64{1, 2, 3, 4, 5, 6}},
		{"LimitOverCount", nil, []string{"--limit", "100"}, []uint64{1, 2, 3, 4, 5, 6}},
		{"LimitAfterFilter", nil, []string{"--actor", "alice", "--limit", "2"}, []uint64{3, 6}},
		{"LimitWithUntil", nil, []string{"--until", "4", "--limit", "2"}, []uint64{3, 4}},
		{"StreamSinceSeq", nil, []string{"--stream", "task/alpha/T-1", "--since", "4"}, []uint64{4, 6}},
		{"StreamUntilSeq", nil, []string{"--stream", "task/alpha/T-1", "--until", "5"}, []uint64{3, 4}},
		{"ProjectSinceSeq", nil, []string{"--project", "alpha", "--since", "2"}, []uint64{3, 4, 6}},
		{"ProjectAndType", nil, []string{"--project", "alpha", "--type", "project.*"}, []uint64{1}},
		{"ProjectAndActorAndLimit", nil, []string{"--project", "alpha", "--actor", "bob", "--limit", "5"}, []uint64{4}},
		{"StreamOfOtherProject", nil, []string{"--stream", "task/alpha/T-1", "--project", "beta"}, []uint64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runCLIEnv(t, f.dir, tt.env, "", append([]string{"log", "-o", "json"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if got := seqsOf(decodeEvents(t, stdout)); !slices.Equal(got, tt.want) {
				t.Errorf("log %v: seqs %v, want %v", tt.args, got, tt.want)
			}
		})
	}
}

func TestLog_BadFilters(t *testing.T) {
	t.Parallel()
	f := mustInit(t)
	for _, tt := range []struct {
		name string
		args []string
		fact string
	}{
		{"SinceWord", []string{"--since", "yesterday"}, `"yesterday"`},
		{"UntilWord", []string{"--until", "later"}, `"later"`},
		{"SinceDateOnly", []string{"--since", "2026-01-02"}, `"2026-01-02"`},
		{"NegativeSeq", []string{"--since", "-3"}, `"-3"`},
		{"LimitNotANumber", []string{"--limit", "ten"}, `"ten"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := f.run("", append([]string{"log"}, tt.args...)...)
			wantError(t, stderr, code, 2, tt.fact)
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		})
	}

	t.Run("JSONErrorObject", func(t *testing.T) {
		t.Parallel()
		for _, format := range []string{"json", "jsonl"} {
			stdout, stderr, code := f.run("", "log", "-o", format, "--since", "yesterday")
			e := wantJSONError(t, stderr, code, 2, "invalid")
			if !strings.Contains(e.Error.Message, "--since") {
				t.Errorf("message %q does not name --since", e.Error.Message)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
		}
	})
}

// TestLog_Session: --session keeps the events written in that session
// (the global --session of the writes), with or without other filters.
func TestLog_Session(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "demo")
	f.mustRun("", "task", "add", "first", "--session", "s1")
	f.mustRun("", "task", "add", "second", "--session", "s2")
	f.mustRun("", "task", "add", "third", "--session", "s1")
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"--session", "s1"}, 2},
		{[]string{"--session", "s2"}, 1},
		{[]string{"--session", "s1", "--limit", "1"}, 1},
		{[]string{"--session", "s1", "--type", "task.created", "--project", "demo", "--limit", "5"}, 2},
		{[]string{"--session", "none"}, 0},
	} {
		events := decodeEvents(t, f.mustRun("", append([]string{"log", "-o", "json"}, tt.args...)...))
		if len(events) != tt.want {
			t.Errorf("log %v: %d events, want %d", tt.args, len(events), tt.want)
		}
	}
}
