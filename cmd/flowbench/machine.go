package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// writeMachine prints what the figures were measured on.
func writeMachine(w io.Writer, dir string) {
	fmt.Fprintf(w, "cpu:     %s\n", cpuModel())
	fmt.Fprintf(w, "cores:   %d (GOMAXPROCS %d)\n", runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "os/arch: %s/%s, %s\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "dir:     %s (%s)\n", dir, fsType(dir))
}

// cpuModel reads the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
