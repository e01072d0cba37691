package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/view"
	"github.com/spf13/cobra"
)

type logOptions struct {
	stream, typ, actor, session string
	since, until                string
	limit                       int
	follow                      bool // log only: keep printing new events (see watch.go)
}

func (o *logOptions) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&o.stream, "stream", "", "only events of this stream (e.g. project/website)")
	fs.Var(typePattern{&o.typ}, "type", "only events of this type; a trailing * matches a prefix (task.*)")
	fs.StringVar(&o.actor, "actor", "", "only events by this actor")
	fs.StringVar(&o.session, "session", "", "only events of this session")
	fs.StringVar(&o.since, "since", "", "from this seq, or this RFC 3339 time, on")
	fs.StringVar(&o.until, "until", "", "up to this seq, or this RFC 3339 time")
	fs.IntVar(&o.limit, "limit", 0, "keep only the newest N matching events")
}

func (a *app) logCommand() *cobra.Command {
	var o logOptions
	cmd := &cobra.Command{
		Use:   "log [filters]",
		Short: "Show events, oldest first",
		Long: "log prints the events that match every filter, in seq order, oldest first.\n" +
			"--project (or FLOW_PROJECT) keeps one project's events.\n" +
			"With --limit N it reads newest first, over the index that fits the filters (stream,\n" +
			"type, actor, session, project), and stops at the Nth match: fast on any file size.\n" +
			"--follow then keeps printing new matching events as any process appends them, until\n" +
			"interrupted (exit 0), as watch does; it takes text or -o jsonl, and no --until.",
		Example: "  flowctl log\n  flowctl log --type 'task.*' --since 2026-11-01T00:00:00Z --limit 20\n  flowctl log --stream project/website -o json\n  flowctl log --follow --limit 10",
		Args:    cobra.NoArgs,
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing new events as they are appended (until interrupted)")
	cmd.RunE = a.action(func(cmd *cobra.Command, _ []string) error {
		if o.follow {
			return a.followLog(cmd.Context(), &o)
		}
		return a.runLog(&o)
	})
	return cmd
}

// filter turns the flags into a flow.Filter; bad values are usage errors.
func (o *logOptions) filter(project string) (flow.Filter, error) {
	f := flow.Filter{Stream: o.stream, Type: o.typ, Actor: o.actor, Session: o.session, Project: project, Limit: o.limit}
	if o.limit < 0 {
		return f, usageError{fmt.Errorf("--limit %d: must be 0 or more", o.limit)}
	}
	var err error
	if f.SinceSeq, f.Since, err = seqOrTime("--since", o.since); err != nil {
		return f, err
	}
	f.UntilSeq, f.Until, err = seqOrTime("--until", o.until)
	return f, err
}

// seqOrTime parses a bound given as a seq or an RFC 3339 time; a bad one
// is a usage error, answered with the command's --help.
func seqOrTime(flag, s string) (uint64, time.Time, error) {
	seq, t, err := flow.ParseBound(flag, s)
	if err != nil {
		return 0, time.Time{}, usageError{err}
	}
	return seq, t, nil
}

func (a *app) runLog(o *logOptions) (err error) {
	f, err := o.filter(a.g.project)
	if err != nil {
		return err
	}
	eng, err := a.open(true)
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	out := a.printer().list()
	err = eng.Events(f, func(ev flow.Event) error {
		return out.add(ev, func(w io.Writer) { writeEventLine(w, ev) })
	})
	if err != nil {
		return err
	}
	return out.end()
}

// followLog is log --follow: the normal output, then new events as they
// are appended (the loop is watch's).
func (a *app) followLog(ctx context.Context, o *logOptions) error {
	if o.until != "" {
		return usageError{errors.New("--until cannot be used with --follow: a followed log has no end")}
	}
	format, err := a.followFormat("")
	if err != nil {
		return err
	}
	f, err := o.filter(a.g.project)
	if err != nil {
		return err
	}
	return a.follow(ctx, f, false, format)
}

// writeEventLine prints one event as a line of text; an original time
// (occurred_at) goes before the payload.
func writeEventLine(w io.Writer, ev flow.Event) {
	d := displayOf(w)
	occurred := ""
	if ev.OccurredAt != nil {
		occurred = "occurred_at=" + ev.OccurredAt.Format(time.RFC3339) + " "
	}
	typ := d.paint(fmt.Sprintf("%-22s", printable(ev.Type)), eventColor(ev.Type))
	fmt.Fprintf(w, "%6d  %s  %-28s %s %-12s %s%s\n", ev.Seq, d.paint(ev.Time.Format(time.RFC3339), sgrDim),
		printable(ev.Stream)+"@"+strconv.FormatUint(ev.Version, 10), typ, printable(ev.Actor), occurred, ev.Data)
}

// printable is view.Printable: text from an imported event cannot move
// the cursor or recolour a terminal.
func printable(s string) string { return view.Printable(s) }
