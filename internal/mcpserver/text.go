package mcpserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/view"
)

// printable is view.Printable: text from the file cannot move a cursor.
func printable(s string) string { return view.Printable(s) }

// marshalJSON is view.Marshal: the JSON every front door writes.
func marshalJSON(v any) ([]byte, error) { return view.Marshal(v) }

// The closed sets of arguments.
var (
	taskStatuses     = []string{projection.StatusTodo, projection.StatusDoing, projection.StatusDone, projection.StatusBlocked, projection.StatusCancelled}
	approvalStatuses = []string{projection.ApprovalPending, flow.ApprovalStatusExpired, projection.ApprovalGranted, projection.ApprovalDenied}
)

// oneOf refuses v unless it is one of valid, listing them.
func oneOf(v string, valid []string) error {
	if !slices.Contains(valid, v) {
		return fmt.Errorf("use one of: %s", strings.Join(valid, ", "))
	}
	return nil
}
