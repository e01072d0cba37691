package flow

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Point names a point in a project's history: a seq, a checkpoint, or a
// time (the last event at or before it).
type Point struct {
	Seq        uint64
	Checkpoint string // C-n
	Time       time.Time
}

// ParsePoint reads SEQ, C-n or an RFC 3339 time.
func ParsePoint(s string) (Point, error) {
	s = strings.TrimSpace(s)
	if seq, err := strconv.ParseUint(s, 10, 64); err == nil {
		return Point{Seq: seq}, nil
	}
	if id, err := parseShortID(projection.PrefixCheckpoint, "checkpoint", s); err == nil && strings.ContainsRune(s, '-') {
		return Point{Checkpoint: id}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return Point{Time: t}, nil
	}
	return Point{}, fmt.Errorf("%w: %q is not a point: give a seq (42), a checkpoint (C-1) or an RFC 3339 time", ErrInvalid, s)
}

func (p Point) String() string {
	switch {
	case p.Checkpoint != "":
		return p.Checkpoint
	case !p.Time.IsZero():
		return p.Time.Format(time.RFC3339Nano)
	}
	return strconv.FormatUint(p.Seq, 10)
}

// resolvePoint turns p into a seq of the log, for project (checkpoints
// are per project). A seq past the head is ErrInvalid, an unknown
// checkpoint ErrNotFound; a time before the first event is seq 0, the
// empty state.
func resolvePoint(tx store.Tx, src projection.Store, project string, p Point) (uint64, error) {
	head, _ := tx.Head()
	switch {
	case p.Checkpoint != "":
		c, err := src.Checkpoint(project, p.Checkpoint)
		if err == nil && c == nil {
			err = fmt.Errorf("%w: checkpoint %s in project %s", ErrNotFound, p.Checkpoint, project)
		}
		if err != nil {
			return 0, err
		}
		return c.AtSeq, nil
	case !p.Time.IsZero():
		return history.SeqAtTime(tx, head, p.Time)
	case p.Seq > head:
		return 0, fmt.Errorf("%w: seq %d is past the head (%d)", ErrInvalid, p.Seq, head)
	}
	return p.Seq, nil
}

// ParseBound reads a log bound given as a seq or an RFC 3339 time (a
// Filter's SinceSeq or Since, UntilSeq or Until); "" is no bound. name
// (a flag or a query parameter) starts the error, which is ErrInvalid.
func ParseBound(name, s string) (seq uint64, t time.Time, err error) {
	if s == "" {
		return 0, time.Time{}, nil
	}
	if seq, err := strconv.ParseUint(s, 10, 64); err == nil {
		return seq, time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return 0, t, nil
	}
	return 0, time.Time{}, fmt.Errorf("%w: %s %q: give a seq (42) or an RFC 3339 time (2026-11-22T10:00:00Z)", ErrInvalid, name, s)
}
