package projstore

import (
	"cmp"
	"maps"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// splitter is a transaction that can replay its log on several
// goroutines itself, each decoding the records of the projects it is
// given (eventlog.Tx.ReplaySplit): the walk of the log then only reads
// each record's project, and no record is copied.
type splitter interface {
	ReplaySplit(from, to uint64, workers int, route func(project []byte) int, fn func(worker int, r *store.Record) error) error
}

// replaySplit is ReplayOn through a splitter: each project's events, in
// seq order, are decoded and folded by one of workers goroutines, into a
// state of the worker's own; the states are merged at the end.
func replaySplit(s splitter, total uint64, workers int, size sized, warn func(format string, args ...any), progress func(done, total uint64)) (*projection.Memory, Report, error) {
	var rep Report
	if progress != nil {
		progress(0, total)
		defer func() { progress(rep.Events, total) }()
	}
	// Each worker makes its state when it folds its first record: the
	// maps of a big replay's states are megabytes to allocate and touch,
	// which the workers do at once rather than the caller one by one.
	mems := make([]*projection.Memory, workers)
	skips := make([]skipped, workers)
	type routed struct {
		project string
		worker  int
	}
	owner := map[string]*routed{} // project -> the worker folding it
	last := &routed{worker: -1}   // the record before's: most records follow one of their project
	// recent holds the projects routed lately by a hash of their bytes:
	// a file's records interleave a few projects, so that the project
	// of a record is mostly not the one before's but one of a few, and
	// a slot's compare costs less than the map's hash and probe.
	var recent [routeSlots]*routed
	route := func(project []byte) int {
		rep.Events++
		if progress != nil && rep.Events%progressEvery == 0 {
			progress(rep.Events, total)
		}
		if string(project) == last.project && last.worker >= 0 {
			return last.worker
		}
		slot := &recent[routeSlot(project)]
		if o := *slot; o != nil && o.project == string(project) {
			last = o
			return o.worker
		}
		o := owner[string(project)]
		if o == nil {
			o = &routed{string(project), len(owner) % workers}
			owner[o.project] = o
		}
		*slot, last = o, o
		return o.worker
	}
	fold := func(w int, r *store.Record) error {
		if schema, ok := projection.Schema(r.Type); !ok || r.Schema != schema {
			skips[w].add(r)
			return nil
		}
		m := mems[w]
		if m == nil {
			m = size(w, workers)
			mems[w] = m
		}
		return projection.Apply(m, r)
	}
	err := s.ReplaySplit(1, 0, workers, route, fold)
	rep.Skipped = warnSkipped(skips, warn)
	if err != nil {
		return nil, rep, err
	}
	for i, m := range mems {
		if m == nil { // a worker that folded nothing
			mems[i] = size(i, workers)
		}
	}
	return mergeMemories(mems), rep, nil
}

// routeSlots is how many projects a replaySplit's route remembers by
// routeSlot, a hash of their length and last two bytes: where generated
// and most real names differ (proj007, proj008). Strings that share a
// slot only cost a look in the map.
const routeSlots = 16

func routeSlot(project []byte) int {
	n := len(project)
	if n < 2 {
		return n
	}
	return int(uint(n)*7+uint(project[n-1])+uint(project[n-2])*3) % routeSlots
}

// skipped is what a worker skipped: how many events, and the first of
// each type it skipped.
type skipped struct {
	n     int
	first map[string]skip
}

// skip is the first event of a type a replay skipped.
type skip struct {
	seq    uint64
	schema uint32
}

func (s *skipped) add(r *store.Record) {
	s.n++
	if s.first == nil {
		s.first = map[string]skip{}
	}
	if _, ok := s.first[r.Type]; !ok {
		s.first[r.Type] = skip{r.Seq, r.Schema}
	}
}

// warnSkipped warns once per type the workers skipped, at its first
// event in the log, in the order of those events (as a replay on one
// goroutine warns), and returns how many events they skipped.
func warnSkipped(skips []skipped, warn func(format string, args ...any)) int {
	first, n := map[string]skip{}, 0
	for _, s := range skips {
		n += s.n
		for typ, k := range s.first {
			if f, ok := first[typ]; !ok || k.seq < f.seq {
				first[typ] = k
			}
		}
	}
	types := slices.SortedFunc(maps.Keys(first), func(a, b string) int { return cmp.Compare(first[a].seq, first[b].seq) })
	for _, typ := range types {
		k := first[typ]
		warn("skipping events of type %s (schema %d), first at seq %d: this flowctl does not know them", typ, k.schema, k.seq)
	}
	return n
}
