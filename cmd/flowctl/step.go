package main

import "github.com/spf13/cobra"

// stepCommand is a placeholder until the step commands land.
func (a *app) stepCommand() *cobra.Command {
	return &cobra.Command{Use: "step", Short: "(not built yet)", Hidden: true}
}
