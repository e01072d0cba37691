package main

import (
	"fmt"
	"io"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) planCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "plan", Short: "Create, list, show and close plans (groups of tasks)"}
	cmd.AddCommand(a.planNewCommand(), a.planLsCommand(), a.planShowCommand(), a.planCloseCommand())
	return cmd
}

func (a *app) planNewCommand() *cobra.Command {
	var desc string
	var wo writeOpts
	cmd := &cobra.Command{
		Use:     "new TITLE",
		Short:   "Create a plan (P-n)",
		Example: "  flowctl plan new 'launch the site'",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&desc, "description", "", "what the plan is for")
	wo.addKeyFlag(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		return a.withEngine(false, func(s *session) error {
			p, err := s.eng.AddPlan(flow.NewPlan{Project: s.project, Title: args[0], Description: desc, Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printer().one(p, func(w io.Writer) { fmt.Fprintf(w, "Created plan %s: %s\n", p.ID, printable(p.Title)) })
		})
	})
	return cmd
}

func (a *app) planLsCommand() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:     "ls",
		Short:   "List plans",
		Example: "  flowctl plan ls\n  flowctl plan ls --limit 10",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			return a.withEngine(true, func(s *session) error {
				pg := a.page(limit, "plans", "ID\tSTATUS\tTITLE")
				err := s.eng.EachPlan(s.project, func(p *projection.Plan) error {
					return pg.add(p, func() []string { return []string{p.ID, p.Status, p.Title} })
				})
				if err != nil {
					return err
				}
				return pg.end()
			})
		}),
	}
	limitFlag(cmd, &limit, "plans")
	return cmd
}

// planView is a plan with its tasks, as `plan show` prints it.
type planView struct {
	*projection.Plan
	Tasks []*projection.Task `json:"tasks"`
}

func (a *app) planShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "show P",
		Short:   "Show a plan and its tasks",
		Example: "  flowctl plan show P-1",
		Args:    cobra.ExactArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			id, err := flow.ParsePlanID(args[0])
			if err != nil {
				return err
			}
			return a.withEngine(true, func(s *session) error {
				p, err := s.eng.Plan(s.project, id)
				if err != nil {
					return err
				}
				tasks, err := s.eng.Tasks(s.project, flow.TaskFilter{Plan: id})
				if err != nil {
					return err
				}
				v := planView{Plan: p, Tasks: projection.NonNil(tasks)}
				return a.printer().one(v, func(w io.Writer) {
					fmt.Fprintf(w, "%s  %s  [%s]  v%d\n", p.ID, printable(p.Title), p.Status, p.Version)
					if p.Description != "" {
						fmt.Fprintln(w, printable(p.Description))
					}
					writeTaskTable(w, tasks)
				})
			})
		}),
	}
}

func (a *app) planCloseCommand() *cobra.Command {
	var reason string
	var wo writeOpts
	cmd := &cobra.Command{
		Use:     "close P",
		Short:   "Close a plan",
		Example: "  flowctl plan close P-1 --reason shipped",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := flow.ParsePlanID(args[0])
		if err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			p, err := s.eng.ClosePlan(flow.ClosePlan{Project: s.project, ID: id, Reason: reason, Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printer().one(p, func(w io.Writer) { fmt.Fprintf(w, "Closed plan %s\n", p.ID) })
		})
	})
	return cmd
}
