package projection

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// refParseStream is ParseStream as it was written first, kept as the
// reference of the one that replaced it.
func refParseStream(stream string) (kind, project, id string, ok bool) {
	kind, rest, ok := strings.Cut(stream, "/")
	if !ok {
		return "", "", "", false
	}
	project, id, hasID := strings.Cut(rest, "/")
	switch {
	case kind == KindProject && !hasID:
		return KindProject, project, "", true
	case (kind == KindPlan || kind == KindTask) && hasID && strings.IndexByte(id, '/') < 0:
		return kind, project, id, true
	}
	return "", "", "", false
}

func checkParseStream(t interface{ Fatalf(string, ...any) }, stream string) {
	k, p, id, ok := ParseStream(stream)
	wk, wp, wid, wok := refParseStream(stream)
	if k != wk || p != wp || id != wid || ok != wok {
		t.Fatalf("ParseStream(%q) = %q, %q, %q, %v; reference %q, %q, %q, %v", stream, k, p, id, ok, wk, wp, wid, wok)
	}
}

func TestParseStream_MatchesReference(t *testing.T) {
	for _, s := range []string{"", "/", "//", "task", "task/", "task/p", "task/p/", "task/p/T-1", "task//T-1", "task/p/T-1/x",
		"plan/p/P-1", "plan/p", "project/p", "project/", "project/p/x", "project", "projec/p", "tasks/p/T-1", "Task/p/T-1"} {
		checkParseStream(t, s)
	}
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOfN(rapid.SampledFrom([]string{"task", "plan", "project", "p", "", "T-1", "x/", "/", "proj/"}), 0, 4).Draw(t, "parts")
		checkParseStream(t, strings.Join(parts, rapid.SampledFrom([]string{"/", "", "//"}).Draw(t, "sep")))
	})
}

func FuzzParseStream_MatchesReference(f *testing.F) {
	f.Add("task/p/T-1")
	f.Add("project/p")
	f.Fuzz(func(t *testing.T, stream string) { checkParseStream(t, stream) })
}
