package main

import "github.com/spf13/cobra"

// approvalCommand is a placeholder until the approval commands land.
func (a *app) approvalCommand() *cobra.Command {
	return &cobra.Command{Use: "approval", Short: "(not built yet)", Hidden: true}
}
