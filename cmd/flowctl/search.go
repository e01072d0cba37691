package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

type searchOptions struct {
	at    atFlag
	limit int
	all   bool
}

func (a *app) searchCommand() *cobra.Command {
	var o searchOptions
	cmd := &cobra.Command{
		Use:   "search QUERY [--at POINT] [--limit N]",
		Short: "Find tasks, notes, memories, context values and exec commands by their words",
		Long: "search finds the task titles, descriptions and context values (the strings of the context),\n" +
			"the notes and memories and the exec commands that hold any word of QUERY, best first: BM25\n" +
			"over the words, a title weighing three times a description, a tie going to the newer event.\n" +
			"A word is a run of two or more letters or digits, matched whole and without case\n" +
			"('Parser' finds 'parser', not 'parsers'). Each hit is one field of one entity, with a snippet.\n" +
			"It searches the current project (--project, FLOW_PROJECT, 'project switch', or the only\n" +
			"one); --all, or no project chosen, searches every project. --at searches the project as it\n" +
			"stood at a point.\n" +
			"-o json prints {query, words, project, at, index, candidates, hits: [{project, kind, id,\n" +
			"task, title, field, snippet, score, seq, time}]}.",
		Example: "  flowctl search parser\n  flowctl search 'table-driven parser' --limit 5 -o json\n  flowctl search deploy --at C-1\n  flowctl search deploy --all",
		Args:    cobra.ExactArgs(1),
	}
	o.at.add(cmd)
	cmd.Flags().IntVar(&o.limit, "limit", flow.DefaultSearchLimit, "show at most N hits")
	cmd.Flags().BoolVar(&o.all, "all", false, "search every project")
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		switch {
		case o.limit <= 0:
			return usageError{fmt.Errorf("--limit %d: must be 1 or more", o.limit)}
		case o.all && o.at.set():
			return usageError{errors.New("--at searches one project as it stood at a point: not with --all")}
		case o.all && a.g.project != "":
			return usageError{errors.New("--all searches every project: not with --project")}
		}
		return a.runSearch(&o, args[0])
	})
	return cmd
}

func (a *app) runSearch(o *searchOptions, query string) (err error) {
	defer a.holdOutput(&err)()
	eng, err := a.open(true)
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	s := &session{eng: eng}
	if !o.all {
		s.project, err = a.currentProject(eng)
		if err != nil && (a.g.project != "" || o.at.set() || !errors.Is(err, flow.ErrInvalid)) {
			return err // a project named and not found, or --at without a project
		}
	}
	if err := o.at.view(s); err != nil {
		return err
	}
	res, err := s.eng.Search(flow.SearchQuery{Text: query, Project: s.project, Limit: o.limit})
	if err != nil {
		return err
	}
	return a.printer().one(res, func(w io.Writer) { writeSearch(w, res) })
}

// writeSearch prints the hits as a table: rank, score, entity, field and
// snippet.
func writeSearch(w io.Writer, res *flow.SearchResult) {
	if len(res.Hits) == 0 {
		fmt.Fprintf(w, "No match for %q.\n", res.Query)
		return
	}
	all := res.Project == ""
	rows := make([][]string, len(res.Hits))
	for i, h := range res.Hits {
		entity := h.ID
		if h.Kind == "note" {
			entity = "note@" + h.ID
			if h.Task != "" {
				entity += " (" + h.Task + ")"
			}
		} else if h.Kind == "exec" && h.Task != "" {
			entity += " (" + h.Task + ")"
		}
		if all {
			entity = h.Project + "/" + entity
		}
		rows[i] = []string{strconv.Itoa(i + 1), strconv.FormatFloat(h.Score, 'f', 2, 64), entity, h.Field, h.Snippet}
	}
	table(w, "#\tSCORE\tENTITY\tFIELD\tSNIPPET", rows)
}
