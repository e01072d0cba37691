//go:build !linux

package eventlog

// TrimResident does nothing here: see bulk_linux.go.
func (tx *Tx) TrimResident() {}
