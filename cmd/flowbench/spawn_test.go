package main

import (
	"os"
	"testing"
)

// TestMain lets the test binary be the spawner of the CLI rows, as
// flowbench's main does.
func TestMain(m *testing.M) {
	if os.Getenv(spawnEnv) != "" {
		os.Exit(spawned(os.Args[1:]))
	}
	os.Exit(m.Run())
}
