package projstore

import (
	"errors"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Streaming reads: a list that prints a page decodes only the entities it
// can print. The ids come from the status index (keys only, sorted by
// number), the entities one at a time by key, and a cheap test of the
// sealed body (maybe) skips the decode of one that cannot match. Nothing
// holds more than the ids and the entity at hand.

// Committed reports that s has no unflushed writes, so that the status
// index lists every entity s holds: the streaming reads need that.
func (s *Tx) Committed() bool { return len(s.keys) == 0 }

// IndexIDs lists the ids of project's entities in bucket (a bucket the
// status index covers) with status, or of every status when status is "",
// sorted by number. It reads the index's keys only.
func (s *Tx) IndexIDs(bucket, project, status string) ([]string, error) {
	if status != "" {
		return s.SummaryIDs(bucket, project, status)
	}
	prefix := SummaryRefKey(bucket, project+"/")
	var out []string
	err := s.tx.Scan(BucketSummaries, prefix, func(k, v []byte) error {
		out = append(out, string(k[len(prefix):]))
		_, err := Unseal(BucketSummaries, k, v)
		return err
	})
	return SortIDs(out), err
}

// Each calls fn with the entities of project in bucket under ids, in that
// order. maybe (nil: every one) sees each entity's checked body before it
// is decoded; one it refuses is skipped undecoded, so it must refuse only
// entities fn would skip. An id whose entity the bucket does not hold is
// ErrDamaged: the ids come from the status index. fn returning
// store.ErrStop ends the walk, and Each returns nil.
func Each[T any](s *Tx, bucket, project string, ids []string, maybe func(body []byte) bool, fn func(*T) error) error {
	for _, id := range ids {
		v, err := eachOne[T](s, bucket, projection.Key(project, id), maybe)
		if err == nil && v != nil {
			err = fn(v)
		}
		if errors.Is(err, store.ErrStop) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// eachOne is the entity under key for Each: nil when maybe refuses it.
func eachOne[T any](s *Tx, bucket, key string, maybe func([]byte) bool) (*T, error) {
	if v, ok := s.dirty[dirtyKey(bucket, key)]; ok {
		e, _ := v.(*T) // nil when deleted
		return e, nil
	}
	k := []byte(key)
	b, err := s.tx.Get(bucket, k)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, DamagedEntry(bucket, key, "lists an entity the projections do not hold")
	}
	body, err := Unseal(bucket, k, b)
	if err != nil || (maybe != nil && !maybe(body)) {
		return nil, err
	}
	return decodeBody[T](bucket, k, body)
}
