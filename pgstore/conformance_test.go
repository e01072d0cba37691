package pgstore_test

import (
	"os"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/flow/store/storetest"
	"github.com/flowctl/flowctl/internal/pgtest"
	"github.com/flowctl/flowctl/pgstore"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestConformance runs the storage seam's conformance suite on
// PostgreSQL: a schema per subtest, which several stores may hold open.
func TestConformance(t *testing.T) {
	pgtest.URL(t)
	storetest.Run(t, storetest.Backend{
		Driver:  pgstore.Driver{},
		DSN:     pgtest.DSN,
		Options: store.Options{NoSync: true},
	})
}
