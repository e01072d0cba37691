package flow

import (
	"fmt"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/projection"
)

// ParseDue reads a due date: an RFC 3339 time, a date (2026-12-01,
// midnight UTC), or a time relative to now,
// +N followed by m (minutes), h (hours), d (days) or w (weeks), as in +3d;
// "" is none (it clears a due date). A date in the past is allowed (a task
// can be entered late). ErrInvalid for anything else.
func ParseDue(s string, now time.Time) (projection.Time, error) {
	if s == "" {
		return 0, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return projection.TimeOf(t), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return projection.TimeOf(t), nil // midnight UTC
	}
	if len(s) >= 3 && s[0] == '+' {
		unit, ok := dueUnits[s[len(s)-1]]
		n, err := strconv.Atoi(s[1 : len(s)-1])
		if ok && err == nil && n >= 0 && n <= maxDueUnits && s[1] != '+' && s[1] != '-' {
			return projection.TimeOf(now.Add(time.Duration(n) * unit)), nil
		}
	}
	return 0, fmt.Errorf("%w: due %q: give an RFC 3339 time (2026-12-01T17:00:00Z) or +N with m, h, d or w (+3d)", ErrInvalid, s)
}

var dueUnits = map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}

// maxDueUnits bounds N in +N: 100 years of weeks fits a time.Duration.
const maxDueUnits = 5200

// Overdue reports whether t is past its due date at now and still open
// (neither done nor cancelled).
func Overdue(t *projection.Task, now time.Time) bool {
	return t.Due != 0 && t.Due.Std().Before(now) && t.Status != projection.StatusDone && t.Status != projection.StatusCancelled
}
