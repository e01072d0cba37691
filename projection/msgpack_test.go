package projection

import "testing"

// TestKnownString: the constants knownString knows, and only those.
func TestKnownString(t *testing.T) {
	known := []string{string(EmptyContext), StatusTodo, StatusDone, "open", "note", StatusDoing, StepFailed, "closed",
		ApprovalDenied, "memory", StatusBlocked, StepPending, StepSkipped, ApprovalGranted, StatusCancelled,
		StepCompleted, StepInProgress, ApprovalPending}
	for _, s := range known {
		if got, ok := knownString([]byte(s)); !ok || got != s {
			t.Errorf("knownString(%q) = %q, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "{", "todo ", "Todo", "in_progres", "in_progress!", "cancelle", "agent", "T-1.2"} {
		if got, ok := knownString([]byte(s)); ok {
			t.Errorf("knownString(%q) = %q, true; want false", s, got)
		}
	}
}
