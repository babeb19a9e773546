package events

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFailClosed(t *testing.T) {
	r := FailClosed("PreToolUse", "daemon down")
	if r.ExitCode != 2 || !strings.Contains(r.Stderr, "daemon down") {
		t.Fatalf("PreToolUse fail-closed = %+v", r)
	}
	r = FailClosed("PermissionRequest", "daemon down")
	var out struct {
		HSO struct {
			Decision struct{ Behavior, Message string } `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(r.Output, &out); err != nil || out.HSO.Decision.Behavior != "deny" || r.ExitCode != 0 {
		t.Fatalf("PermissionRequest fail-closed = %s (%v)", r.Output, err)
	}
}

// The fail-closed answer of a permission event carries its decision (it was null).
func TestFailClosedPermission(t *testing.T) {
	for _, ev := range []string{"PreToolUse", "PermissionRequest"} {
		r := FailClosed(ev, "audit failed")
		if r.Permission == nil || r.Permission.Decision != "deny" || r.Permission.Reason != "audit failed" {
			t.Errorf("%s: permission %+v", ev, r.Permission)
		}
	}
	if r := FailClosed("Stop", "x"); r.Permission != nil || r.Block == nil {
		t.Errorf("Stop: %+v", r)
	}
}
