package main

import (
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
	return &cobra.Command{Use: "fork", Hidden: true}
}
