package history

import (
	"fmt"

	"github.com/flowctl/flowctl/flow/store"
)

// PlacementError refuses an event that is not where the engine's
// commands would have put it (CheckPlacement). The engine reports it as
// its invalid input: this package does not import flow, whose sentinel
// errors those are.
type PlacementError struct {
	Type   string // the event's type
	Seq    uint64 // the event's seq
	Reason string // what is wrong, after "TYPE at seq N"
}

func (e *PlacementError) Error() string {
	return fmt.Sprintf("%s at seq %d %s", e.Type, e.Seq, e.Reason)
}

// refuse returns a *PlacementError for r.
func refuse(r *store.Record, format string, args ...any) error {
	return &PlacementError{Type: r.Type, Seq: r.Seq, Reason: fmt.Sprintf(format, args...)}
}
