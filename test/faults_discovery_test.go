package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
)

// Issue 13, defect 4: walking up from cwd (no project dir sent) ran another uid's
// .claude/settings.json hooks as this uid — git's CVE-2022-24765 class. Discovery now
// stops at a directory owned by another uid, and says so in the log.
func TestFaultDiscoveryStopsAtOtherUsersDir(t *testing.T) {
	requireRoot(t)
	e := NewEnv(t)
	e.Start()
	marker := filepath.Join(e.Root, "ran-other-users-hook")
	// /…/shared (another uid's) holds a project settings file; the session's cwd is
	// below it, in a directory of ours.
	shared := otherUsersDir(t, e.Root, "shared", 0o755)
	os.MkdirAll(filepath.Join(shared, ".claude"), 0o755)
	os.WriteFile(filepath.Join(shared, ".claude", "settings.json"), []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch `+marker+`"}]}]}}`), 0o644)
	os.Chown(filepath.Join(shared, ".claude"), otherUID, otherUID)
	os.Chown(filepath.Join(shared, ".claude", "settings.json"), otherUID, otherUID)
	for _, cwd := range []string{shared, mkdirMode(t, filepath.Join(shared, "mine"), 0o755)} {
		payload := e.Payload("Stop", map[string]any{"cwd": cwd, "stop_hook_active": false})
		frames, err := e.Raw(&protocol.Request{Event: json.RawMessage(payload), Env: e.BaseEnv()}) // no project dir, no CLAUDE_PROJECT_DIR
		if err != nil {
			t.Fatal(err)
		}
		if last := frames[len(frames)-1]; last.Type != protocol.FrameResult {
			t.Fatalf("cwd %s: %+v", cwd, last)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("cwd %s: another uid's project hook ran as this uid", cwd)
		}
	}
	Eventually(t, 10*time.Second, "the log line naming the directory", func() bool {
		return strings.Contains(e.Logs(), "project discovery stopped") && strings.Contains(e.Logs(), shared)
	})
}
