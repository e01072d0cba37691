package main

import "github.com/spf13/cobra"

// statusCommand is a placeholder until the status commands land.
func (a *app) statusCommand() *cobra.Command {
	return &cobra.Command{Use: "status", Short: "(not built yet)", Hidden: true}
}
