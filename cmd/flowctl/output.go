package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/flowctl/flowctl/view"
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

// marshalJSON is json.Marshal without HTML escaping.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

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
