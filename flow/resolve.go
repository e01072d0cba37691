package flow

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/projection"
)

// ParseTaskID accepts "T-3", "t-3" or "3" and returns "T-3".
func ParseTaskID(s string) (string, error) { return parseShortID(projection.PrefixTask, "task", s) }

// ParsePlanID accepts "P-2", "p-2" or "2".
func ParsePlanID(s string) (string, error) { return parseShortID(projection.PrefixPlan, "plan", s) }

// ParseApprovalID accepts "A-1", "a-1" or "1".
func ParseApprovalID(s string) (string, error) {
	return parseShortID(projection.PrefixApproval, "approval", s)
}

// ParseExecID accepts "X-4", "x-4" or "4".
func ParseExecID(s string) (string, error) {
	return parseShortID(projection.PrefixExec, "exec record", s)
}

func parseShortID(prefix, what, s string) (string, error) {
	if canonicalShortID(prefix, s) { // what parseShortIDFull would make of it: s itself
		return s, nil
	}
	return parseShortIDFull(prefix, what, s)
}

// parseShortIDFull is parseShortID without its fast path for an id in
// canonical form, which must answer as this does
// (TestParseIDs_CanonicalFastPathAnswersAsTheFullParse).
func parseShortIDFull(prefix, what, s string) (string, error) {
	num := strings.TrimSpace(s)
	if p, n, ok := strings.Cut(num, "-"); ok && strings.EqualFold(p, prefix) {
		num = n
	}
	id := projection.ShortID(prefix, 0)
	if n, err := strconv.Atoi(num); err == nil && n > 0 && strconv.Itoa(n) == num {
		id = projection.ShortID(prefix, n)
	}
	if _, ok := projection.IDNumber(prefix, id); !ok {
		return "", fmt.Errorf("%w: %q is not a %s id (like %s-1)", ErrInvalid, s, what, prefix)
	}
	return id, nil
}

// canonicalShortID reports whether s is already an id as ShortID writes
// it: prefix, "-" and a number > 0 in decimal digits, no leading zero.
func canonicalShortID(prefix, s string) bool {
	if len(s) <= len(prefix)+1 || s[:len(prefix)] != prefix || s[len(prefix)] != '-' {
		return false
	}
	return canonicalNumber(s[len(prefix)+1:])
}

// canonicalNumber reports whether s is a number > 0 as strconv.Itoa
// writes it, and short enough for IDNumber (9 digits).
func canonicalNumber(s string) bool {
	if s == "" || len(s) > 9 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseStepID accepts "T-3.2" (or "3.2") and returns the task and step ids.
func ParseStepID(s string) (task, step string, err error) {
	t, m, ok := strings.Cut(strings.TrimSpace(s), ".")
	if ok && canonicalShortID(projection.PrefixTask, t) && canonicalNumber(m) {
		return t, strings.TrimSpace(s), nil // what parseStepIDFull would make of it
	}
	return parseStepIDFull(s)
}

// parseStepIDFull is ParseStepID without its fast path, as
// parseShortIDFull is parseShortID's.
func parseStepIDFull(s string) (task, step string, err error) {
	t, m, ok := strings.Cut(strings.TrimSpace(s), ".")
	if ok {
		if task, err = parseShortIDFull(projection.PrefixTask, "task", t); err == nil {
			if n, e := strconv.Atoi(m); e == nil && n > 0 && strconv.Itoa(n) == m {
				return task, projection.StepID(task, n), nil
			}
		}
	}
	return "", "", fmt.Errorf("%w: %q is not a step id (like T-1.2)", ErrInvalid, s)
}

func mustTask(src projection.Store, project, id string) (*projection.Task, error) {
	t, err := src.Task(project, id)
	if err == nil && t == nil {
		err = fmt.Errorf("%w: task %s in project %s", ErrNotFound, id, project)
	}
	return t, err
}

func mustPlan(src projection.Store, project, id string) (*projection.Plan, error) {
	p, err := src.Plan(project, id)
	if err == nil && p == nil {
		err = fmt.Errorf("%w: plan %s in project %s", ErrNotFound, id, project)
	}
	return p, err
}

// ResolveProject finds a project by exact name or by a unique prefix of
// its name. An ambiguous prefix is ErrInvalid listing the candidates.
func (e *Engine) ResolveProject(name string) (string, error) {
	var out string
	err := e.read(func(src source) error {
		var err error
		out, err = resolveProject(src, name)
		return err
	})
	return out, err
}

func resolveProject(src source, name string) (string, error) {
	if p, err := src.Project(name); err != nil || p != nil {
		return name, err
	}
	all, err := src.Projects()
	if err != nil {
		return "", err
	}
	var matches []string
	for _, p := range all {
		if strings.HasPrefix(p.Name, name) && name != "" {
			matches = append(matches, p.Name)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("%w: project %q (see 'flowctl project ls')", ErrNotFound, name)
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("%w: project prefix %q is ambiguous: %s", ErrInvalid, name, strings.Join(matches, ", "))
}

// notFound is ErrNotFound for an entity of a project.
func notFound(what, id, project string) error {
	return fmt.Errorf("%w: %s %s in project %s", ErrNotFound, what, id, project)
}
