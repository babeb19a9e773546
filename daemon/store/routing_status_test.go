package store

import (
	"context"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// The project status says when hookd's managed routing drop-in is in effect, which events
// it does not forward, which user/project hooks therefore run nowhere, and which managed
// hooks Claude Code runs itself; removing the drop-in clears all but the last.
func TestStatusRoutingDropIn(t *testing.T) {
	w := newWorld(t)
	w.write("managed", hooksFile("admin-stop"))
	w.write("user", `{"hooks": {"WorktreeCreate": [{"hooks": [{"type": "command", "command": "make-tree"}]}], "Stop": [{"hooks": [{"type": "command", "command": "u1"}]}]}}`)
	// A drop-in forwarding only Stop and PreToolUse: every other event is not forwarded.
	w.write("dropin:50-hookd.json", `{"allowManagedHooksOnly": true, "hooks": {
		"Stop": [{"hooks": [{"type": "command", "command": "/usr/local/bin/hookc"}]}],
		"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/usr/local/bin/hookc"}]}]}}`)
	project := func() protocol.ProjectStatus {
		t.Helper()
		w.store.Snapshot(w.proj)
		_, projects := w.store.Status()
		for _, p := range projects {
			if p.Dir == w.proj {
				return p
			}
		}
		t.Fatalf("project %s not in status %+v", w.proj, projects)
		return protocol.ProjectStatus{}
	}
	w.store.Reload(context.Background(), "test")
	p := project()
	if p.RoutedBy != w.path("dropin:50-hookd.json") {
		t.Errorf("RoutedBy %q", p.RoutedBy)
	}
	if len(p.NotForwarded) == 0 || !contains(p.NotForwarded, "WorktreeCreate") || contains(p.NotForwarded, "Stop") || contains(p.NotForwarded, "PreToolUse") {
		t.Errorf("NotForwarded %v", p.NotForwarded)
	}
	if len(p.RunNowhere) != 1 || !strings.HasPrefix(p.RunNowhere[0], w.path("user")+": hooks.WorktreeCreate: ") || !strings.Contains(p.RunNowhere[0], "runs nowhere") {
		t.Errorf("RunNowhere %q", p.RunNowhere)
	}
	if len(p.ClaudeCodeRuns) != 1 || !strings.HasPrefix(p.ClaudeCodeRuns[0], "managed:") {
		t.Errorf("ClaudeCodeRuns %q", p.ClaudeCodeRuns)
	}

	w.write("dropin:50-hookd.json", "")
	w.store.Reload(context.Background(), "test")
	p = project()
	if p.RoutedBy != "" || p.NotForwarded != nil || p.RunNowhere != nil {
		t.Errorf("without the drop-in: RoutedBy %q NotForwarded %v RunNowhere %v", p.RoutedBy, p.NotForwarded, p.RunNowhere)
	}
	// Without it Claude Code runs the user file's hooks itself too (no install moved them).
	if len(p.ClaudeCodeRuns) != 3 || !strings.HasPrefix(p.ClaudeCodeRuns[0], "managed:") || !strings.HasPrefix(p.ClaudeCodeRuns[1], "user:") {
		t.Errorf("without the drop-in: ClaudeCodeRuns %q", p.ClaudeCodeRuns)
	}
}
