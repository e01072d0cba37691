package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) projectCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "project", Short: "Create, list, switch, show and archive projects"}
	cmd.AddCommand(a.projectNewCommand(), a.projectLsCommand(), a.projectSwitchCommand(),
		a.projectShowCommand(), a.projectArchiveCommand(), a.projectSetCommand(), a.projectForkCommand())
	return cmd
}

func (a *app) projectNewCommand() *cobra.Command {
	var desc string
	var switchTo bool
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Create a project",
		Long: "new creates a project. The current project stays the current one (when it was current for\n" +
			"being the only project, it is written to .flow/current); --switch makes the new one current.",
		Example: "  flowctl project new website --description 'the new site'\n  flowctl project new api --switch",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&desc, "description", "", "what the project is about")
	cmd.Flags().BoolVar(&switchTo, "switch", false, "make the new project the current one")
	wo.addKeyFlag(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) (err error) {
		defer a.holdOutput(&err)()
		eng, err := a.open(false)
		if err != nil {
			return err
		}
		defer closeEngine(eng, &err)
		p, err := createProject(eng, flow.NewProject{Name: args[0], Description: desc, Write: wo.write()}, switchTo)
		if err != nil {
			return err
		}
		return a.printer().one(p, func(w io.Writer) {
			fmt.Fprintf(w, "Created project %s\n", p.Name)
			if switchTo {
				fmt.Fprintf(w, "Switched to project %s\n", p.Name)
			}
		})
	})
	return cmd
}

// createProject creates a project without changing which one is current,
// or making it the current one with switchTo. A project that was current
// for being the only one is written down as current before a second one
// would leave none selected.
func createProject(eng *flow.Engine, in flow.NewProject, switchTo bool) (*projection.Project, error) {
	sole, err := soleUnselected(eng)
	if err != nil {
		return nil, err
	}
	p, err := eng.CreateProject(in)
	switch {
	case err != nil:
		return nil, err
	case switchTo:
		err = selectProject(eng.Path(), p.Name)
	case sole != "" && sole != p.Name:
		err = selectProject(eng.Path(), sole)
	}
	return p, err
}

// soleUnselected is the file's only project when no project was selected
// with 'project switch' (so that it is current for being the only one),
// else "".
func soleUnselected(eng *flow.Engine) (string, error) {
	if _, err := os.Stat(selectionPath(eng.Path())); !errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	all, err := eng.Projects()
	if err != nil || len(all) != 1 {
		return "", err
	}
	return all[0].Name, nil
}

// selectionPath is the file that names the current project: .flow/current
// beside the flow file at dbPath; "" for a database URL, which has no file
// beside it (reading "" finds nothing: no project is selected).
func selectionPath(dbPath string) string {
	if store.DriverName(dbPath) != store.PathDriver {
		return ""
	}
	return filepath.Join(filepath.Dir(dbPath), currentFile)
}

// selectProject makes name the current project of the flow file at dbPath.
func selectProject(dbPath, name string) error {
	if selectionPath(dbPath) == "" {
		return fmt.Errorf("%w: a database URL has no file beside it to keep the current project in: pass --project or set FLOW_PROJECT", flow.ErrInvalid)
	}
	return writeFileAtomic(selectionPath(dbPath), func(w io.Writer) error {
		_, err := io.WriteString(w, name+"\n")
		return err
	})
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
			if err := selectProject(eng.Path(), name); err != nil {
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
	settings := flow.ProjectSettings(p)
	for _, k := range flow.SettingKeys() {
		fmt.Fprintf(w, "%s: %s\n", k, settings[k])
	}
	if o := p.Origin; o != nil {
		fmt.Fprintf(w, "forked from %s at seq %d (chain hash %s)\n", printable(o.Project), o.Seq, o.Hash)
	}
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
