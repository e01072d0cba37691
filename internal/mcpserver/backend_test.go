package mcpserver

// The tests open files through flow.Open, which finds the bbolt driver in
// the registry: the test binary links it in, as cmd/flowctl does.
import _ "github.com/flowctl/flowctl/eventlog"
