package projstore

import (
	"errors"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Streaming reads: a list that prints a page decodes only the entities it
// can print. The ids come from the status index in id order (EachID), the
// entities one at a time by key, and a cheap test of the sealed body
// (maybe) skips the decode of one that cannot match. Nothing holds more
// than the entity at hand (and, for a sparse status, its ids).

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

// probeDensity: EachID probes the index number by number when at least one
// id in probeDensity of 1..last has the status asked for, so that a walk
// stopped after n ids costs about n*probeDensity lookups at worst.
const probeDensity = 8

// EachID calls fn with the ids of project's entities in bucket with status
// ("" for every status), in id order. Ids are prefix-n and last is the
// project's counter of the kind (projection.Counters). Keys sort as bytes
// (T-10 before T-2), so where the ids with the status are dense among
// 1..last, EachID probes the index's keys number by number and a walk that
// stops early reads only what it passed; where they are sparse it reads
// them all (IndexIDs) and sorts them. An id past last (a counter that a
// rollback set back) still comes, after the others. fn's error ends the
// walk and is returned.
func (s *Tx) EachID(bucket, project, status, prefix string, last int, fn func(id string) error) error {
	count, err := s.indexCount(bucket, project, status)
	if err != nil || count == 0 {
		return err
	}
	seen, from := 0, 0
	if count*probeDensity >= last {
		for n := 1; n <= last && seen < count; n++ {
			id := projection.ShortID(prefix, n)
			ok, err := s.indexed(bucket, project, status, id)
			if err == nil && ok {
				seen++
				err = fn(id)
			}
			if err != nil {
				return err
			}
		}
		if seen == count {
			return nil
		}
		from = last
	}
	ids, err := s.IndexIDs(bucket, project, status)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if n, _ := projection.IDNumber(prefix, id); n > from {
			if err := fn(id); err != nil {
				return err
			}
		}
	}
	return nil
}

// indexCount is how many of project's entities in bucket the index counts
// with status, or with any status when status is "".
func (s *Tx) indexCount(bucket, project, status string) (int, error) {
	counts, err := s.SummaryCounts(bucket, project)
	if status != "" {
		return counts[status], err
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	return total, err
}

// indexed reports whether the index lists id of project in bucket with
// status (any status when status is "").
func (s *Tx) indexed(bucket, project, status, id string) (bool, error) {
	k := SummaryRefKey(bucket, projection.Key(project, id))
	if status != "" {
		k = append(SummaryStatusPrefix(bucket, project, status), id...)
	}
	v, err := s.tx.Get(BucketSummaries, k)
	if err != nil || v == nil {
		return false, err
	}
	_, err = Unseal(BucketSummaries, k, v)
	return err == nil, err
}

// Each calls fn with project's entities in bucket with status ("" for
// all), in id order (EachID: prefix and last are its). maybe (nil: every
// one) sees each entity's checked msgpack (unpacked, value.go) before it
// is decoded; one it refuses is skipped undecoded, so it must refuse only
// entities fn would skip. An exec stored by reference (value.go) shows
// maybe its reference, which holds its task id and no other field: a
// maybe of execs may test for the task id only. An id whose entity the bucket does not hold is ErrDamaged: the ids
// come from the status index. fn returning store.ErrStop ends the walk,
// and Each returns nil.
func Each[T any](s *Tx, bucket, project, status, prefix string, last int, maybe func(body []byte) bool, fn func(*T) error) error {
	err := s.EachID(bucket, project, status, prefix, last, func(id string) error {
		v, err := eachOne[T](s, bucket, projection.Key(project, id), maybe)
		if err != nil || v == nil {
			return err
		}
		return fn(v)
	})
	if errors.Is(err, store.ErrStop) {
		return nil
	}
	return err
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
	if err != nil {
		return nil, err
	}
	if len(body) > 0 && body[0] == valueExecRef && maybe != nil && !maybe(body) {
		return nil, nil
	}
	if maybe == nil || len(body) > 0 && body[0] == valueExecRef {
		return decodeBody[T](s.tx, bucket, k, body)
	}
	return unpackDecode[T](bucket, k, body, maybe)
}
