package eventlog_test

import (
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/flow/store/storetest"
)

// TestConformance runs the storage seam's conformance suite on bbolt: a
// file per subtest, which an open Log locks for itself.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		Driver:    eventlog.Driver{},
		DSN:       func(t testing.TB) string { return filepath.Join(t.TempDir(), "flow.db") },
		Options:   store.Options{NoSync: true},
		Exclusive: true,
		Reserved:  []string{"meta", "log", "streams", "stream_idx", "ids", "project_idx", "index_tail"},
	})
}
