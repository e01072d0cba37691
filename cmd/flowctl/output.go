package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/view"
	"github.com/spf13/cobra"
)

// printer renders results in the chosen format: text for people, one JSON
// document, or JSON lines. Data goes to stdout; nothing else does.
type printer struct {
	w      *textWriter
	format string
	quiet  bool
}

func (a *app) printer() *printer {
	return &printer{w: &textWriter{bufio.NewWriter(a.stdout), a.disp}, format: a.g.output, quiet: a.g.quiet}
}

// one prints a single result: as JSON (an engine entity in the shape of
// the view layer), or as text through the text func.
func (p *printer) one(v any, text func(w io.Writer)) error {
	if p.format == "text" {
		text(p.w)
	} else if err := p.json(view.Of(v)); err != nil {
		return err
	}
	return p.w.Flush()
}

func (p *printer) json(v any) error {
	enc := json.NewEncoder(p.w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// list streams items: a JSON array (built as it goes), JSON lines, or
// text lines. Call end once after the last item.
type list struct {
	p *printer
	n int
}

func (p *printer) list() *list { return &list{p: p} }

func (l *list) add(v any, text func(w io.Writer)) error {
	p := l.p
	v = view.Of(v)
	switch p.format {
	case "text":
		text(p.w)
		return nil
	case "jsonl":
		return p.json(v)
	}
	sep := ",\n"
	if l.n == 0 {
		sep = "[\n"
	}
	l.n++
	b, err := marshalJSON(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(p.w, "%s%s", sep, b)
	return err
}

// marshalJSON is view.Marshal: the JSON every front door writes.
func marshalJSON(v any) ([]byte, error) { return view.Marshal(v) }

func (l *list) end() error {
	switch {
	case l.p.format != "json":
	case l.n == 0:
		fmt.Fprint(l.p.w, "[]\n")
	default:
		fmt.Fprint(l.p.w, "\n]\n")
	}
	return l.p.w.Flush()
}

// printList prints a list: a table for people (text), a JSON array with
// -o json (never null), one object per line with -o jsonl.
func printList[T any](p *printer, items []T, text func(w io.Writer)) error {
	if p.format == "text" {
		return p.one(nil, text)
	}
	l := p.list()
	for _, it := range items {
		if err := l.add(it, nil); err != nil {
			return err
		}
	}
	return l.end()
}

// page prints a list as the engine walks it (the Each functions): with
// -o json or jsonl each item is encoded as it comes, so nothing holds the
// list; as text each item leaves its table row (strings) and the table is
// written at the end, its columns as wide as their widest cell. With a
// limit (0: none) the walk stops after that many items, and end says on
// stderr, unless -q, that more match.
type page struct {
	l      *list
	header string
	rows   [][]string
	limit  int
	n      int
	more   bool
	note   io.Writer // where "more match" goes; nil with -q
	noun   string    // what the items are, plural, for the note
}

// page starts a list of noun (plural) under a table header.
func (a *app) page(limit int, noun, header string) *page {
	pg := &page{l: a.printer().list(), header: header, limit: limit, noun: noun}
	if !a.g.quiet {
		pg.note = a.stderr
	}
	return pg
}

// add prints v, or keeps its table row; past the limit it notes that more
// match and returns flow.ErrStop to end the walk.
func (pg *page) add(v any, row func() []string) error {
	if pg.limit > 0 && pg.n == pg.limit {
		pg.more = true
		return flow.ErrStop
	}
	pg.n++
	if pg.l.p.format == "text" {
		pg.rows = append(pg.rows, row())
		return nil
	}
	return pg.l.add(v, nil)
}

// end writes the table (text) or closes the JSON array, and the note.
func (pg *page) end() error {
	if pg.l.p.format == "text" {
		table(pg.l.p.w, pg.header, pg.rows)
	}
	if err := pg.l.end(); err != nil {
		return err
	}
	if pg.more && pg.note != nil {
		fmt.Fprintf(pg.note, "flowctl: the first %d %s shown; more match (--limit 0 lists all)\n", pg.n, pg.noun)
	}
	return nil
}

// limitFlag adds --limit to a list command.
func limitFlag(cmd *cobra.Command, limit *int, noun string) {
	cmd.Flags().IntVar(limit, "limit", 0, "list at most N "+noun+", the first by id (0: all)")
}

// checkLimit refuses a negative --limit.
func checkLimit(limit int) error {
	if limit < 0 {
		return usageError{fmt.Errorf("--limit %d: must be 0 or more", limit)}
	}
	return nil
}
