package main

import "github.com/spf13/cobra"

// statsCommand is a placeholder until the stats commands land.
func (a *app) statsCommand() *cobra.Command {
	return &cobra.Command{Use: "stats", Short: "(not built yet)", Hidden: true}
}
