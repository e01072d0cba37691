package mcpserver

import (
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
)

// TestMCP_ForceNeverPassesAPendingApproval: task_update with force does
// not finish a task past a pending approval, and the file is unchanged.
func TestMCP_ForceNeverPassesAPendingApproval(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil)
	h.mustCall("task_update", map[string]any{"id": "T-1", "claim": "claim", "status": "doing"}, nil)
	h.mustCall("approval_request", map[string]any{"task": "T-1", "message": "ship?"}, nil)
	h.callErr("task_update", map[string]any{"id": "T-1", "status": "done", "force": true}, flow.CodePending)
}

// TestMCP_ExpiredApproval: approval_status shows an expired request as
// expired, lists it under that status, and a grant of it is refused.
func TestMCP_ExpiredApproval(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil, "--tools", "all")
	h.mustCall("approval_request", map[string]any{"task": "T-1", "message": "ship?", "ttl": "1ms"}, nil)
	time.Sleep(20 * time.Millisecond)
	var out approvalStatusOut
	h.mustCall("approval_status", map[string]any{"id": "A-1"}, &out)
	if len(out.Approvals) != 1 || out.Approvals[0].Status != flow.ApprovalStatusExpired || out.Granted {
		t.Errorf("status of an expired request = %+v", out)
	}
	h.mustCall("approval_status", map[string]any{"status": "expired"}, &out)
	if len(out.Approvals) != 1 || out.Approvals[0].ID != "A-1" {
		t.Errorf("expired list = %+v", out.Approvals)
	}
	h.mustCall("approval_status", map[string]any{"status": "pending"}, &out)
	if len(out.Approvals) != 0 {
		t.Errorf("pending list = %+v, want none", out.Approvals)
	}
	before := f.bytes()
	if _, stderr, code := f.run("", "--actor", "reviewer", "approval", "grant", "A-1"); code != 4 {
		t.Errorf("grant of the expired request: exit %d (%s), want 4", code, stderr)
	}
	if string(before) != string(f.bytes()) {
		t.Error("the refused grant changed the file")
	}
}
