//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/test/claudeapi"
	"github.com/hookd/hookd/test/modelapi"
)

// The multi-harness suite runs the real Codex CLI (HOOKD_CODEX_BIN) and Gemini CLI
// (HOOKD_GEMINI_JS, run with node), installed by install-harnesses.sh, offline against the
// loopback model stand-ins of package modelapi: once with the hooks configured natively in
// the harness's own file, once after `hookd install codex|gemini` (the same hooks moved
// into hookd.json, forwarders in their place) with a daemon whose Claude Code settings
// carry the team's policy. One session per mode exercises, in order:
//
//	the prompt hook's additional context  (Codex UserPromptSubmit / Gemini BeforeAgent)
//	a hook's deny                         (echo hookdeny … → blocked, reason to the model)
//	a deny rule beating a hook's allow    (rm → the hook allows; Bash(rm:*) in ~/.claude denies)
//	an allowed command                    (echo ok … → runs)
//	a Stop/AfterAgent block               (the turn's end is blocked once; the model goes on)
//
// and the two modes must agree on everything but the documented difference: natively the
// harness does not know Claude Code's permission rules, so there the rm runs.

type harnessCLI struct {
	name string
	// hooks writes the scenario's hooks into the harness's own configuration.
	hooks func(t *testing.T, w *hworld)
	// cmd builds the harness's command line for one prompt.
	cmd func(w *hworld, srv *modelapi.Server, prompt string) *exec.Cmd
	// settings is the harness file `hookd install` edits.
	settings func(w *hworld) string
}

type hworld struct {
	Root, Home, Proj, Socket string
}

func (w *hworld) path(p ...string) string { return filepath.Join(append([]string{w.Root}, p...)...) }

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func newHWorld(t *testing.T) *hworld {
	root, err := os.MkdirTemp("", "hkh-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() || os.Getenv("HOOKD_E2E_KEEP") == "" {
			os.RemoveAll(root)
		}
	})
	w := &hworld{Root: root, Home: filepath.Join(root, "home"), Proj: filepath.Join(root, "proj"), Socket: filepath.Join(root, "s.sock")}
	for _, d := range []string{w.Proj, w.path("counts"), w.path("managed"), w.path("state"), filepath.Join(w.Home, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// hookScript writes $ROOT/h/<name>.sh: it counts its run, then runs body with the payload
// in $IN.
func (w *hworld) hookScript(t *testing.T, name, body string) string {
	p := w.path("h", name+".sh")
	write(t, p, fmt.Sprintf("#!/bin/sh\nIN=$(cat)\necho x >> %s\n%s\n", w.path("counts", name), body), 0o755)
	return p
}

func (w *hworld) count(name string) int {
	b, _ := os.ReadFile(w.path("counts", name))
	return bytes.Count(b, []byte("\n"))
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// The scenario's hook bodies, one per harness format.
const (
	ctxMarker  = "CTX-7F3A-MARKER"
	denyReason = "HOOK-DENY-REASON-51"
	stopReason = "STOP-AGAIN-REASON-88"
)

var codexCLI = harnessCLI{
	name: "codex",
	hooks: func(t *testing.T, w *hworld) {
		ups := w.hookScript(t, "prompt", `echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"`+ctxMarker+`"}}'`)
		pre := w.hookScript(t, "pre", `case "$IN" in
*hookdeny*) echo "`+denyReason+`" >&2; exit 2 ;;
*"rm "*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"hook says fine"}}' ;;
esac`)
		stop := w.hookScript(t, "stop", `if [ ! -e `+w.path("stopped")+` ]; then touch `+w.path("stopped")+`; echo '{"decision":"block","reason":"`+stopReason+`"}'; fi`)
		hooks := map[string]any{"hooks": map[string]any{
			"UserPromptSubmit": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": ups}}}},
			"PreToolUse":       []any{map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": pre}}}},
			"Stop":             []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": stop}}}},
		}}
		b, _ := json.MarshalIndent(hooks, "", "  ")
		write(t, filepath.Join(w.Home, ".codex", "hooks.json"), string(b), 0o644)
	},
	cmd: func(w *hworld, srv *modelapi.Server, prompt string) *exec.Cmd {
		cfg := fmt.Sprintf("model_provider = \"mock\"\nmodel = \"gpt-5\"\n[model_providers.mock]\nname = \"mock\"\nbase_url = %q\nwire_api = \"responses\"\nenv_key = \"MOCK_API_KEY\"\n", srv.URL+"/v1")
		_ = os.WriteFile(filepath.Join(w.Home, ".codex", "config.toml"), []byte(cfg), 0o644)
		cmd := exec.Command(hbin.codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "--sandbox", "danger-full-access", prompt)
		cmd.Env = append(w.env(), "CODEX_HOME="+filepath.Join(w.Home, ".codex"), "MOCK_API_KEY=x")
		return cmd
	},
	settings: func(w *hworld) string { return filepath.Join(w.Home, ".codex", "hooks.json") },
}

var geminiCLI = harnessCLI{
	name: "gemini",
	hooks: func(t *testing.T, w *hworld) {
		ba := w.hookScript(t, "prompt", `echo '{"hookSpecificOutput":{"additionalContext":"`+ctxMarker+`"}}'`)
		bt := w.hookScript(t, "pre", `case "$IN" in
*hookdeny*) echo '{"decision":"deny","reason":"`+denyReason+`"}' ;;
*"rm "*) echo '{"decision":"allow"}' ;;
esac`)
		aa := w.hookScript(t, "stop", `if [ ! -e `+w.path("stopped")+` ]; then touch `+w.path("stopped")+`; echo '{"decision":"deny","reason":"`+stopReason+`"}'; fi`)
		s := map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}, "hooks": map[string]any{
			"BeforeAgent": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": ba, "name": "prompt"}}}},
			"BeforeTool":  []any{map[string]any{"matcher": "run_shell_command", "hooks": []any{map[string]any{"type": "command", "command": bt, "name": "pre"}}}},
			"AfterAgent":  []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": aa, "name": "stop"}}}},
		}}
		b, _ := json.MarshalIndent(s, "", "  ")
		write(t, filepath.Join(w.Home, ".gemini", "settings.json"), string(b), 0o644)
	},
	cmd: func(w *hworld, srv *modelapi.Server, prompt string) *exec.Cmd {
		_ = os.WriteFile(filepath.Join(w.Home, ".gemini", "trustedFolders.json"), []byte(`{"`+w.Proj+`":"TRUST_FOLDER"}`), 0o644)
		cmd := exec.Command("node", hbin.gemini, "-p", prompt, "--yolo", "-m", "gemini-2.5-flash")
		// GEMINI_CLI_NO_RELAUNCH: Gemini otherwise re-executes itself in a second node with a
		// larger heap, doubling its start-up time.
		cmd.Env = append(w.env(), "GEMINI_API_KEY=x", "GOOGLE_GEMINI_BASE_URL="+srv.URL, "GEMINI_CLI_NO_RELAUNCH=true")
		return cmd
	},
	settings: func(w *hworld) string { return filepath.Join(w.Home, ".gemini", "settings.json") },
}

func (w *hworld) env() []string {
	return []string{"HOME=" + w.Home, "PATH=" + os.Getenv("PATH"), "HOOKD_SOCKET=" + w.Socket, "HOOKD_BIN=" + bin.hookd,
		"XDG_CONFIG_HOME=" + w.path("xdg-config"), "XDG_STATE_HOME=" + w.path("xdg-state"), "TERM=dumb"}
}

var hbin = struct{ codex, gemini string }{os.Getenv("HOOKD_CODEX_BIN"), os.Getenv("HOOKD_GEMINI_JS")}

func needHarness(t *testing.T, name string) {
	t.Helper()
	v := map[string]string{"codex": hbin.codex, "gemini": hbin.gemini}[name]
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("HOOKD_%s_BIN/JS unset and CI=true: make e2e installs %s (test/e2e/install-harnesses.sh)", strings.ToUpper(name), name)
		}
		t.Skipf("SKIP (loud): %s not installed; run `make e2e` (test/e2e/install-harnesses.sh %s) to run the %s suite", name, name, name)
	}
}

// hookdArgs point hookd at the world.
func (w *hworld) hookd(t *testing.T, args ...string) string {
	t.Helper()
	full := append([]string{"--socket", w.Socket, "--user-dir", filepath.Join(w.Home, ".claude"), "--managed-dir", w.path("managed"), "--state-dir", w.path("state")}, args...)
	cmd := exec.Command(bin.hookd, full...)
	cmd.Env, cmd.Dir = w.env(), w.Proj
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hookd %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (w *hworld) startDaemon(t *testing.T) {
	startDaemon(t, &world{Root: w.Root, Home: w.Home, Proj: w.Proj, Socket: w.Socket}, w.env())
}

type hobs struct {
	out, requests string
	counts        map[string]int
	marker        map[string]bool
}

// runHarness runs one prompt against a scripted model and observes the world.
func runHarness(t *testing.T, h harnessCLI, w *hworld, script []modelapi.Turn) *hobs {
	t.Helper()
	srv := modelapi.Start(t, script)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := h.cmd(w, srv, "go")
	c2 := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	c2.Env, c2.Dir = cmd.Env, w.Proj
	out, err := c2.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s timed out:\n%s", h.name, out)
	}
	_ = err // a blocked command may make the harness exit non-zero; the observations decide
	o := &hobs{out: string(out), requests: srv.AllText(), counts: map[string]int{}, marker: map[string]bool{}}
	for _, n := range []string{"prompt", "pre", "stop"} {
		o.counts[n] = w.count(n)
	}
	for _, m := range []string{"m1", "victim", "m3", "m4"} {
		o.marker[m] = exists(w.path(m))
	}
	return o
}

func scenarioScript(w *hworld) []modelapi.Turn {
	return []modelapi.Turn{
		{Shell: "echo hookdeny > " + w.path("m1")},
		{Shell: "rm " + w.path("victim")},
		{Shell: "echo ok > " + w.path("m3")},
		{Text: "finished"},
		{Text: "really finished"},
	}
}

func runMode(t *testing.T, h harnessCLI, mode string) (*hobs, *hworld) {
	w := newHWorld(t)
	write(t, w.path("victim"), "keep me\n", 0o644)
	// The team's policy, in Claude Code's user settings.
	write(t, filepath.Join(w.Home, ".claude", "settings.json"), `{"permissions":{"deny":["Bash(rm:*)"]}}`+"\n", 0o644)
	h.hooks(t, w)
	if mode == "hookd" {
		w.hookd(t, "install", h.name, "--hookc", bin.hookc)
		w.startDaemon(t)
	}
	o := runHarness(t, h, w, scenarioScript(w))
	if mode == "hookd" {
		if b, _ := os.ReadFile(h.settings(w)); !strings.Contains(string(b), "--harness "+h.name) {
			t.Fatalf("forwarder not installed: %s", b)
		}
		o.requests += "\n" + w.hookd(t, "audit", "query", "--harness", h.name, "--json")
	}
	return o, w
}

func testHarness(t *testing.T, h harnessCLI) {
	needHarness(t, h.name)
	native, _ := runMode(t, h, "native")
	hookd, w := runMode(t, h, "hookd")
	for _, o := range []struct {
		mode string
		o    *hobs
	}{{"native", native}, {"hookd", hookd}} {
		fail := func(format string, args ...any) {
			t.Errorf("%s %s: "+format+"\n--- output:\n%s", append([]any{h.name, o.mode}, append(args, o.o.out)...)...)
		}
		if !strings.Contains(o.o.requests, ctxMarker) {
			fail("the prompt hook's additional context did not reach the model")
		}
		if o.o.marker["m1"] {
			fail("the hook's deny did not block the command")
		}
		if !strings.Contains(o.o.requests, denyReason) {
			fail("the hook's deny reason did not reach the model")
		}
		if !o.o.marker["m3"] {
			fail("the allowed command did not run")
		}
		if !strings.Contains(o.o.requests, stopReason) {
			fail("the Stop/AfterAgent block's reason did not reach the model")
		}
	}
	// The documented difference: only through hookd do Claude Code's permission rules apply.
	if native.marker["victim"] {
		t.Errorf("%s native: the rm did not run (the hook allowed it, and %s does not read ~/.claude rules)\n%s", h.name, h.name, native.out)
	}
	if !hookd.marker["victim"] {
		t.Errorf("%s hookd: Bash(rm:*) in ~/.claude/settings.json did not beat the hook's allow\n%s", h.name, hookd.out)
	}
	if !strings.Contains(hookd.requests, "Bash(rm:*)") {
		t.Errorf("%s hookd: the rule's reason did not reach the model", h.name)
	}
	// Every hook ran as often as natively: moved, not duplicated, not lost.
	for n, c := range native.counts {
		if hookd.counts[n] != c || c == 0 {
			t.Errorf("%s: hook %s ran %d times natively, %d through hookd", h.name, n, c, hookd.counts[n])
		}
	}
	q := w.hookd(t, "audit", "query", "--harness", h.name, "--decision", "deny", "--json")
	if strings.Count(q, "\n") < 2 || !strings.Contains(q, `"harness":"`+h.name+`"`) {
		t.Errorf("%s: audit log lacks the two denies:\n%s", h.name, q)
	}

	// The daemon down and no engine to fall back on: hookc fails closed, the harmless
	// command does not run.
	wd := newHWorld(t)
	h.hooks(t, wd)
	wd.hookd(t, "install", h.name, "--hookc", bin.hookc)
	env := wd.env()
	for i, kv := range env {
		if strings.HasPrefix(kv, "HOOKD_BIN=") {
			env[i] = "HOOKD_BIN=" + wd.path("no-such-hookd")
		}
	}
	hc := h
	base := h.cmd
	hc.cmd = func(w *hworld, srv *modelapi.Server, prompt string) *exec.Cmd {
		c := base(w, srv, prompt)
		c.Env = append(c.Env, "HOOKD_BIN="+wd.path("no-such-hookd"))
		return c
	}
	down := runHarness(t, hc, wd, []modelapi.Turn{{Shell: "echo ok > " + wd.path("m4")}, {Text: "done"}})
	if down.marker["m4"] {
		t.Errorf("%s with hookd down: the command ran (must fail closed)\n%s", h.name, down.out)
	}
}

// The harness tests run in parallel with each other: each spends most of its time waiting
// for a CLI to start and its model stand-in to be asked.
func TestCodexNativeVsHookd(t *testing.T)  { t.Parallel(); testHarness(t, codexCLI) }
func TestGeminiNativeVsHookd(t *testing.T) { t.Parallel(); testHarness(t, geminiCLI) }

// TestAllHarnessesOnePolicy: one daemon, one ~/.claude/settings.json with a Bash(rm:*)
// deny rule, and Claude Code, Codex and Gemini CLI each asked to rm a file: all three are
// blocked, and the audit log holds three Bash records naming three harnesses.
func TestAllHarnessesOnePolicy(t *testing.T) {
	t.Parallel()
	needHarness(t, "codex")
	needHarness(t, "gemini")
	w := newHWorld(t)
	write(t, filepath.Join(w.Home, ".claude", "settings.json"), `{"permissions":{"allow":["Bash(rm *)"],"deny":["Bash(rm:*)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]}]}}`+"\n", 0o644)
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{w.Proj: map[string]any{"hasTrustDialogAccepted": true}}})
	write(t, filepath.Join(w.Home, ".claude.json"), string(trust), 0o644)
	write(t, filepath.Join(w.Home, ".gemini", "settings.json"), `{"security":{"auth":{"selectedType":"gemini-api-key"}}}`, 0o644)
	w.hookd(t, "install", "claude-code", "--scope", "user", "--hookc", bin.hookc)
	w.hookd(t, "install", "codex", "--hookc", bin.hookc)
	w.hookd(t, "install", "gemini", "--hookc", bin.hookc)
	w.startDaemon(t)
	for _, v := range []string{"v-claude", "v-codex", "v-gemini"} {
		write(t, w.path(v), "keep\n", 0o644)
	}

	// Claude Code.
	// Two attempts: Claude Code writes its transcript (where the record's harness_version
	// comes from) asynchronously, so the first tool call's hook may run before any line of
	// it is on disk; by the second, the first call's lines are.
	srv := claudeapi.Start(t, []claudeapi.Turn{bash("rm " + w.path("v-claude")), bash("rm " + w.path("v-claude")), say("done")})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin.claude, "-p", "go", "--output-format", "stream-json", "--verbose")
	cmd.Dir = w.Proj
	cmd.Env = append(w.env(), "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ANTHROPIC_BASE_URL="+srv.URL, "HOOKD_MANAGED_DIR="+w.path("managed"))
	out, _ := cmd.CombinedOutput()
	if !exists(w.path("v-claude")) {
		t.Errorf("claude-code ran the rm:\n%s", out)
	}
	for _, h := range []harnessCLI{codexCLI, geminiCLI} {
		o := runHarness(t, h, w, []modelapi.Turn{{Shell: "rm " + w.path("v-"+h.name)}, {Text: "done"}})
		if !exists(w.path("v-" + h.name)) {
			t.Errorf("%s ran the rm:\n%s", h.name, o.out)
		}
	}
	q := w.hookd(t, "audit", "query", "--tool", "Bash", "--json")
	harnesses, versions := map[string]bool{}, map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(q), "\n") {
		var r struct {
			Harness    string `json:"harness"`
			Version    string `json:"harness_version"`
			Decision   string `json:"decision"`
			RuleAnswer *struct {
				Decision, Rule string
			} `json:"rule_answer"`
		}
		if json.Unmarshal([]byte(line), &r) != nil || r.RuleAnswer == nil || r.RuleAnswer.Rule != "Bash(rm:*)" || r.RuleAnswer.Decision != "deny" {
			continue
		}
		if r.Harness == "" {
			r.Harness = "claude-code"
		}
		harnesses[r.Harness] = true
		if r.Version != "" {
			versions[r.Harness] = r.Version
		}
	}
	// Codex's version comes from its transcript's session_meta; Claude Code's from its
	// transcript lines once they are written (at the latest for the second attempt);
	// Gemini names none.
	if versions["codex"] != "0.171.0" {
		t.Errorf("codex record's harness_version = %q, want 0.171.0", versions["codex"])
	}
	if versions["claude-code"] == "" {
		t.Errorf("claude-code record has no harness_version")
	}
	t.Logf("harness versions in the audit log: %v", versions)
	if len(harnesses) != 3 {
		t.Errorf("audit log: Bash(rm:*) denials from %v, want claude-code, codex and gemini:\n%s", harnesses, q)
	}
}
