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
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/test/claudeapi"
	"github.com/hookd/hookd/test/testutil"
)

// TestClaudeThirdPartyHooks (issue 23): the hooks Claude Code runs from outside the
// settings files, with the real binary, in three set-ups — natively, after `hookd install
// claude-code` at user scope, and under hookd's managed drop-in — in one world: a plugin
// installed with the real `claude plugin marketplace add` / `claude plugin install` from a
// local-directory marketplace, holding a PreToolUse guard that denies rm (and records its
// CLAUDE_PLUGIN_ROOT); a project subagent with frontmatter hooks (PreToolUse, and a Stop
// that Claude Code fires as SubagentStop); a project skill with a frontmatter PreToolUse
// hook and an embedded shell line; and a user settings hook beside them.
//
// Each set-up runs the same session: the model invokes the skill, runs echo and rm on the
// main thread, then the subagent (synchronously), which runs echo. Every hook records its
// process ancestry, so the test tells a run by Claude Code from one by hookd. It asserts:
// each hook ran as many times in each set-up as natively (never twice, never not at all);
// at user scope Claude Code ran the plugin, subagent and skill hooks and hookd reported
// them; under the drop-in hookd ran them all (Claude Code blocks them there) with the
// plugin's CLAUDE_PLUGIN_ROOT; the guard denied rm in all three; and hookd's decision log
// names plugin:guard@localmkt, agent:reviewer and skill:greet.
func TestClaudeThirdPartyHooks(t *testing.T) {
	ns := setupManagedNS(t)
	w := newManagedWorld(t)
	root, home, proj, state, sock, counts := w.root, w.home, w.proj, w.state, w.sock, w.counts
	write := w.write
	// record is a hook body: the ancestry chain and CLAUDE_PLUGIN_ROOT as one line in
	// counts/<name>; then extra (with the event JSON in $in).
	record := func(name, extra string) string {
		return "#!/bin/sh\nin=$(cat)\n" + ancestryChain +
			fmt.Sprintf("echo \"$chain ${CLAUDE_PLUGIN_ROOT:-none}\" >> %s\n", filepath.Join(counts, name)) + extra
	}
	hookScript := func(name string) string {
		p := filepath.Join(root, "h", name+".sh")
		write(p, record(name, ""), 0o755)
		return p
	}

	// The marketplace and its plugin.
	mkt := filepath.Join(root, "mkt")
	guard := filepath.Join(mkt, "plugins", "guard")
	write(filepath.Join(mkt, ".claude-plugin", "marketplace.json"), `{"name": "localmkt", "owner": {"name": "hookd tests"}, "plugins": [{"name": "guard", "source": "./plugins/guard", "description": "denies rm"}]}`, 0o644)
	write(filepath.Join(guard, ".claude-plugin", "plugin.json"), `{"name": "guard", "version": "1.0.0", "description": "denies rm"}`, 0o644)
	write(filepath.Join(guard, "guard.sh"), record("plugin-guard", `case "$in" in *'rm -rf /tmp/hookd-e2e-nothing'*)
  echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "guard: no rm"}}';;
esac
`), 0o755)
	write(filepath.Join(guard, "hooks", "hooks.json"), `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}/guard.sh\""}]}]}}`, 0o644)
	// The project's subagent and skill, and the settings.
	write(filepath.Join(proj, ".claude", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: Reviews the code when asked to review\nhooks:\n"+
		"  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: "+hookScript("agent-pre")+"\n"+
		"  Stop:\n    - hooks:\n        - type: command\n          command: "+hookScript("agent-stop")+"\n---\nYou review code.\n", 0o644)
	write(filepath.Join(proj, ".claude", "skills", "greet", "SKILL.md"), "---\nname: greet\ndescription: Greets\nhooks:\n"+
		"  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: "+hookScript("skill-pre")+"\n"+
		"---\nGreet: !`echo GREET-LINE`\n", 0o644)
	userSettings := filepath.Join(home, ".claude", "settings.json")
	write(userSettings, `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "`+hookScript("settings-pre")+`"}]}]}}`+"\n", 0o644)
	write(filepath.Join(proj, ".claude", "settings.json"), `{"permissions": {"allow": ["Bash(echo *)", "Bash(rm *)", "Skill(greet)"]}}`+"\n", 0o644)
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{proj: map[string]any{"hasTrustDialogAccepted": true}}})
	write(filepath.Join(home, ".claude.json"), string(trust), 0o644)

	witness := filepath.Join(root, "bin", "hookc")
	write(witness, fmt.Sprintf("#!/bin/sh\nexec %s \"$@\"\n", bin.hookc), 0o755)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"XDG_CONFIG_HOME=" + filepath.Join(root, "xdg-config"), "XDG_STATE_HOME=" + filepath.Join(root, "xdg-state"),
		"HOOKD_SOCKET=" + sock, "HOOKD_BIN=" + bin.hookd, "HOOKD_STATE_DIR=" + state}
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Second)
	defer cancel()
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := ns.command(ctx, proj, name, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
		}
		return string(out)
	}
	t.Log(run(bin.claude, "plugin", "marketplace", "add", mkt))
	t.Log(run(bin.claude, "plugin", "install", "guard@localmkt"))

	// One session; what each hook recorded (ancestry, root), reset for the next set-up.
	type result struct {
		runs   map[string][]string
		denied bool
		stdout string
	}
	hooks := []string{"plugin-guard", "agent-pre", "agent-stop", "skill-pre", "settings-pre"}
	session := func(phase string) result {
		t.Helper()
		srv := claudeapi.Start(t, []claudeapi.Turn{
			{ToolName: "Skill", ToolInput: map[string]any{"skill": "greet"}},
			bash("echo main-one"),
			bash("rm -rf /tmp/hookd-e2e-nothing"),
			{ToolName: "Agent", ToolInput: map[string]any{"subagent_type": "reviewer", "description": "review", "prompt": "review it", "run_in_background": false}},
			bash("echo sub-one"),
			say("sub done"),
			say("finished"),
		})
		cmd := ns.command(ctx, proj, bin.claude, "-p", "go", "--output-format", "stream-json", "--verbose", "--include-hook-events")
		cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: claude: %v\nstderr: %s\nstdout: %s", phase, err, stderr.String(), stdout.String())
		}
		r := result{runs: map[string][]string{}, stdout: stdout.String()}
		for _, h := range hooks {
			b, _ := os.ReadFile(filepath.Join(counts, h))
			if s := strings.TrimSpace(string(b)); s != "" {
				r.runs[h] = strings.Split(s, "\n")
			}
			os.Remove(filepath.Join(counts, h))
		}
		r.denied = strings.Contains(r.stdout, "guard: no rm")
		t.Logf("%s: %v", phase, r.runs)
		return r
	}
	byHookd := func(line string) bool { // the nearest of claude and hookd among its ancestors
		h, c := strings.Index(line, "/hookd/"), strings.Index(line, "/claude/")
		return h >= 0 && (c < 0 || h < c)
	}

	native := session("native")
	for _, h := range hooks {
		if len(native.runs[h]) == 0 {
			t.Errorf("native: %s never ran — the world is wrong, not hookd", h)
		}
	}
	if !native.denied {
		t.Errorf("native: the plugin's guard did not deny rm:\n%s", native.stdout)
	}

	startDaemon := func() *testutil.Daemon {
		daemon := ns.command(context.Background(), "/", bin.hookd, "--socket", sock, "--user-dir", filepath.Join(home, ".claude"), "--state-dir", state, "serve")
		daemon.Env = env
		return testutil.StartDaemon(t, testutil.DaemonOptions{Cmd: daemon, Socket: sock})
	}
	audited := func() map[string]map[string]int { // source → outcome → count, PreToolUse/SubagentStop
		data, _ := os.ReadFile(filepath.Join(state, "audit", "decisions.jsonl"))
		out := map[string]map[string]int{}
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var r struct {
				Hooks []struct{ Source, Outcome string }
			}
			if err := dec.Decode(&r); err == io.EOF || err != nil {
				break
			}
			for _, h := range r.Hooks {
				if out[h.Source] == nil {
					out[h.Source] = map[string]int{}
				}
				out[h.Source][h.Outcome]++
			}
		}
		os.Remove(filepath.Join(state, "audit", "decisions.jsonl"))
		return out
	}
	compare := func(phase string, got result, hookdRuns map[string]bool) {
		t.Helper()
		if !got.denied {
			t.Errorf("%s: the plugin's guard did not deny rm", phase)
		}
		for _, h := range hooks {
			if len(got.runs[h]) != len(native.runs[h]) {
				t.Errorf("%s: %s ran %d times, natively %d", phase, h, len(got.runs[h]), len(native.runs[h]))
			}
			for i, line := range got.runs[h] {
				if byHookd(line) != hookdRuns[h] {
					t.Errorf("%s: %s run %d by hookd=%v, want %v (%s)", phase, h, i, byHookd(line), hookdRuns[h], line)
				}
				if f := strings.Fields(line); i < len(native.runs[h]) && len(f) == 2 && f[1] != strings.Fields(native.runs[h][i])[1] {
					t.Errorf("%s: %s ran with CLAUDE_PLUGIN_ROOT %s, natively %s", phase, h, f[1], strings.Fields(native.runs[h][i])[1])
				}
			}
		}
	}

	// hookd at user scope: Claude Code still runs plugin, subagent and skill hooks.
	t.Log(run(bin.hookd, "install", "claude-code", "--scope", "user", "--hookc", witness))
	d := startDaemon()
	user := session("user scope")
	compare("user scope", user, map[string]bool{"settings-pre": true})
	// The user-scope install forwards the events its moved hooks need (PreToolUse here):
	// hookd reports the plugin's and the subagent's hooks as Claude Code's; it never sees
	// the Skill call's PostToolUse, so it has no record of the skill at all.
	a := audited()
	for _, src := range []string{"plugin:guard@localmkt", "agent:reviewer", "skill:greet"} {
		if len(a[src]) > 1 || len(a[src]) == 1 && a[src]["not_run"] == 0 || src != "skill:greet" && len(a[src]) == 0 {
			t.Errorf("user scope: the decision log records %s as %v, want only not_run (run by Claude Code)", src, a[src])
		}
	}
	d.Stop()
	t.Log(run(bin.hookd, "uninstall", "claude-code", "--scope", "user"))

	// hookd's managed drop-in: Claude Code blocks them; hookd runs every one.
	out := run(bin.hookd, "install", "claude-code", "--scope", "managed", "--hookc", witness)
	t.Log(out)
	if !strings.Contains(out, "plugin:guard@localmkt") {
		t.Errorf("install --scope managed does not list the plugin hook it takes over:\n%s", out)
	}
	d = startDaemon()
	st := run(bin.hookd, "--socket", sock, "status")
	if strings.Contains(st, "nowhere") {
		t.Errorf("status under the drop-in names hooks that run nowhere:\n%s", st)
	}
	managed := session("managed drop-in")
	compare("managed drop-in", managed, map[string]bool{"plugin-guard": true, "agent-pre": true, "agent-stop": true, "skill-pre": true, "settings-pre": true})
	a = audited()
	var srcs []string
	for s := range a {
		srcs = append(srcs, s)
	}
	sort.Strings(srcs)
	for _, src := range []string{"plugin:guard@localmkt", "agent:reviewer", "skill:greet"} {
		if a[src]["not_run"] != 0 || len(a[src]) == 0 {
			t.Errorf("managed drop-in: the decision log records %s as %v (sources %v), want run by hookd", src, a[src], srcs)
		}
	}
	d.Stop()
	t.Log(run(bin.hookd, "uninstall", "claude-code", "--scope", "managed"))
}
