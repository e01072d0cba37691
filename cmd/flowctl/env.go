package main

import (
	"io"
	"os"
	"os/exec"
	"strings"
)

// env is everything a command reads from its process: injected so that
// tests run the real command tree in-process, in parallel.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	dir    string // working directory
}

func osEnv() env {
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	return env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, dir: dir}
}

// gitUserName returns git's user.name for dir, or "" when there is none.
// It is called only when a write needs an actor and none was given.
func gitUserName(dir string) string {
	cmd := exec.Command("git", "config", "user.name")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
