package main

import "github.com/spf13/cobra"

// reportCommand is a placeholder until the report commands land.
func (a *app) reportCommand() *cobra.Command {
	return &cobra.Command{Use: "report", Short: "(not built yet)", Hidden: true}
}
