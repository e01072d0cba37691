package main

import (
	"fmt"
	"io"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

// graphFormats are what graph --format prints.
var graphFormats = []string{"text", "mermaid", "dot", "json", "svg"}

func (a *app) graphCommand() *cobra.Command {
	var format string
	var at atFlag
	cmd := &cobra.Command{
		Use:   "graph [T]",
		Short: "Print the task dependency graph: as text, Mermaid, DOT, JSON or SVG",
		Long: "graph prints the project's task dependency graph, laid out in layers: a task's layer is the\n" +
			"longest chain of dependencies that leads to it (layer 0 depends on nothing). With a task id,\n" +
			"only that task and what it depends on and what depends on it, transitively. --format text\n" +
			"lists the layers, a task per line with what it depends on; mermaid is a Mermaid flowchart\n" +
			"with a class per status; dot a Graphviz digraph; svg a picture of the layout (nodes link to\n" +
			"/p/PROJECT/tasks/T, as in flowctl serve); json (or -o json) the nodes, edges and layout.\n" +
			"FLOW_TASK_ID is not used: without an argument the graph is the whole project's.",
		Example: "  flowctl graph\n  flowctl graph T-3 --format mermaid\n  flowctl graph --format svg > graph.svg\n" +
			"  flowctl graph --format dot | dot -Tpng > graph.png\n  flowctl graph --at C-1 -o json",
		Args: cobra.MaximumNArgs(1),
	}
	enumVar(cmd.Flags(), &format, "format", "", graphFormats, "text, mermaid, dot, json or svg (default: text, or json with -o json)")
	at.add(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		format, err := a.graphFormat(format)
		if err != nil {
			return err
		}
		root := ""
		if len(args) == 1 {
			if root, err = flow.ParseTaskID(args[0]); err != nil {
				return err
			}
		}
		return a.withEngine(true, func(s *session) error {
			if err := at.view(s); err != nil {
				return err
			}
			g, err := digest.ReadGraph(s.eng, s.project, nil, root)
			if err != nil {
				return err
			}
			return a.printer().one(g, func(w io.Writer) { io.WriteString(w, graphText(g, format)) })
		})
	})
	return cmd
}

// graphFormat picks what graph prints: --format when given, else text
// or, with -o json, JSON. --format json makes the output (errors too)
// JSON; a --format that -o contradicts is refused.
func (a *app) graphFormat(flag string) (string, error) {
	asJSON := a.g.output != "text"
	switch {
	case flag == "":
		return a.g.output, nil
	case a.g.outputSet && asJSON != (flag == "json"):
		return "", usageError{fmt.Errorf("--format %s and -o %s ask for two formats: give one", flag, a.g.output)}
	case flag == "json" && !asJSON:
		a.g.output = "json"
	}
	return flag, nil
}

// graphText renders g in a format other than JSON.
func graphText(g *digest.Graph, format string) string {
	switch format {
	case "mermaid":
		return g.Mermaid()
	case "dot":
		return g.DOT()
	case "svg":
		return g.SVG(digest.SVGOptions{Standalone: true})
	}
	return g.Text()
}
