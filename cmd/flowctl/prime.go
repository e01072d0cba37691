package main

import "github.com/spf13/cobra"

// primeCommand is a placeholder until the prime command lands.
func (a *app) primeCommand() *cobra.Command {
	return &cobra.Command{Use: "prime", Short: "(not built yet)", Hidden: true}
}
