package main

import "github.com/spf13/cobra"

// execCommand is a placeholder until the exec commands land.
func (a *app) execCommand() *cobra.Command {
	return &cobra.Command{Use: "exec", Short: "(not built yet)", Hidden: true}
}
