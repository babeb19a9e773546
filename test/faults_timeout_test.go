package test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Issue 13, defect 6 (the part left): hookc waited 590 s whatever the event, so where
// Claude Code's own timeout is shorter (UserPromptSubmit: 30 s) Claude Code gave up on
// hookc first and went on as if no hook had answered. Now the installed forwarder passes
// its own --timeout, a margin below its handler timeout, and hookc without one derives
// its timeout from the event's default.
func TestFaultForwarderTimeout(t *testing.T) {
	e := NewEnv(t)
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{
			map[string]any{"type": "command", "command": "sleep 600", "timeout": 900}}}},
		"UserPromptSubmit": []any{map[string]any{"hooks": []any{
			map[string]any{"type": "command", "command": "sleep 600", "timeout": 100}}}},
	}})
	e.WriteSettings("project", string(settings))
	// The shell form (a command line with hookc's --timeout in it), whatever claude is on
	// PATH; the exec form's args are configs/install's TestExecFormForwarders.
	if r := e.Hookd("", "install", "claude-code", "--scope", "project", "--project", e.Project, "--hookc", bins.hookc, "--forwarder-form", "shell"); r.Code != 0 {
		t.Fatalf("install: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	var installed struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string  `json:"command"`
				Timeout float64 `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	b, _ := os.ReadFile(e.SettingsPath("project"))
	if err := json.Unmarshal(b, &installed); err != nil {
		t.Fatal(err)
	}
	fwd := func(event string) (string, float64) {
		for _, g := range installed.Hooks[event] {
			for _, h := range g.Hooks {
				if strings.HasPrefix(h.Command, bins.hookc) {
					return h.Command, h.Timeout
				}
			}
		}
		t.Fatalf("no forwarder for %s in\n%s", event, b)
		return "", 0
	}
	// The moved hook's 900 s plus the installer's 30 s margin for hookd to answer; hookc
	// gives up 10 s before Claude Code would.
	for event, want := range map[string]struct {
		cmd     string
		timeout float64
	}{
		"PreToolUse":       {bins.hookc + " --timeout 920s", 930},
		"UserPromptSubmit": {bins.hookc + " --timeout 590s", 600},
	} {
		if cmd, to := fwd(event); cmd != want.cmd || to != want.timeout {
			t.Errorf("%s forwarder: %q timeout %v, want %q timeout %v", event, cmd, to, want.cmd, want.timeout)
		}
	}
	e.Start()

	// The installed command line is what Claude Code runs (through a shell): hookc
	// accepts it. (An event nobody hooks, so it answers at once.)
	cmdline, _ := fwd("PreToolUse")
	sh := exec.Command("/bin/sh", "-c", cmdline)
	sh.Env, sh.Dir = append(e.BaseEnv(), "CLAUDE_PROJECT_DIR="+e.Project), e.Project
	sh.Stdin = strings.NewReader(e.Payload("Notification", map[string]any{"message": "hi", "notification_type": "idle_prompt"}))
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the installed forwarder command %q: %v\n%s", cmdline, err, out)
	}

	// A forwarder without --timeout (written by hand, or by an older installer) on a
	// UserPromptSubmit whose hook hangs: hookc answers fail-closed before Claude Code's
	// 30 s default would have let the prompt through.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, bins.hookc)
	c.Env, c.Dir = append(e.BaseEnv(), "CLAUDE_PROJECT_DIR="+e.Project), e.Project
	c.Stdin = strings.NewReader(e.Payload("UserPromptSubmit", map[string]any{"prompt": "deploy to prod"}))
	var stderr strings.Builder
	c.Stderr = &stderr
	start := time.Now()
	err := c.Run()
	took := time.Since(start)
	code := c.ProcessState.ExitCode()
	if ctx.Err() != nil {
		t.Fatalf("hookc still waiting after %v (Claude Code gives up at 30 s and lets the prompt through)", took.Round(time.Second))
	}
	if code != 2 || !strings.Contains(stderr.String(), "deadline") && !strings.Contains(stderr.String(), "timeout") && !strings.Contains(stderr.String(), "timed out") {
		t.Fatalf("hookc on a hung UserPromptSubmit: exit %d (%v), stderr %q", code, err, stderr.String())
	}
	if took >= 30*time.Second {
		t.Fatalf("hookc answered after %v, not before Claude Code's 30 s", took)
	}
	t.Logf("faults_timeout: installed forwarders: PreToolUse (hook timeout 900 s) %q timeout 930; UserPromptSubmit %q timeout 600; hookc without --timeout on a hung UserPromptSubmit: exit 2 after %v (Claude Code: 30 s)",
		cmdline, bins.hookc+" --timeout 590s", took.Round(100*time.Millisecond))
}
