//go:build !linux

package main

// fsType is known only on Linux.
func fsType(string) string { return "unknown file system" }

// allocated is the file's size where the allocated size is not known.
func allocated(path string) (int64, error) { return fileSize(path) }
