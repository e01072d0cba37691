package projection

import (
	"fmt"
	"strconv"
	"strings"
)

// Streams of the catalog.

// ProjectStream is the stream of a project's own events.
func ProjectStream(project string) string { return "project/" + project }

// PlanStream is the stream of plan id (P-n).
func PlanStream(project, id string) string { return "plan/" + project + "/" + id }

// TaskStream is the stream of task id (T-n): its steps, context, claims,
// notes, approvals and exec records too.
func TaskStream(project, id string) string { return "task/" + project + "/" + id }

// Stream kinds.
const (
	KindProject = "project"
	KindPlan    = "plan"
	KindTask    = "task"
)

// ParseStream splits a catalog stream into its kind, project and id.
func ParseStream(stream string) (kind, project, id string, ok bool) {
	var rest string
	switch { // the kinds by how often they come: this runs for every event folded
	case len(stream) >= 5 && stream[:5] == KindTask+"/":
		kind, rest = KindTask, stream[5:]
	case len(stream) >= 5 && stream[:5] == KindPlan+"/":
		kind, rest = KindPlan, stream[5:]
	case len(stream) >= 8 && stream[:8] == KindProject+"/":
		if strings.IndexByte(stream[8:], '/') >= 0 {
			return "", "", "", false
		}
		return KindProject, stream[8:], "", true
	default:
		return "", "", "", false
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 || strings.IndexByte(rest[i+1:], '/') >= 0 {
		return "", "", "", false
	}
	return kind, rest[:i], rest[i+1:], true
}

// Short id prefixes.
const (
	PrefixPlan       = "P"
	PrefixTask       = "T"
	PrefixApproval   = "A"
	PrefixExec       = "X"
	PrefixCheckpoint = "C"
)

// ShortID formats the n-th id of a kind: ShortID("T", 3) == "T-3".
func ShortID(prefix string, n int) string { return prefix + "-" + strconv.Itoa(n) }

// IDNumber parses "T-3" with prefix "T" into 3.
func IDNumber(prefix, id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, prefix+"-")
	if !ok || rest == "" || rest[0] == '0' || len(rest) > 9 {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// StepID formats step m of task "T-n": "T-n.m".
func StepID(task string, m int) string { return fmt.Sprintf("%s.%d", task, m) }

// SplitStepID splits "T-3.2" into "T-3" and 2.
func SplitStepID(id string) (task string, m int, ok bool) {
	i := strings.LastIndexByte(id, '.')
	if i < 0 {
		return "", 0, false
	}
	task, num := id[:i], id[i+1:]
	if _, ok := IDNumber(PrefixTask, task); !ok || num == "" || num[0] == '0' || len(num) > 9 {
		return "", 0, false
	}
	m, err := strconv.Atoi(num)
	return task, m, err == nil && m > 0
}

// CompareIDs orders short ids: by prefix, then by number (T-2 before
// T-10), then as strings.
func CompareIDs(a, b string) int {
	pa, na := splitID(a)
	pb, nb := splitID(b)
	if c := strings.Compare(pa, pb); c != 0 {
		return c
	}
	if na != nb {
		return na - nb
	}
	return strings.Compare(a, b)
}

func splitID(id string) (string, int) {
	prefix, num, _ := strings.Cut(id, "-")
	n, _ := strconv.Atoi(num)
	return prefix, n
}

// CompareTaskIDs orders task ids by number.
var CompareTaskIDs = CompareIDs
