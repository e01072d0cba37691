package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/pgstore"
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
			"being the only project, it is written down as current); --switch makes the new one current.",
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
		p, err := a.createProject(eng, flow.NewProject{Name: args[0], Description: desc, Write: wo.write()}, switchTo)
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
// would leave none selected. A database URL with no place for its current
// project (neither XDG_STATE_HOME nor HOME is set) refuses switchTo before
// anything is written, and writes nothing down.
func (a *app) createProject(eng *flow.Engine, in flow.NewProject, switchTo bool) (*projection.Project, error) {
	sel := a.selectionPath(eng.Path())
	if switchTo && sel == "" {
		return nil, errNoStateDir()
	}
	sole := ""
	if sel != "" {
		var err error
		if sole, err = soleUnselected(eng, sel); err != nil {
			return nil, err
		}
	}
	p, err := eng.CreateProject(in)
	switch {
	case err != nil:
		return nil, err
	case switchTo:
		err = a.selectProject(eng.Path(), p.Name)
	case sole != "" && sole != p.Name:
		err = a.selectProject(eng.Path(), sole)
	}
	return p, err
}

// soleUnselected is the store's only project when no project was selected
// with 'project switch' (the selection file sel does not exist, so that it
// is current for being the only one), else "".
func soleUnselected(eng *flow.Engine, sel string) (string, error) {
	if _, err := os.Stat(sel); !errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	all, err := eng.Projects()
	if err != nil || len(all) != 1 {
		return "", err
	}
	return all[0].Name, nil
}

// selectionPath is the file that names the current project of the store
// at dbPath: .flow/current beside a flow file; for a database URL, which
// has no file beside it and is shared by a team while the choice is each
// user's, a file under $XDG_STATE_HOME/flowctl/current/ (default
// ~/.local/state/flowctl/current/) named by stateName. "" when there is
// no such place (reading "" finds nothing: no project is selected).
func (a *app) selectionPath(dbPath string) string {
	if store.DriverName(dbPath) == store.PathDriver {
		return filepath.Join(filepath.Dir(dbPath), currentFile)
	}
	state := a.getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(state) { // the XDG spec ignores a relative path
		home := a.getenv("HOME")
		if !filepath.IsAbs(home) {
			return ""
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "flowctl", currentFile, stateName(dbPath))
}

// stateName names the current-project file of a database URL: the hex of
// the first 16 bytes of the SHA-256 of the URL as pgstore.Redact prints it,
// the password masked, so that a new password keeps the choice. Other
// spellings of the same database (parameters in another order, a host
// from PGHOST) are other names.
func stateName(dsn string) string {
	sum := sha256.Sum256([]byte(pgstore.Redact(dsn)))
	return hex.EncodeToString(sum[:16])
}

func errNoStateDir() error {
	return withHint(fmt.Errorf("%w: no place to keep the current project of a database URL: neither XDG_STATE_HOME nor HOME is set", flow.ErrInvalid),
		"set HOME or XDG_STATE_HOME, or pass --project or set FLOW_PROJECT")
}

// selectProject makes name the current project of the store at dbPath.
func (a *app) selectProject(dbPath, name string) error {
	sel := a.selectionPath(dbPath)
	if sel == "" {
		return errNoStateDir()
	}
	if store.DriverName(dbPath) != store.PathDriver {
		if err := os.MkdirAll(filepath.Dir(sel), 0o700); err != nil {
			return err
		}
	}
	return writeFileAtomic(sel, func(w io.Writer) error {
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
		Long: "switch records the current project in .flow/current next to the flow file; for a database\n" +
			"URL, in a file of this user's under $XDG_STATE_HOME/flowctl/current/ (default\n" +
			"~/.local/state/flowctl/current/). --project and FLOW_PROJECT still win over it.",
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
			if err := a.selectProject(eng.Path(), name); err != nil {
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
