// Command flowctl is the CLI of the flowctl workflow engine. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	// The storage backends this binary is built with, found by flow.Open
	// in the store registry from --db/FLOW_DB: bbolt files (a path) and
	// PostgreSQL databases (a postgres:// URL).
	_ "github.com/flowctl/flowctl/eventlog"
	_ "github.com/flowctl/flowctl/pgstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], osEnv())
	stop()
	os.Exit(code)
}
