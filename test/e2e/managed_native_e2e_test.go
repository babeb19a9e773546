//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/test/claudeapi"
	"github.com/hookd/hookd/test/testutil"
)

// A managed hook with NO routing drop-in (issue 16 follow-up): after a plain user-scope
// `hookd install claude-code`, Claude Code runs the hooks of its managed files itself —
// the installer cannot move them — and forwards the event to hookd through the user
// file's forwarder. hookd must then leave the managed hook to Claude Code (reported as
// "run by Claude Code: managed hook"), or the hook runs twice. The user hook, moved into
// hookd.json, runs once, through hookd. The same holds for a hook of a project file no
// install moved (the project was never installed): Claude Code runs it, hookd must not
// (before the fix both ran twice per call). Checked with the daemon and with hookc's
// in-process fallback. The managed file is the real /etc/claude-code/managed-settings.json
// in a private mount namespace (setupManagedNS), the only path Claude Code reads.
func TestClaudeManagedHookUserInstall(t *testing.T) {
	ns := setupManagedNS(t)

	w := newManagedWorld(t)
	root, home, proj, state, sock, counts := w.root, w.home, w.proj, w.state, w.sock, w.counts
	write, script := w.write, w.script
	hooksFile := func(cmd string) string {
		return fmt.Sprintf(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": %q}]}]}}`, cmd) + "\n"
	}
	userSettings := filepath.Join(home, ".claude", "settings.json")
	write(userSettings, hooksFile(script("user")), 0o644)
	// A project hook in a project that was not installed: Claude Code runs it natively.
	projSettings := filepath.Join(proj, ".claude", "settings.json")
	write(projSettings, hooksFile(script("project")), 0o644)
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{proj: map[string]any{"hasTrustDialogAccepted": true}}})
	write(filepath.Join(home, ".claude.json"), string(trust), 0o644)
	managedFile := filepath.Join(managedDir, "managed-settings.json")

	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"XDG_CONFIG_HOME=" + filepath.Join(root, "xdg-config"), "XDG_STATE_HOME=" + filepath.Join(root, "xdg-state"),
		"HOOKD_SOCKET=" + sock, "HOOKD_BIN=" + bin.hookd, "HOOKD_STATE_DIR=" + state}
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	inNS := func(stdin, name string, args ...string) string {
		t.Helper()
		cmd := ns.command(ctx, proj, name, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	// The admin's managed file (inside the namespace), with one PreToolUse hook.
	inNS(hooksFile(script("managed")), "sh", "-c", "cat > "+managedFile)
	t.Log(inNS("", bin.hookd, "install", "claude-code", "--scope", "user", "--hookc", bin.hookc))

	daemon := ns.command(context.Background(), "/", bin.hookd, "--socket", sock, "--user-dir", filepath.Join(home, ".claude"), "serve")
	daemon.Env = env
	d := testutil.StartDaemon(t, testutil.DaemonOptions{Cmd: daemon, Socket: sock})

	// underClaude: the nearest of claude and hookd among the hook's ancestors is claude.
	underClaude := func(chain string) bool {
		h, c := strings.Index(chain, "/hookd/"), strings.Index(chain, "/claude/")
		return c >= 0 && (h < 0 || c < h)
	}
	check := func(phase, marker string, want int) {
		t.Helper()
		srv := claudeapi.Start(t, []claudeapi.Turn{bash("echo " + marker), say("done")})
		cmd := ns.command(ctx, proj, bin.claude, "-p", "go", "--output-format", "stream-json", "--verbose")
		cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: claude: %v\nstderr: %s\nstdout: %s", phase, err, stderr.String(), stdout.String())
		}
		if !strings.Contains(stdout.String(), marker) {
			t.Errorf("%s: the Bash call did not run:\n%s", phase, stdout.String())
		}
		for name, byClaude := range map[string]bool{"managed": true, "project": true, "user": false} {
			b, _ := os.ReadFile(filepath.Join(counts, name))
			runs := strings.Fields(string(b))
			if len(runs) != want {
				t.Errorf("%s: %s hook ran %d times in all (ancestries %q), want %d (once per Bash call)", phase, name, len(runs), runs, want)
			}
			for _, chain := range runs {
				if underClaude(chain) != byClaude {
					t.Errorf("%s: %s hook ran with ancestors %s; want run by Claude Code: %v", phase, name, chain, byClaude)
				}
			}
		}
		// The audit record of the PreToolUse says the managed hook was left to Claude Code.
		data, err := os.ReadFile(filepath.Join(state, "audit", "decisions.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		var notRun, projNotRun []string
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var r struct {
				Event string
				Hooks []struct{ Command, File, Outcome, Error string }
			}
			if err := dec.Decode(&r); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			for _, h := range r.Hooks {
				if r.Event == "PreToolUse" && strings.HasSuffix(h.Command, "managed.sh") {
					notRun = append(notRun, h.Outcome+" "+h.File+": "+h.Error)
				}
				if r.Event == "PreToolUse" && strings.HasSuffix(h.Command, "project.sh") {
					projNotRun = append(projNotRun, h.Outcome+" "+h.File+": "+h.Error)
				}
			}
		}
		if len(notRun) != want {
			t.Errorf("%s: audit records naming the managed hook: %q; want %d", phase, notRun, want)
		}
		for _, s := range notRun {
			if !strings.HasPrefix(s, "not_run "+managedFile+": run by Claude Code: managed hook") {
				t.Errorf("%s: managed hook in the audit log: %q; want not_run, run by Claude Code", phase, s)
			}
		}
		if len(projNotRun) != want {
			t.Errorf("%s: audit records naming the project hook: %q; want %d", phase, projNotRun, want)
		}
		for _, s := range projNotRun {
			if !strings.HasPrefix(s, "not_run "+projSettings+": run by Claude Code: this settings file's hooks were not moved") {
				t.Errorf("%s: project hook in the audit log: %q; want not_run, run by Claude Code", phase, s)
			}
		}
	}
	check("with the daemon", "native-ok", 1)
	d.Stop()
	check("hookc's fallback, no daemon", "fallback-ok", 2)
}
