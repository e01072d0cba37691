package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) projectCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "project", Short: "Create, list, switch, show and archive projects"}
	cmd.AddCommand(a.projectNewCommand(), a.projectLsCommand(), a.projectSwitchCommand(),
		a.projectShowCommand(), a.projectArchiveCommand())
	return cmd
}

func (a *app) projectNewCommand() *cobra.Command {
	var desc string
	var wo writeOpts
	cmd := &cobra.Command{
		Use:     "new NAME",
		Short:   "Create a project",
		Example: "  flowctl project new website --description 'the new site'",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&desc, "description", "", "what the project is about")
	wo.addKeyFlag(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) (err error) {
		defer a.holdOutput(&err)()
		eng, err := a.open(false)
		if err != nil {
			return err
		}
		defer closeEngine(eng, &err)
		p, err := eng.CreateProject(flow.NewProject{Name: args[0], Description: desc, Write: wo.write()})
		if err != nil {
			return err
		}
		return a.printer().one(p, func(w io.Writer) { fmt.Fprintf(w, "Created project %s\n", p.Name) })
	})
	return cmd
}

func (a *app) projectLsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "ls",
		Short:   "List projects",
		Example: "  flowctl project ls",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) (err error) {
			defer a.holdOutput(&err)()
			eng, err := a.open(true)
			if err != nil {
				return err
			}
			defer closeEngine(eng, &err)
			all, err := eng.Projects()
			if err != nil {
				return err
			}
			current, _ := a.currentProject(eng)
			return printList(a.printer(), all, func(w io.Writer) {
				rows := make([][]string, len(all))
				for i, p := range all {
					mark := " "
					if p.Name == current {
						mark = "*"
					}
					state := "open"
					if p.Archived {
						state = "archived"
					}
					rows[i] = []string{mark + " " + p.Name, state, fmt.Sprint(p.Counters.Tasks), p.Description}
				}
				table(w, "  NAME\tSTATE\tTASKS\tDESCRIPTION", rows)
			})
		}),
	}
}

func (a *app) projectSwitchCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "switch NAME",
		Short: "Make NAME the current project for commands run here",
		Long: "switch records the current project in .flow/current next to the flow file. --project and\n" +
			"FLOW_PROJECT still win over it.",
		Example: "  flowctl project switch website",
		Args:    cobra.ExactArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) (err error) {
			defer a.holdOutput(&err)()
			eng, err := a.open(true)
			if err != nil {
				return err
			}
			defer closeEngine(eng, &err)
			name, err := eng.ResolveProject(args[0])
			if err != nil {
				return err
			}
			if err := writeFileAtomic(filepath.Join(filepath.Dir(eng.Path()), currentFile), func(w io.Writer) error {
				_, err := io.WriteString(w, name+"\n")
				return err
			}); err != nil {
				return err
			}
			p, err := eng.Project(name)
			if err != nil {
				return err
			}
			return a.printer().one(p, func(w io.Writer) { fmt.Fprintf(w, "Switched to project %s\n", name) })
		}),
	}
}

func (a *app) projectShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "show [NAME]",
		Short:   "Show a project (the current one by default)",
		Example: "  flowctl project show website -o json",
		Args:    cobra.MaximumNArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			if len(args) == 1 {
				a.g.project = args[0]
			}
			return a.withEngine(true, func(s *session) error {
				p, err := s.eng.Project(s.project)
				if err != nil {
					return err
				}
				return a.printer().one(p, func(w io.Writer) { writeProject(w, p) })
			})
		}),
	}
}

func writeProject(w io.Writer, p *projection.Project) {
	state := "open"
	if p.Archived {
		state = "archived"
	}
	fmt.Fprintf(w, "%s  [%s]  v%d\n", printable(p.Name), state, p.Version)
	if p.Description != "" {
		fmt.Fprintf(w, "%s\n", printable(p.Description))
	}
	c := p.Counters
	fmt.Fprintf(w, "plans %d, tasks %d, approvals %d, exec records %d, checkpoints %d\n", c.Plans, c.Tasks, c.Approvals, c.Execs, c.Checkpoints)
	fmt.Fprintf(w, "created %s by %s\n", fmtTime(p.CreatedAt), printable(p.CreatedBy))
}

func (a *app) projectArchiveCommand() *cobra.Command {
	var reason string
	var wo writeOpts
	cmd := &cobra.Command{
		Use:     "archive NAME",
		Short:   "Archive a project: no new work, history kept",
		Example: "  flowctl project archive website --reason 'launched'",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		a.g.project = args[0]
		return a.withEngine(false, func(s *session) error {
			p, err := s.eng.ArchiveProject(flow.ArchiveProject{Name: s.project, Reason: reason, Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printer().one(p, func(w io.Writer) { fmt.Fprintf(w, "Archived project %s\n", p.Name) })
		})
	})
	return cmd
}

func fmtTime(t projection.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Std().Format("2006-01-02 15:04:05Z")
}
