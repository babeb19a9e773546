//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/test/claudeapi"
)

// modelSwitch is one scenario for PreModelSwitch / PostModelSwitch (Claude Code 2.1.251):
// the session is driven through the SDK's stream-json input, where a set_model control
// request switches the model (source "sdk") — how the golden payloads were captured.
type modelSwitch struct {
	Name   string
	Hooks  []hook
	Model  string         // the set_model request's model
	Counts map[string]int // how often each counted hook runs
}

var modelSwitches = []modelSwitch{
	{Name: "model-switch-deny", Model: "claude-sonnet-4-5",
		Hooks: []hook{{Name: "deny", Event: "PreModelSwitch", Matcher: "claude-sonnet-4-5",
			Body: emit(`{"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"deny","permissionDecisionReason":"no sonnet here"}}`, "", 0)},
			{Name: "post", Event: "PostModelSwitch", Matcher: "*", Body: emit("", "", 0)}},
		Counts: map[string]int{"deny": 1}},
	{Name: "model-switch-allow", Model: "claude-sonnet-4-5",
		Hooks: []hook{{Name: "allow", Event: "PreModelSwitch", Matcher: "*",
			Body: emit(`{"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"allow"}}`, "", 0)},
			{Name: "post", Event: "PostModelSwitch", Matcher: "claude-sonnet.*", Body: emit("", "", 0)}},
		Counts: map[string]int{"allow": 1, "post": 1}},
	{Name: "model-switch-exit2", Model: "claude-sonnet-4-5",
		Hooks:  []hook{{Name: "a", Event: "PreModelSwitch", Matcher: "*", Body: emit("", "not now", 2)}},
		Counts: map[string]int{"a": 1}},
	{Name: "model-switch-1m-suffix", Model: "claude-sonnet-4-5[1m]",
		Hooks: []hook{{Name: "deny", Event: "PreModelSwitch", Matcher: "claude-sonnet-4-5",
			Body: emit(`{"hookSpecificOutput":{"hookEventName":"PreModelSwitch","permissionDecision":"deny","permissionDecisionReason":"no sonnet here"}}`, "", 0)}},
		Counts: map[string]int{"deny": 1}},
	{Name: "model-switch-timeout", Model: "claude-sonnet-4-5",
		Hooks:  []hook{{Name: "slow", Event: "PreModelSwitch", Matcher: "*", Timeout: 1, Body: "sleep 4\n" + emit("", "", 0)}},
		Counts: map[string]int{"slow": 1}},
}

func TestClaudeModelSwitch(t *testing.T) {
	for _, ms := range modelSwitches {
		if only := os.Getenv("HOOKD_E2E_ONLY"); only != "" && !strings.Contains(ms.Name, strings.Trim(only, "^$")) {
			continue
		}
		t.Run(ms.Name, func(t *testing.T) {
			t.Parallel()
			native, nc := runModelSwitch(t, ms, "native")
			hookd, hc := runModelSwitch(t, ms, "hookd")
			if native != hookd {
				t.Errorf("set_model answer differs:\n native: %s\n  hookd: %s", native, hookd)
			}
			for name, want := range ms.Counts {
				if nc[name] != want || hc[name] != want {
					t.Errorf("hook %s ran %d times natively and %d through hookd; want %d", name, nc[name], hc[name], want)
				}
			}
			t.Logf("set_model answer (both): %s", native)
		})
	}
}

// runModelSwitch starts a stream-json session, sends initialize and set_model, and
// returns the set_model control response (scratch paths replaced) and the hook counts.
func runModelSwitch(t *testing.T, ms modelSwitch, mode string) (string, map[string]int) {
	t.Helper()
	w, env := streamWorld(t, "hke2e-ms-", ms.Name, ms.Hooks, mode)
	srv := claudeapi.Start(t, []claudeapi.Turn{say("ok")})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.claude, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	cmd.Dir = w.Proj
	cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdin, `{"type":"control_request","request_id":"init","request":{"subtype":"initialize"}}`)
	req, _ := json.Marshal(map[string]any{"type": "control_request", "request_id": "switch",
		"request": map[string]any{"subtype": "set_model", "model": ms.Model}})
	fmt.Fprintln(stdin, string(req))
	answer := ""
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m struct {
			Type     string `json:"type"`
			Response struct {
				RequestID string `json:"request_id"`
			} `json:"response"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Type == "control_response" && m.Response.RequestID == "switch" {
			answer = strings.ReplaceAll(sc.Text(), w.Root, "$ROOT")
			break
		}
	}
	// PostModelSwitch runs after the set_model answer; closing stdin ends the session and
	// can cut a hook still starting on a loaded machine (natively as through hookd). Give
	// every hook that should run the time to do so; the counts below are the assertion.
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c := countRuns(w); countsReached(c, ms.Counts) {
			break
		}
	}
	stdin.Close()
	_ = cmd.Wait()
	if answer == "" {
		t.Fatalf("%s: no answer to set_model", mode)
	}
	return answer, countRuns(w)
}

// countRuns reads how often each counted hook ran.
func countRuns(w *world) map[string]int {
	counts := map[string]int{}
	ents, _ := os.ReadDir(w.path("counts"))
	for _, e := range ents {
		data, _ := os.ReadFile(w.path("counts", e.Name()))
		counts[e.Name()] = strings.Count(string(data), "run")
	}
	return counts
}

// countsReached says whether every hook expected to run has run at least as often as
// expected (a hook expected not to run cannot be waited for).
func countsReached(got, want map[string]int) bool {
	for name, n := range want {
		if got[name] < n {
			return false
		}
	}
	return true
}

// streamWorld makes the scratch HOME and project of a stream-json session test: the
// hooks in the project's settings (moved into hookd.json by a project install, with a
// daemon, when mode is "hookd"). It returns the world and Claude Code's environment.
func streamWorld(t *testing.T, prefix, name string, hooks []hook, mode string) (*world, []string) {
	t.Helper()
	root, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	w := &world{Mode: mode, Root: root, Home: filepath.Join(root, "home"), Proj: filepath.Join(root, "proj"),
		Socket: filepath.Join(root, "s.sock"), sc: &scenario{Name: name}}
	for _, d := range []string{filepath.Join(w.Home, ".claude"), filepath.Join(w.Proj, ".claude"), w.path("counts"), w.path("managed"), w.path("state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{w.Proj: map[string]any{"hasTrustDialogAccepted": true}}})
	w.Write(t, filepath.Join(w.Home, ".claude.json"), string(trust), 0o644)
	b, _ := json.MarshalIndent(map[string]any{"hooks": w.hooksByScope(t, hooks)["project"]}, "", "  ")
	w.Write(t, w.SettingsPath("project"), string(b)+"\n", 0o644)

	env := claudeEnv(w, mode)
	if mode == "hookd" {
		hookdCmd(t, w, env, "install", "claude-code", "--scope", "project", "--project", w.Proj, "--hookc", bin.hookc)
		startDaemon(t, w, env)
	}
	return w, env
}
