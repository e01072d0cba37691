package main

import "github.com/spf13/cobra"

// watchCommand is a placeholder until the watch command lands.
func (a *app) watchCommand() *cobra.Command {
	return &cobra.Command{Use: "watch", Short: "(not built yet)", Hidden: true}
}
