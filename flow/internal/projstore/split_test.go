package projstore

import "github.com/flowctl/flowctl/eventlog"

// The log splits a parallel replay itself.
var _ splitter = (*eventlog.Tx)(nil)
