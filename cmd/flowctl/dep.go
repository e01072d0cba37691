package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

func (a *app) depCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "dep", Short: "Add, remove and list task dependencies"}
	cmd.AddCommand(a.depChangeCommand("add"), a.depChangeCommand("rm"), a.depLsCommand(), a.depTreeCommand())
	return cmd
}

func (a *app) depChangeCommand(name string) *cobra.Command {
	var wo writeOpts
	short := map[string]string{"add": "Make task T depend on task D (refused if it closes a cycle)", "rm": "Remove the dependency of T on D"}[name]
	cmd := &cobra.Command{
		Use:     name + " T D",
		Short:   short,
		Example: fmt.Sprintf("  flowctl dep %s T-3 T-1", name),
		Args:    cobra.ExactArgs(2),
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := flow.ParseTaskID(args[0])
		if err != nil {
			return err
		}
		dep, err := flow.ParseTaskID(args[1])
		if err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			in := flow.DepChange{Project: s.project, ID: id, Dep: dep, Write: wo.write()}
			do := s.eng.AddDep
			if name == "rm" {
				do = s.eng.RemoveDep
			}
			t, err := do(in)
			if err != nil {
				return err
			}
			return a.printer().one(t, func(w io.Writer) {
				deps := strings.Join(t.Deps, ", ")
				if deps == "" {
					deps = "nothing"
				}
				fmt.Fprintf(w, "%s depends on %s\n", t.ID, deps)
			})
		})
	})
	return cmd
}

func (a *app) depLsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "ls [T]",
		Short:   "List what a task depends on and what depends on it",
		Example: "  flowctl dep ls T-3",
		Args:    cobra.MaximumNArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			id, err := a.taskArg(args, 0)
			if err != nil {
				return err
			}
			return a.withEngine(true, func(s *session) error {
				d, err := s.eng.TaskDeps(s.project, id)
				if err != nil {
					return err
				}
				return a.printer().one(d, func(w io.Writer) {
					fmt.Fprintf(w, "%s depends on:\n", d.Task)
					writeTaskTable(w, d.Deps)
					fmt.Fprintf(w, "\ndepending on %s:\n", d.Task)
					writeTaskTable(w, d.Dependents)
				})
			})
		}),
	}
}

func (a *app) readyCommand() *cobra.Command {
	var explain bool
	cmd := &cobra.Command{
		Use:   "ready [--explain]",
		Short: "List tasks ready to work on",
		Long: "ready lists todo tasks whose dependencies are done, with no pending approval and no live claim\n" +
			"by someone else. --explain also lists every other task with the reasons it is not ready.\n" +
			"Order: priority first (higher first), then due date (sooner first, none last), then age (older\n" +
			"first). --limit N keeps the first N in that order.",
		Example: "  flowctl ready\n  flowctl ready --explain -o json",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&explain, "explain", false, "also say why each other task is not ready")
	var limit int
	limitFlag(cmd, &limit, "tasks")
	var at atFlag
	at.add(cmd)
	cmd.RunE = a.action(func(*cobra.Command, []string) error {
		if err := checkLimit(limit); err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error {
			if err := at.view(s); err != nil {
				return err
			}
			actor, err := a.readyActor(s, at.set())
			if err != nil {
				return err
			}
			pg := a.page(limit, "tasks", "ID\tSTATUS\tPRI\tTITLE\tREADY")
			err = s.eng.EachReady(s.project, actor, explain, func(r flow.Readiness) error {
				return pg.add(r, func() []string {
					why := "ready"
					if !r.Ready {
						why = strings.Join(r.Reasons, "; ")
					}
					return []string{r.Task.ID, r.Task.Status, fmt.Sprint(r.Task.Priority), r.Task.Title, why}
				})
			})
			if err != nil {
				return err
			}
			return pg.end()
		})
	})
	return cmd
}

// readyActor is who 'ready' answers for (see statusFor): the acting
// person when one of the live claims is theirs, else nobody, which gives
// the same answer without resolving who acts.
func (a *app) readyActor(s *session, at bool) (string, error) {
	if at {
		return a.actor(), nil
	}
	st, err := s.eng.StatusFor(s.project, "")
	if err != nil || !claimsOf(st, a.actor) {
		return "", err
	}
	return a.actor(), nil
}
