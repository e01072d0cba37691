package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// spawnEnv, set in flowbench's environment, makes it a spawner: a small
// process between flowbench and the flowctl command it measures.
//
// A process that flowbench starts directly inherits flowbench's own peak
// RSS: Go starts children with vfork, and Linux counts the memory a
// process had before its exec in its peak (ru_maxrss), so every command
// would report at least flowbench's tens of MiB. A command that the small
// spawner starts reports its own peak, or the spawner's few MiB when that
// is more.
const spawnEnv = "FLOWBENCH_SPAWN"

// spawnReport is the fd, in the spawner, on which it reports.
const spawnReport = 3

// spawned is the spawner's main: it runs args (a command and its
// arguments) with the spawner's stdin, stdout and stderr, writes the
// command's wall time (ns) and peak RSS (KiB) to fd 3, and returns the
// command's exit code.
func spawned(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "flowbench: spawner: no command")
		return exitUsage
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = withoutSpawnEnv(os.Environ())
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintf(os.Stderr, "flowbench: spawner: %v\n", err)
		return exitFailed
	}
	report := os.NewFile(spawnReport, "report")
	fmt.Fprintf(report, "%d %d\n", d.Nanoseconds(), peakRSS(cmd.ProcessState))
	report.Close()
	return cmd.ProcessState.ExitCode()
}

func withoutSpawnEnv(environ []string) []string {
	out := environ[:0:0]
	for _, kv := range environ {
		if !strings.HasPrefix(kv, spawnEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}
