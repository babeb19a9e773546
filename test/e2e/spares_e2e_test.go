//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/claudeapi"
	"github.com/hookd/hookd/test/testutil"
)

// TestClaudeSparesEndWithSession (issue 26): a Node guard of the shape hookd prewarms (a
// script that visibly reads stdin) on PreToolUse, three Bash calls, with the real Claude
// Code, through hookd in the exec form (hookc's parent is Claude Code) and in the shell
// form (a shell between them). Every node process logs its start and its use. Natively
// that is 3 started, 3 used. Through hookd the first call runs cold or on a spare begun
// when the session started, the others on the spares the previous calls left; the spare
// the last call leaves can serve nothing (its
// key holds the session's id). When Claude Code exits, hookd must hold nothing of the
// session any more — no idle or starting process, no key — and every node process that
// was started and not used must be gone: at most one such, never more than natively + 1.
func TestClaudeSparesEndWithSession(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"exec", "hookd"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var log string
			sc := &scenario{Name: "spares-" + mode,
				Hooks:  []hook{{Name: "guard", Event: "PreToolUse", Matcher: "Bash", Scope: "user", Command: `node "$CLAUDE_PROJECT_DIR"/guard.js`}},
				Script: []claudeapi.Turn{bash("echo one"), bash("echo two"), bash("echo three"), say("done")},
				Prepare: func(t *testing.T, w *world) {
					log = w.path("guard.log")
					q, _ := json.Marshal(log)
					w.Write(t, filepath.Join(w.Proj, "guard.js"), fmt.Sprintf(`const fs = require('fs');
fs.appendFileSync(%s, 'start ' + process.pid + '\n');
JSON.parse(fs.readFileSync(0, 'utf8'));
fs.appendFileSync(%s, 'used ' + process.pid + '\n');
`, q, q), 0o644)
				},
			}
			o := runClaude(t, sc, mode)
			if len(o.Calls) != 3 {
				t.Fatalf("calls: %+v", o.Calls)
			}
			var st protocol.Status
			testutil.WaitFor(t, 60*time.Second, "hookd holds nothing of the ended session", func() bool {
				c, err := protocol.Dial(context.Background(), filepath.Join(o.root, "s.sock"))
				if err != nil {
					return false
				}
				defer c.Close()
				f, err := c.Do(context.Background(), &protocol.Request{Op: protocol.OpStatus}, nil)
				if err != nil || json.Unmarshal(f.Data, &st) != nil || st.Prewarm == nil {
					return false
				}
				return st.Prewarm.Idle == 0 && st.Prewarm.Starting == 0 && st.Prewarm.Keys == 0
			})
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			started, used := map[int]bool{}, map[int]bool{}
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				what, pid, _ := strings.Cut(l, " ")
				n, err := strconv.Atoi(pid)
				if err != nil {
					t.Fatalf("guard log: %q", l)
				}
				map[string]map[int]bool{"start": started, "used": used}[what][n] = true
			}
			t.Logf("%s: node processes started %d, used %d; prewarm hits %d, spawned %d, discarded %d", mode, len(started), len(used), st.Prewarm.Hits, st.Prewarm.Spawned, st.Prewarm.Discarded)
			// The first call is prewarmed too when the session's start (a SessionStart
			// forwarder install wrote) or the call itself began its spare (warm_session.go).
			if len(used) != 3 || st.Prewarm.Hits < 2 {
				t.Errorf("used %d node processes with %d prewarmed, want 3 with at least the last two prewarmed", len(used), st.Prewarm.Hits)
			}
			if len(started) > len(used)+1 {
				t.Errorf("%d node processes started for %d events: more than one spare", len(started), len(used))
			}
			for pid := range started {
				if !used[pid] {
					testutil.WaitFor(t, 30*time.Second, "the unused spare gone", func() bool { return testutil.ProcessGone(pid) })
				}
			}
		})
	}
}
