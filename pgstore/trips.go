package pgstore

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
)

// Round trips are what a command on a remote database waits for: each
// costs the network's latency, whatever the query. The store counts
// them where they happen, on its connections: a read after a write is
// one, however many statements the write sent (a pipelined batch) and
// whether pgx sent them itself (a statement's preparation). The tests
// pin the count of the engine's commands (trips_test.go).

// tripConn is a connection that counts its round trips into n.
type tripConn struct {
	net.Conn
	n     *atomic.Int64
	wrote atomic.Bool // written since the last read
}

func (c *tripConn) Write(b []byte) (int, error) {
	c.wrote.Store(true)
	return c.Conn.Write(b)
}

func (c *tripConn) Read(b []byte) (int, error) {
	if c.wrote.Swap(false) {
		c.n.Add(1)
	}
	return c.Conn.Read(b)
}

// countTrips makes the connections of cfg count their round trips into
// n.
func countTrips(cfg *pgconn.Config, n *atomic.Int64) {
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &tripConn{Conn: c, n: n}, nil
	}
}

// trips returns the round trips of the store's connections so far,
// connecting included.
func (s *Store) trips() int64 { return s.tripCount.Load() }
