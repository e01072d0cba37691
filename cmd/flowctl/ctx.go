package main

import "github.com/spf13/cobra"

// ctxCommand is a placeholder until the ctx commands land.
func (a *app) ctxCommand() *cobra.Command {
	return &cobra.Command{Use: "ctx", Short: "(not built yet)", Hidden: true}
}
