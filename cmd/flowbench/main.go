package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getenv(spawnEnv) != "" {
		os.Exit(spawned(os.Args[1:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, tty: isTerminal(os.Stderr)})
	stop()
	os.Exit(code)
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
