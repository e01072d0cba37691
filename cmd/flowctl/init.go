package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/pgstore"
	"github.com/spf13/cobra"
)

type initResult struct {
	Path           string `json:"path"`
	Created        bool   `json:"created"`
	Project        string `json:"project,omitempty"`
	ProjectCreated bool   `json:"project_created"`
}

func (a *app) initCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "init [--project NAME]",
		Short: "Create .flow/flow.db in the working directory (and a project)",
		Long: "init creates .flow/flow.db in the working directory, or the file named by --db or FLOW_DB.\n" +
			"Running it again is harmless. With --project it also creates that project if it is missing\n" +
			"and makes it the current one (see 'project switch').",
		Example: "  flowctl init\n  flowctl init --project website",
		Args:    cobra.NoArgs,
		RunE:    a.action(func(*cobra.Command, []string) error { return a.runInit() }),
	}
}

func (a *app) runInit() (err error) {
	path := filepath.Join(a.dir, flow.DefaultDir, flow.DefaultFile)
	url := a.g.db != "" && store.DriverName(a.g.db) != store.PathDriver
	if a.g.db != "" {
		path = a.abs(a.g.db)
	}
	if a.g.project != "" {
		if err := flow.ValidProjectName(a.g.project); err != nil {
			return err
		}
	}
	res := initResult{Path: path, Project: a.g.project}
	if url { // a database: its URL, without the password, and whether it has the schema yet
		path, res.Path = a.g.db, pgstore.Redact(a.g.db)
		if eng, err := flow.Open(path, flow.Options{ReadOnly: true, LockTimeout: a.g.lockTimeout}); err == nil {
			eng.Close()
		} else {
			res.Created = errors.Is(err, store.ErrNotExist)
		}
	} else {
		_, statErr := os.Stat(path)
		res.Created = errors.Is(statErr, os.ErrNotExist)
	}
	defer a.holdOutput(&err)()
	hooks, err := a.hooks()
	if err != nil {
		return err
	}
	eng, err := flow.Open(path, flow.Options{Create: true, LockTimeout: a.g.lockTimeout, Actor: a.actor(), Session: a.g.session, Hooks: hooks})
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	if a.g.project != "" {
		_, err := eng.CreateProject(flow.NewProject{Name: a.g.project})
		if err != nil && !errors.Is(err, flow.ErrExists) {
			return err
		}
		res.ProjectCreated = err == nil
		if url && a.selectionPath(path) == "" {
			// No place to keep the choice (no HOME): the only project is
			// current, or --project / FLOW_PROJECT names one.
		} else if err := a.selectProject(path, a.g.project); err != nil {
			return err
		}
	}
	return a.printer().one(res, func(w io.Writer) {
		if a.g.quiet {
			return
		}
		verb := "Reinitialized existing"
		if res.Created {
			verb = "Initialized empty"
		}
		what := "file"
		if url {
			what = "database"
		}
		fmt.Fprintf(w, "%s flowctl %s in %s\n", verb, what, res.Path)
		if res.ProjectCreated {
			fmt.Fprintf(w, "Created project %s\n", res.Project)
		} else if res.Project != "" {
			fmt.Fprintf(w, "Project %s already exists\n", res.Project)
		}
	})
}
