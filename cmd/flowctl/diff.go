package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) diffCommand() *cobra.Command {
	var limit int
	var cpuProfile string
	cmd := &cobra.Command{
		Use:   "diff A [B]",
		Short: "Show what changed in the project between two points, entity by entity",
		Long: "diff compares the project's state at point A with its state at point B (default HEAD) and\n" +
			"prints one line per entity that differs: '+' added, '-' removed, '~' changed with each field\n" +
			"as 'field from -> to' (context keys as context.KEY, steps as steps.ID).\nA point is " + pointHelp + ".\n" +
			"With --limit N it lists the first N changed entities (by kind, then id) and counts them all.",
		Example: "  flowctl diff C-1 HEAD\n  flowctl diff 40 52 -o json\n  flowctl diff 2026-11-22T09:00:00Z C-3\n  flowctl diff C-1 --limit 20",
		Args:    cobra.RangeArgs(1, 2),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			stop, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer stop()
			defer tuneGC(diffGCPercent, diffMemoryLimit)()
			from, err := parsePoint("A", args[0])
			if err != nil {
				return err
			}
			to := flow.Point{Time: endOfTime}
			if len(args) == 2 {
				if to, err = parsePoint("B", args[1]); err != nil {
					return err
				}
			}
			return a.withEngine(true, func(s *session) error {
				p := a.printer()
				w := &diffWriter{w: p.w, json: p.format != "text", limit: limit}
				w.held, _ = a.stdout.(*bytes.Buffer) // the output held until the engine closes (holdOutput)
				if err := digest.DiffEach(s.eng, s.project, from, to, limit, w.head, w.change); err != nil {
					return err
				}
				return w.end()
			})
		}),
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "list only the first N changed entities (0: all)")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the diff to this file")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	return cmd
}

// diffGCPercent and diffMemoryLimit are the collector's settings for a
// diff (GOGC and GOMEMLIMIT win): a far diff holds little (about 20 MiB
// at 10M events, the entities created between the points by id and
// title) but grows its heap from nothing, and Go's default collected it
// a few times on the way (markroot and suspendG: 13% of its CPU
// profile). At 10M events (diff HALF HEAD of a project, 89,808 changes,
// quiet, 4 alternating pairs) GOGC=400 took 30-40 ms wall instead of 50,
// at 78-84 MiB peak RSS instead of 83-98; the limit bounds a diff of many
// more changes.
const (
	diffGCPercent   = 400
	diffMemoryLimit = 64 << 20
)

// diffWriter prints a diff as it comes (digest.DiffEach): as text, a
// header with the seqs it compares and how many changes there are, then
// one line per changed entity (changeLine); as JSON, the document of the
// whole DiffResult (printer.one's), a change at a time, so that nothing
// holds the changes.
type diffWriter struct {
	w     *textWriter
	json  bool
	limit int
	d     *digest.DiffResult
	n     int
	buf   bytes.Buffer
	enc   *json.Encoder
	line  []byte
	held  *bytes.Buffer // where w's output is held, when it is; nil else
}

// Bytes a change's line takes about, as text and as JSON: the held
// output is grown once for the changes a diff lists (head), not doubled
// again and again.
const (
	changeTextSize = 40
	changeJSONSize = 72
)

// head writes what comes before the changes: the text header (how many
// are listed of how many), or the JSON document's opening up to its
// changes.
func (w *diffWriter) head(d *digest.DiffResult) error {
	w.d = d
	listed := d.Total
	if w.limit > 0 {
		listed = min(w.limit, d.Total)
	}
	if w.held != nil {
		size := changeTextSize
		if w.json {
			size = changeJSONSize
		}
		w.held.Grow(listed * size)
	}
	if !w.json {
		_, err := fmt.Fprintf(w.w, "%s from seq %d to seq %d: %s\n", printable(d.Project), d.From, d.To, changeCount(listed, d.Total))
		return err
	}
	w.enc = json.NewEncoder(&w.buf)
	w.enc.SetEscapeHTML(false)
	w.w.WriteString(`{"project":`)
	if err := w.value(d.Project); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w.w, `,"from":%d,"to":%d,"changes":[`, d.From, d.To)
	return err
}

// value writes v as the JSON encoder writes it (no HTML escapes).
func (w *diffWriter) value(v any) error {
	w.buf.Reset()
	if err := w.enc.Encode(v); err != nil {
		return err
	}
	_, err := w.w.Write(bytes.TrimSuffix(w.buf.Bytes(), []byte("\n")))
	return err
}

// change writes one change: its line (changeLine, coloured by its mark
// when the display has colour), or its JSON in the changes array.
func (w *diffWriter) change(c flow.Change) error {
	w.n++
	if w.json {
		if w.n > 1 {
			w.w.WriteByte(',')
		}
		if len(c.Fields) > 0 {
			return w.value(c)
		}
		w.line = appendChangeJSON(w.line[:0], c)
		_, err := w.w.Write(w.line)
		return err
	}
	w.line = appendChangeLine(w.line[:0], c)
	d := w.w.disp
	if d.color {
		_, err := fmt.Fprintln(w.w, d.paint(string(w.line), changeColors[string(w.line[:1])]))
		return err
	}
	w.line = append(w.line, '\n')
	_, err := w.w.Write(w.line)
	return err
}

// appendChangeJSON appends the JSON of a change with no fields (an
// entity added or removed: most of a far diff's) as value (the JSON
// encoder) writes it, byte for byte, without reflection: its kind, id
// and op, its title and world when set.
func appendChangeJSON(b []byte, c flow.Change) []byte {
	b = projection.AppendJSONString(append(b, `{"kind":`...), c.Kind)
	b = projection.AppendJSONString(append(b, `,"id":`...), c.ID)
	b = projection.AppendJSONString(append(b, `,"op":`...), c.Op)
	if c.Title != "" {
		b = projection.AppendJSONString(append(b, `,"title":`...), c.Title)
	}
	if c.World != "" {
		b = projection.AppendJSONString(append(b, `,"world":`...), c.World)
	}
	return append(b, '}')
}

// end closes the JSON document and flushes what is left.
func (w *diffWriter) end() error {
	if w.json {
		fmt.Fprintf(w.w, `],"total":%d,"truncated":%t}`+"\n", w.d.Total, w.d.Truncated)
	}
	return w.w.Flush()
}

// changeCount says how many changes there are, and how many of them are
// listed when not all: "no changes", "3 changes", "the first 20 of 17191
// changes".
func changeCount(listed, total int) string {
	switch {
	case total == 0:
		return "no changes"
	case listed < total:
		return fmt.Sprintf("the first %d of %s", listed, plural(uint64(total), "change"))
	}
	return plural(uint64(total), "change")
}

// writeChanges prints one line per changed entity.
func writeChanges(w io.Writer, changes []flow.Change) {
	d := displayOf(w)
	for _, c := range changes {
		line := changeLine(c)
		fmt.Fprintln(w, d.paint(line, changeColors[line[:1]]))
	}
}

// changeColors colour a change's line by its mark.
var changeColors = map[string]string{"+": sgrGreen, "-": sgrRed, "~": sgrYellow, "!": sgrRed + ";" + sgrBold}

// changeMarks mark an entity's line by what happened to it.
var changeMarks = map[string]string{flow.OpAdded: "+", flow.OpRemoved: "-", flow.OpChanged: "~"}

// changeLine is one entity's change as a line:
//
//	~ task T-2 write the tests: status done -> doing, context.branch main -> (none)
//	- task T-3 three
//	! exec X-1 go test: removed; the command ran and is not undone by a rollback
//
// '!' marks what happened in the world and stays done there (World).
func changeLine(c flow.Change) string { return string(appendChangeLine(nil, c)) }

// appendChangeLine appends changeLine(c) to b.
func appendChangeLine(b []byte, c flow.Change) []byte {
	mark := changeMarks[c.Op]
	if c.World != "" {
		mark = "!"
	}
	b = append(b, mark...)
	b = append(b, ' ')
	b = append(b, c.Kind...)
	b = append(b, ' ')
	b = append(b, c.ID...)
	if c.Title != "" {
		b = append(b, ' ')
		b = append(b, diffShort(printable(c.Title), 60)...)
	}
	if len(c.Fields) == 0 && c.World == "" {
		return b
	}
	var parts []string
	for _, f := range c.Fields {
		parts = append(parts, printable(f.Field)+" "+diffValue(f.From)+" -> "+diffValue(f.To))
	}
	detail := strings.Join(parts, ", ")
	if c.World != "" {
		if detail == "" {
			detail = c.Op
		}
		detail += "; " + c.World
	}
	if detail != "" {
		b = append(b, ": "...)
		b = append(b, detail...)
	}
	return b
}

// bareWord is a string value printed without quotes.
var bareWord = regexp.MustCompile(`^[\p{L}\p{N}_./:@#+=-]+$`)

// diffValue prints a field's value: a simple string bare (done), other
// strings and values as compact JSON, a missing value as (none), and a
// long one cut.
func diffValue(v json.RawMessage) string {
	if len(v) == 0 || string(v) == "null" {
		return "(none)"
	}
	var s string
	if json.Unmarshal(v, &s) == nil && bareWord.MatchString(s) && s != "->" {
		return diffShort(s, 60)
	}
	return diffShort(printable(compactJSON(v)), 60)
}

// compactJSON re-encodes v without HTML escapes and extra space.
func compactJSON(v json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return string(v)
	}
	b, err := marshalJSON(x)
	if err != nil {
		return string(v)
	}
	return string(b)
}

// diffShort cuts s to at most limit bytes, on a rune boundary, marking
// the cut with "...".
func diffShort(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
