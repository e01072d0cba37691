//go:build !linux

package eventlog

import bolt "go.etcd.io/bbolt"

// pager does nothing here: see verify_linux.go.
type pager struct{}

func (l *Log) newPager(*bolt.Tx) *pager { return &pager{} }

func (*pager) sequential() (restore func()) { return func() {} }

func (*pager) trim() {}
