package webui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// taskView is the task page's data: digest's report of the task (what
// `flowctl report T` is made of) and what the page adds. It leaves out
// the task's dependents: finding them walks every task of the project
// (flow.Engine.TaskDeps), which the graph page shows instead.
type taskView struct {
	Report   *digest.TaskReport
	Task     *projection.Task
	Card     card
	Context  []*ctxNode
	Notes    []digest.ReportNote
	Memories []digest.ReportNote
	Moves    []string // the statuses a move may go to (the engine decides)
	Timeline []digest.ReportEvent
	Children []*projection.Task // its subtasks, in id order
	Progress int                // flow.Progress of the task
}

func (u *ui) taskPage(rq *request) error {
	pg := rq.page
	id := rq.r.PathValue("id")
	pg.Name, pg.Title = "task", id+" · "+rq.project
	rep, err := digest.ReportTask(rq.eng, rq.project, id)
	if err != nil {
		return err
	}
	t := rep.Task
	pg.Title = t.ID + " " + t.Title
	v := &taskView{Report: rep, Task: t, Card: cardOf(t, rq.eng.Now())}
	if v.Children, err = rq.eng.Children(rq.project, t.ID); err != nil {
		return err
	}
	v.Progress = flow.Progress(t, v.Children)
	hist, err := rq.base.ContextHistory(rq.project, t.ID, "")
	if err != nil {
		return err
	}
	if v.Context, err = contextTree(t.Context, upTo(hist, pg.AtSeq)); err != nil {
		return err
	}
	for _, n := range rep.Notes {
		if n.Kind == flow.NoteKindMemory {
			v.Memories = append(v.Memories, n)
		} else {
			v.Notes = append(v.Notes, n)
		}
	}
	for i := len(rep.Timeline) - 1; i >= 0; i-- {
		v.Timeline = append(v.Timeline, rep.Timeline[i])
	}
	for _, s := range statuses {
		if s != t.Status {
			v.Moves = append(v.Moves, s)
		}
	}
	pg.Data = v
	return nil
}

// upTo is the entries of h up to seq: the history a view at seq has.
func upTo(h []flow.ContextEntry, seq uint64) []flow.ContextEntry {
	out := h[:0:0]
	for _, e := range h {
		if e.Seq <= seq {
			out = append(out, e)
		}
	}
	return out
}

// ctxNode is one member of a context: a key (or array index) with its
// value, as a tree. History is set on the top-level keys.
type ctxNode struct {
	Key      string
	Path     string // "a.b.0": an id for the page
	Kind     string // object, array, string, number, bool, null
	Value    string // a scalar's JSON text (a string's text, unquoted)
	Children []*ctxNode
	History  []flow.ContextEntry
}

// Leaf reports whether the node has no members to open.
func (n *ctxNode) Leaf() bool { return n.Kind != "object" && n.Kind != "array" }

// contextTree reads a context object into its top-level keys, in the
// order it holds them, each with its history.
func contextTree(doc projection.JSON, hist []flow.ContextEntry) ([]*ctxNode, error) {
	if doc == "" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	root, err := readNode(dec, "", "")
	if err != nil {
		return nil, fmt.Errorf("webui: the context does not read as JSON: %w", err)
	}
	for _, n := range root.Children {
		for _, e := range hist {
			if e.Key == n.Key {
				n.History = append(n.History, e)
			}
		}
	}
	return root.Children, nil
}

// readNode reads one value from dec.
func readNode(dec *json.Decoder, key, path string) (*ctxNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	n := &ctxNode{Key: key, Path: path}
	switch v := tok.(type) {
	case json.Delim:
		n.Kind = "object"
		if v == '[' {
			n.Kind = "array"
		}
		for i := 0; dec.More(); i++ {
			k := strconv.Itoa(i)
			if n.Kind == "object" {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ = kt.(string)
			}
			child, err := readNode(dec, k, joinPath(path, k))
			if err != nil {
				return nil, err
			}
			n.Children = append(n.Children, child)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
	case string:
		n.Kind, n.Value = "string", v
	case json.Number:
		n.Kind, n.Value = "number", v.String()
	case bool:
		n.Kind, n.Value = "bool", strconv.FormatBool(v)
	case nil:
		n.Kind, n.Value = "null", "null"
	}
	return n, nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
