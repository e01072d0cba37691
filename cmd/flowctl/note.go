package main

import "github.com/spf13/cobra"

// noteCommand is a placeholder until the note commands land.
func (a *app) noteCommand() *cobra.Command {
	return &cobra.Command{Use: "note", Short: "(not built yet)", Hidden: true}
}
