package flow

import (
	"strings"
	"testing"
)

// TestCheckTypePattern: a type or a prefix with * that names a type
// passes; anything else lists the types.
func TestCheckTypePattern(t *testing.T) {
	for _, ok := range []string{"task.created", "task.*", "*"} {
		if err := CheckTypePattern(ok); err != nil {
			t.Errorf("CheckTypePattern(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"task.create", "tsk.*", ""} {
		if err := CheckTypePattern(bad); err == nil || !strings.Contains(err.Error(), "task.created") {
			t.Errorf("CheckTypePattern(%q) = %v, want the list of types", bad, err)
		}
	}
}
