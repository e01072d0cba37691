//go:build !flowctl_nosync

package eventlog

// forceNoSync is false in every real build; see nosync_on.go.
const forceNoSync = false
