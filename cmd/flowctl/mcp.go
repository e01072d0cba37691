package main

import "github.com/spf13/cobra"

// mcpCommand is a placeholder until the mcp command lands.
func (a *app) mcpCommand() *cobra.Command {
	return &cobra.Command{Use: "mcp", Short: "(not built yet)", Hidden: true}
}
