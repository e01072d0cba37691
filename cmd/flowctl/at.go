package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// headPoint names the newest event, as a point.
const headPoint = "HEAD"

// endOfTime is a time after every event: the last event at or before it
// is the head, whatever the head is when the point is resolved.
var endOfTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// pointHelp says what a point is, for flag help.
const pointHelp = "a seq (42), a checkpoint (C-1), an RFC 3339 time (the last event at or before it) or HEAD"

// parsePoint reads a point given on the command line: a seq, a
// checkpoint (C-n), an RFC 3339 time or HEAD (the newest event). A bad
// point is invalid input (exit 2); what flag names the flag or argument.
func parsePoint(what, s string) (flow.Point, error) {
	if strings.EqualFold(strings.TrimSpace(s), headPoint) {
		return flow.Point{Time: endOfTime}, nil
	}
	p, err := flow.ParsePoint(s)
	if err != nil {
		return p, fmt.Errorf("%s: %w", what, err)
	}
	return p, nil
}

// atFlag is --at of the read commands: answer as the project stood at a
// point instead of now.
type atFlag struct {
	value string
	flag  *pflag.Flag
}

func (f *atFlag) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.value, "at", "", "answer as the project stood at this point: "+pointHelp)
	f.flag = cmd.Flags().Lookup("at")
}

// set reports whether --at was given.
func (f *atFlag) set() bool { return f.flag != nil && f.flag.Changed }

// view swaps the session's engine for a read-only view of its project at
// the point, when --at was given. A bad point is invalid input (exit 2),
// and so is a seq past the head; an unknown checkpoint, or a point before
// the project's first event, is not found (exit 3).
func (f *atFlag) view(s *session) error {
	if f.flag == nil || !f.flag.Changed {
		return nil
	}
	p, err := parsePoint("--at", f.value)
	if err != nil {
		return err
	}
	if err := s.eng.Begun(s.project, p); err != nil {
		return err
	}
	s.eng = s.eng.At(s.project, p)
	return nil
}
