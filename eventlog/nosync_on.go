//go:build flowctl_nosync

package eventlog

// forceNoSync turns fsync off for the whole binary. The build tag exists
// only for the reliability suite's power-loss test, which must show that
// it catches a flowctl that acknowledges writes it has not made durable.
// Never build flowctl for use with it.
const forceNoSync = true
