package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/spf13/cobra"
)

// watchOptions are the flags of watch.
type watchOptions struct {
	format             string
	since              string
	stream, typ, actor string
	session            string
}

func (a *app) watchCommand() *cobra.Command {
	var o watchOptions
	cmd := &cobra.Command{
		Use:   "watch [--format text|jsonl|mcp|mcp-full] [--since SEQ]",
		Short: "Follow new events as any process appends them",
		Long: "watch prints each new event as soon as any process appends it, until interrupted (exit 0).\n" +
			"It opens the file read-only for each poll (every 200 ms) and closes it right after, so writers\n" +
			"never wait for it; when a writer holds the file, it waits and tries again. On PostgreSQL it\n" +
			"listens (LISTEN/NOTIFY) and reads as soon as an append commits, and polls every second too.\n" +
			"--since replays from a seq (or an RFC 3339 time) first; without it only the events appended\n" +
			"after watch started are shown (the head is read once at the start), each once.\n" +
			"--format text prints log's lines, jsonl one event per line, and mcp per event the seed's\n" +
			"stdout protocol: one line 'MCP::<name> {json}' (step_start, step_done, step_failed,\n" +
			"need_approval, approval_decided, task_start, task_done, checkpoint, note, exec, ...; a\n" +
			"compact payload of ids, title, pct and msg) and one line for people, each at most 200 bytes,\n" +
			"flushed at once; mcp-full prints 'MCP::<type> {the whole event}' and the line for people.\n" +
			"--project (or FLOW_PROJECT), --stream, --type, --actor and --session filter as in log.",
		Example: "  flowctl watch\n  flowctl watch --format mcp\n  flowctl watch --session s-42 --format mcp-full\n  flowctl watch --since 1 --format jsonl | jq -c .data\n  flowctl watch --type 'task.*'",
		Args:    cobra.NoArgs,
	}
	fs := cmd.Flags()
	enumVar(fs, &o.format, "format", "", watchFormats, "text, jsonl, mcp or mcp-full (default: text, or jsonl with -o jsonl)")
	fs.StringVar(&o.since, "since", "", "replay from this seq, or this RFC 3339 time, first (default: only new events)")
	fs.StringVar(&o.stream, "stream", "", "only events of this stream (e.g. project/website)")
	fs.Var(typePattern{&o.typ}, "type", "only events of this type; a trailing * matches a prefix (task.*)")
	fs.StringVar(&o.actor, "actor", "", "only events by this actor")
	fs.StringVar(&o.session, "session", "", "only events of this session")
	cmd.RunE = a.action(func(cmd *cobra.Command, _ []string) error { return a.runWatch(cmd.Context(), &o) })
	return cmd
}

func (a *app) runWatch(ctx context.Context, o *watchOptions) error {
	format, err := a.followFormat(o.format)
	if err != nil {
		return err
	}
	f := flow.Filter{Stream: o.stream, Type: o.typ, Actor: o.actor, Session: o.session, Project: a.g.project}
	if f.SinceSeq, f.Since, err = seqOrTime("--since", o.since); err != nil {
		return err
	}
	return a.follow(ctx, f, o.since == "", format)
}

// followFormat picks how followed events are printed: --format when
// given (watch; its flag takes only text, jsonl or mcp), else from -o.
// -o json is refused: it prints one document, and a followed log never
// ends. An -o that --format contradicts is refused too.
func (a *app) followFormat(flag string) (string, error) {
	switch {
	case flag != "" && a.g.outputSet && a.g.output != flag:
		return "", usageError{fmt.Errorf("--format %s and -o %s ask for two formats: give one", flag, a.g.output)}
	case flag != "":
		return flag, nil
	case a.g.output == "json":
		return "", usageError{errors.New("-o json prints one document, and a followed log never ends: use -o jsonl")}
	}
	return a.g.output, nil // text or jsonl
}

// follow prints the events that match f as they are appended, until ctx
// is cancelled (SIGINT, SIGTERM), which is a clean end. With onlyNew it
// starts at the head; otherwise it first prints what is there, as log
// does. watch and log --follow share it.
func (a *app) follow(ctx context.Context, f flow.Filter, onlyNew bool, format string) error {
	path, err := a.dbPath()
	if err != nil {
		return err
	}
	out := &eventPrinter{w: bufio.NewWriter(a.stdout), format: format}
	f.Raw = format == "mcp" || format == "mcp-full" // Describe needs the payload
	opts := flow.FollowOptions{Options: flow.Options{LockTimeout: a.g.lockTimeout, Warn: a.warn}, New: onlyNew}
	err = flow.Follow(ctx, path, opts, f, out.print)
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil
	case errors.Is(err, store.ErrNotExist):
		return withHint(err, "run 'flowctl init' to create it")
	}
	return err
}

// eventPrinter writes followed events, each flushed as soon as it is
// written.
type eventPrinter struct {
	w      *bufio.Writer
	format string
}

func (p *eventPrinter) print(ev flow.Event) error {
	switch p.format {
	case "text":
		writeEventLine(p.w, ev)
	case "jsonl":
		if err := writeEventJSON(p.w, ev); err != nil {
			return err
		}
	case "mcp":
		if err := writeEventMCPCompact(p.w, ev); err != nil {
			return err
		}
	case "mcp-full":
		if err := writeEventMCP(p.w, ev); err != nil {
			return err
		}
	}
	return p.w.Flush()
}

func writeEventJSON(w io.Writer, ev flow.Event) error {
	ev.Raw = nil
	b, err := marshalJSON(ev)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeEventMCP writes the seeds' stdout protocol: "MCP::<type> {json}"
// and then one line for people (which starts with "#<seq>", never with
// "MCP::").
func writeEventMCP(w io.Writer, ev flow.Event) error {
	human := digest.Describe(ev)
	ev.Raw = nil
	b, err := marshalJSON(ev)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "MCP::%s %s\n%s\n", mcpEventName(ev.Type), b, human)
	return err
}

// mcpEventName makes an event type safe to put before the JSON: spaces
// and control characters (possible only in an imported event's type)
// become '_'. The JSON carries the type exactly.
func mcpEventName(typ string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return '_'
		}
		return r
	}, typ)
}
