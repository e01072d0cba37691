package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

// writeFamily prints a task's parent, children and progress (task show).
func writeFamily(w io.Writer, f *flow.Family) {
	if f.Task.Parent != "" {
		title := "(not there)"
		if f.Parent != nil {
			title = printable(f.Parent.Title)
		}
		fmt.Fprintf(w, "subtask of: %s  %s\n", f.Task.Parent, title)
	}
	if len(f.Children) == 0 {
		return
	}
	done := 0
	ids := make([]string, len(f.Children))
	for i, c := range f.Children {
		ids[i] = c.ID + " [" + c.Status + "]"
		if c.Status == projection.StatusDone {
			done++
		}
	}
	fmt.Fprintf(w, "subtasks: %s (%d of %d done, progress %d%%)\n", strings.Join(ids, ", "), done, len(f.Children), f.Progress)
}

// stepAttempt is a step's attempt for a table: "" before its first
// start, "attempt N" after.
func stepAttempt(s projection.Step) string {
	if s.Attempt == 0 {
		return "-"
	}
	return fmt.Sprintf("attempt %d", s.Attempt)
}

// writeTrees prints a forest with box-drawing lines, as tree(1) does: one
// task per line, its id, status, progress and title.
func writeTrees(w io.Writer, roots []*flow.TreeNode) {
	for _, r := range roots {
		fmt.Fprintln(w, treeLine(r))
		writeBranches(w, r.Children, "")
	}
}

func writeBranches(w io.Writer, nodes []*flow.TreeNode, indent string) {
	for i, n := range nodes {
		branch, next := "├── ", "│   "
		if i == len(nodes)-1 {
			branch, next = "└── ", "    "
		}
		fmt.Fprintln(w, indent+branch+treeLine(n))
		writeBranches(w, n.Children, indent+next)
	}
}

func treeLine(n *flow.TreeNode) string {
	line := fmt.Sprintf("%s [%s] %d%% %s", n.ID, n.Status, n.Progress, printable(n.Title))
	if n.Due != 0 {
		line += "  due " + fmtTime(n.Due)
	}
	switch {
	case n.Seen:
		line += "  (see above)"
	case n.Truncated:
		line += "  (…)"
	}
	return line
}

// printTrees prints a forest: text, a JSON array of nested nodes, or one
// root per line with -o jsonl.
func (a *app) printTrees(roots []*flow.TreeNode) error {
	return printList(a.printer(), roots, func(w io.Writer) {
		if len(roots) == 0 {
			fmt.Fprintln(w, "No tasks.")
			return
		}
		writeTrees(w, roots)
	})
}

func (a *app) depTreeCommand() *cobra.Command {
	var reverse bool
	var depth int
	var at atFlag
	cmd := &cobra.Command{
		Use:   "tree [T]",
		Short: "Print the tree of what a task depends on (--reverse: of what depends on it)",
		Long: "tree prints what T depends on, and what those depend on, down to --max-depth levels (0: all),\n" +
			"as a tree; --reverse prints what depends on T instead. A task met a second time is shown\n" +
			"again, marked (see above), and not expanded again; (…) marks a task --max-depth cut short.\n" +
			"-o json prints the root as nested objects: id, title, status, priority, progress, due, children.",
		Example: "  flowctl dep tree T-5\n  flowctl dep tree T-1 --reverse --max-depth 2 -o json",
		Args:    cobra.MaximumNArgs(1),
	}
	cmd.Flags().BoolVar(&reverse, "reverse", false, "the tasks that depend on T, transitively")
	cmd.Flags().IntVar(&depth, "max-depth", 0, "levels below T to show (0: all)")
	at.add(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		if depth < 0 {
			return usageError{fmt.Errorf("--max-depth %d: must be 0 (all) or more", depth)}
		}
		id, err := a.taskArg(args, 0)
		if err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error {
			if err := at.view(s); err != nil {
				return err
			}
			root, err := s.eng.DepTree(s.project, id, reverse, depth)
			if err != nil {
				return err
			}
			return a.printer().one(root, func(w io.Writer) { writeTrees(w, []*flow.TreeNode{root}) })
		})
	})
	return cmd
}
