package projection

import (
	"fmt"

	"github.com/flowctl/flowctl/flow/store"
)

// ExecAt is exec record id of r's project as r, the last event that
// changed it (its Meta.Seq), left it: the Exec the fold puts for r when r
// is the exec.recorded event that made it, or the one it restores when r
// is a rollback.applied that put it back; version is its Meta.Version
// (a restore keeps the version the exec had). An exec record never
// changes otherwise, so r and version are all of it, and a store may keep
// the exec as a reference to r instead of a copy of what r holds.
// An r that made or restored no exec id is an ErrInconsistent.
func ExecAt(r *store.Record, id string, version uint64) (*Exec, error) {
	seen := seenPool.Get().(*stringCache)
	defer seenPool.Put(seen)
	switch r.Type {
	case TypeExecRecorded:
		var p ExecRecorded
		if err := p.unmarshal(r.Data, seen); err != nil {
			return nil, fmt.Errorf("%w: seq %d: payload does not decode: %v", ErrInconsistent, r.Seq, err)
		}
		if p.ID == id {
			t := TimeOf(r.Time)
			return &Exec{Project: r.Project, ExecRecorded: p, Actor: r.Actor,
				Meta: Meta{Version: version, Seq: r.Seq, CreatedAt: t, CreatedBy: r.Actor, UpdatedAt: t}}, nil
		}
	case TypeRollbackApplied:
		var p RollbackApplied
		if err := p.unmarshal(r.Data, seen); err != nil {
			return nil, fmt.Errorf("%w: seq %d: payload does not decode: %v", ErrInconsistent, r.Seq, err)
		}
		for i := len(p.Execs) - 1; i >= 0; i-- { // the fold puts them in order: the last one stays
			if x := &p.Execs[i]; x.ID == id {
				x.Version, x.Seq, x.UpdatedAt = version, r.Seq, TimeOf(r.Time)
				return x, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: the event at seq %d (%s) did not record or restore exec %s", ErrInconsistent, r.Seq, r.Type, id)
}
