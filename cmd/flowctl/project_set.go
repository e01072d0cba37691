package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

func (a *app) projectSetCommand() *cobra.Command {
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Set a project setting (recorded as an event): " + strings.Join(flow.SettingKeys(), ", "),
		Long: "set changes one setting of the current project (--project to name another), recorded as a\n" +
			"project.setting_changed event; setting the value it has appends nothing. Settings:\n" +
			"  approvals.self_grant deny|allow   whether the one who asked for an approval may grant\n" +
			"                                    or deny it (default deny: ask someone else, exit 4)",
		Example: "  flowctl project set approvals.self_grant allow",
		Args:    cobra.ExactArgs(2),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			switch len(args) {
			case 0:
				return flow.SettingKeys(), cobra.ShellCompDirectiveNoFileComp
			case 1:
				return flow.SettingValues(args[0]), cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		return a.withEngine(false, func(s *session) error {
			p, err := s.eng.SetProjectSetting(flow.SetSetting{Project: s.project, Key: args[0], Value: args[1], Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printer().one(p, func(w io.Writer) {
				fmt.Fprintf(w, "%s: %s = %s\n", p.Name, args[0], flow.ProjectSettings(p)[args[0]])
			})
		})
	})
	return cmd
}

func (a *app) projectForkCommand() *cobra.Command {
	var from pointValue
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "fork NEW --from POINT",
		Short: "Start a new project from the current one's state at a point, leaving it as it is",
		Long: "fork creates project NEW with the state the current project (--project to name another) had\n" +
			"at POINT: its plans, tasks (dependencies, context, steps), approvals, exec records, notes and\n" +
			"settings; new ids continue the source's. The fork records its origin (source project, seq and\n" +
			"chain hash at the point), which 'project show' prints. The fork is open even if the source was\n" +
			"archived; checkpoints stay with the source. The current project does not change.\n" +
			"A point is " + pointHelp + ".",
		Example: "  flowctl project fork retry --from C-2\n  flowctl project fork experiment --from 41 -o json",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().Var(&from, "from", "the source's point to start from (required): "+pointHelp)
	wo.addKeyFlag(cmd)
	cmd.RunE = a.action(func(c *cobra.Command, args []string) error {
		if !c.Flags().Changed("from") {
			return usageError{errors.New("--from is required: give a checkpoint (C-1), a seq (42) or an RFC 3339 time")}
		}
		point := from.p
		return a.withEngine(false, func(s *session) error {
			p, err := s.eng.ForkProject(flow.ForkInput{Project: s.project, Name: args[0], From: point, Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printer().one(p, func(w io.Writer) {
				fmt.Fprintf(w, "Forked project %s from %s at seq %d\n", p.Name, printable(p.Origin.Project), p.Origin.Seq)
			})
		})
	})
	return cmd
}

// pointValue is a flag holding a point (SEQ, C-n, RFC 3339 time or HEAD),
// checked as it is set.
type pointValue struct {
	s string
	p flow.Point
}

func (v *pointValue) String() string { return v.s }
func (v *pointValue) Type() string   { return "point" }

func (v *pointValue) Set(s string) error {
	p, err := parsePoint("point", s)
	if err != nil {
		return err
	}
	v.s, v.p = s, p
	return nil
}
