package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/daemon/runner/zygote"
)

// corpusSetup is one real-world hook setup of the corpus (test/bench/corpus/manifest.tsv):
// how a user following the package's README (or running its installer) ends up with its
// hooks in Claude Code's settings. Commands are kept byte for byte; where the package is a
// Claude Code *plugin* (its hooks in hooks/hooks.json, commands using ${CLAUDE_PLUGIN_ROOT}),
// the hooks go into the user's settings.json with ${CLAUDE_PLUGIN_ROOT} replaced by the
// package's path, as a user copying them by hand does: hookd moves hooks from settings
// files, not from plugins, and Claude Code 2.1.330 refuses a settings hook that mentions
// ${CLAUDE_PLUGIN_ROOT} ("the hook is not associated with a plugin").
type corpusSetup struct {
	id string
	// prepare writes the setup's files and returns the hooks per settings scope
	// ("user", "project", "local") plus extra top-level settings keys per scope.
	prepare func(w *corpusWorld) (map[string]map[string]any, error)
}

// corpusWorld is one session's scratch world: HOME, project, an npm global prefix holding
// a private copy of the setup's package (so that whatever a run writes into the package —
// a __pycache__, a log — is seen by the footprint check, and no run sees another's).
type corpusWorld struct {
	root, home, proj, prefix string
	cache                    string // the corpus cache (fetch.sh)
}

// pkg copies the installed package name from the cache into the world's prefix and
// returns its path there.
func (w *corpusWorld) pkg(name string) (string, error) {
	src := filepath.Join(w.cache, "prefix", "lib", "node_modules", name)
	dst := filepath.Join(w.prefix, "lib", "node_modules", name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copy %s: %v\n%s", name, err, out)
	}
	return dst, nil
}

// bin links prefix/bin/name to target (as `npm install -g` does).
func (w *corpusWorld) bin(name, target string) error {
	if err := os.MkdirAll(filepath.Join(w.prefix, "bin"), 0o755); err != nil {
		return err
	}
	return os.Symlink(target, filepath.Join(w.prefix, "bin", name))
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// pluginHooks reads a plugin's hooks/hooks.json, keeps its command hooks (an "agent" or
// "prompt" hook would need a real model) and puts dir in place of ${CLAUDE_PLUGIN_ROOT}.
func pluginHooks(dir string) (map[string]any, error) {
	var f struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	if err := readJSON(filepath.Join(dir, "hooks", "hooks.json"), &f); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for ev, groups := range f.Hooks {
		var keep []any
		for _, g := range groups {
			hs, _ := g["hooks"].([]any)
			var cmds []any
			for _, h := range hs {
				if m, ok := h.(map[string]any); ok && m["type"] == "command" {
					c, _ := m["command"].(string)
					m["command"] = strings.NewReplacer("${CLAUDE_PLUGIN_ROOT}", dir, "$CLAUDE_PLUGIN_ROOT", dir).Replace(c)
					cmds = append(cmds, m)
				}
			}
			if len(cmds) > 0 {
				g["hooks"] = cmds
				keep = append(keep, g)
			}
		}
		if len(keep) > 0 {
			out[ev] = keep
		}
	}
	return out, nil
}

func cmdHook(matcher, command string) map[string]any {
	g := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}
	if matcher != "" {
		g["matcher"] = matcher
	}
	return g
}

var corpusSetups = []corpusSetup{
	{id: "claudia", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
		// claudia-mentor: a plugin of 17 Python hooks (python3 ${CLAUDE_PLUGIN_ROOT}/hooks/scripts/*.py).
		dir, err := w.pkg("claudia-mentor")
		if err != nil {
			return nil, err
		}
		hooks, err := pluginHooks(dir)
		if err != nil {
			return nil, err
		}
		// Its SessionStart hook asks npm for the latest version once a day (a network call);
		// a user's session normally finds today's answer cached, as here.
		check, _ := json.Marshal(map[string]any{"last_check_date": time.Now().Format("2006-01-02"), "latest": "0.9.2"})
		if err := os.WriteFile(filepath.Join(w.home, ".claude", "claudia_update_check.json"), check, 0o644); err != nil {
			return nil, err
		}
		return map[string]map[string]any{"user": {"hooks": hooks}}, nil
	}},
	{id: "torka-qol", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
		// @torka/claude-qol: its installer copies the scripts into <project>/.claude/scripts;
		// the README's settings are examples/settings.local.example.json.
		dir, err := w.pkg("@torka/claude-qol")
		if err != nil {
			return nil, err
		}
		scripts := filepath.Join(w.proj, ".claude", "scripts")
		if err := os.MkdirAll(scripts, 0o755); err != nil {
			return nil, err
		}
		for _, f := range []string{"hooks/auto_approve_safe.py", "hooks/auto_approve_safe.rules.json", "scripts/context-monitor.py"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				return nil, err
			}
			if err := os.WriteFile(filepath.Join(scripts, filepath.Base(f)), b, 0o755); err != nil {
				return nil, err
			}
		}
		var ex map[string]any
		if err := readJSON(filepath.Join(dir, "examples", "settings.local.example.json"), &ex); err != nil {
			return nil, err
		}
		return map[string]map[string]any{"local": ex}, nil
	}},
	{id: "cc-safety-net", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
		// cc-safety-net: `npm install -g cc-safety-net`, the Claude Code hook is
		// `cc-safety-net hook --claude-code` (its CLI help) on Bash.
		dir, err := w.pkg("cc-safety-net")
		if err != nil {
			return nil, err
		}
		if err := w.bin("cc-safety-net", filepath.Join(dir, "dist", "bin", "cc-safety-net.js")); err != nil {
			return nil, err
		}
		return map[string]map[string]any{"user": {"hooks": map[string]any{"PreToolUse": []any{cmdHook("Bash", "cc-safety-net hook --claude-code")}}}}, nil
	}},
	{id: "selfish", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
		// selfish-pipeline: a plugin of bash scripts; its one "agent" Stop hook is left out.
		dir, err := w.pkg("selfish-pipeline")
		if err != nil {
			return nil, err
		}
		hooks, err := pluginHooks(dir)
		if err != nil {
			return nil, err
		}
		return map[string]map[string]any{"user": {"hooks": hooks}}, nil
	}},
	{id: "block-no-verify", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
		// block-no-verify: a dev dependency of the project; the README's
		// `pnpm exec block-no-verify` resolves to node_modules/.bin (pnpm is not installed here).
		dir, err := w.pkg("block-no-verify")
		if err != nil {
			return nil, err
		}
		nm := filepath.Join(w.proj, "node_modules")
		if err := os.MkdirAll(filepath.Join(nm, ".bin"), 0o755); err != nil {
			return nil, err
		}
		if err := os.Rename(dir, filepath.Join(nm, "block-no-verify")); err != nil {
			return nil, err
		}
		if err := os.Symlink("../block-no-verify/dist/cli.js", filepath.Join(nm, ".bin", "block-no-verify")); err != nil {
			return nil, err
		}
		c := "node_modules/.bin/block-no-verify"
		return map[string]map[string]any{"project": {"hooks": map[string]any{"PreToolUse": []any{cmdHook("Bash", c), cmdHook("mcp__github__.*", c)}}}}, nil
	}},
	{id: "cc-starter", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
		// claude-code-starter: its installer writes two Node hooks into <project>/.claude/hooks
		// (the scripts are string constants in its dist/cli.js) and registers them in the
		// project's settings.json (installHook, installSensitiveHook).
		dir, err := w.pkg("claude-code-starter")
		if err != nil {
			return nil, err
		}
		src, err := os.ReadFile(filepath.Join(dir, "dist", "cli.js"))
		if err != nil {
			return nil, err
		}
		hooksDir := filepath.Join(w.proj, ".claude", "hooks")
		if err := os.MkdirAll(hooksDir, 0o755); err != nil {
			return nil, err
		}
		for name, file := range map[string]string{"HOOK_SCRIPT": "block-dangerous-commands.js", "SENSITIVE_FILES_HOOK": "protect-sensitive-files.js"} {
			m := regexp.MustCompile(`(?s)var ` + name + " = String\\.raw`(.*?)`;").FindSubmatch(src)
			if m == nil || strings.Contains(string(m[1]), "${") {
				return nil, fmt.Errorf("claude-code-starter: %s not found as a plain String.raw constant", name)
			}
			if err := os.WriteFile(filepath.Join(hooksDir, file), m[1], 0o755); err != nil {
				return nil, err
			}
		}
		return map[string]map[string]any{"project": {"hooks": map[string]any{"PreToolUse": []any{
			cmdHook("Bash", "node .claude/hooks/block-dangerous-commands.js"),
			cmdHook("Write", "node .claude/hooks/protect-sensitive-files.js"),
			cmdHook("Edit", "node .claude/hooks/protect-sensitive-files.js"),
		}}}}, nil
	}},
	{id: "sensitive-canary", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
		// @coo-quack/sensitive-canary: `npm install -g`, then the README's settings, which
		// find the package with $(npm root -g) on every call.
		if _, err := w.pkg("@coo-quack/sensitive-canary"); err != nil {
			return nil, err
		}
		return map[string]map[string]any{"user": {"hooks": map[string]any{
			"UserPromptSubmit": []any{cmdHook("", "node $(npm root -g)/@coo-quack/sensitive-canary/dist/user-prompt-submit-hook.js")},
			"PreToolUse":       []any{cmdHook("Read|NotebookRead|Bash|Grep|mcp__.*", "node $(npm root -g)/@coo-quack/sensitive-canary/dist/pre-tool-use-hook.js")},
		}}}, nil
	}},
	{id: "ecc", prepare: func(w *corpusWorld) (map[string]map[string]any, error) {
		// ECC (everything-claude-code, npm ecc-universal): its installer's ~/.claude (made by
		// fetch.sh), and the resolved hooks it wrote to ~/.claude/hooks/hooks.json in the
		// user's settings.json.
		if _, err := w.pkg("ecc-universal"); err != nil {
			return nil, err
		}
		if out, err := exec.Command("cp", "-a", filepath.Join(w.cache, "homes", "ecc", ".claude"), w.home).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("copy ECC's .claude: %v\n%s", err, out)
		}
		var f struct {
			Hooks map[string]any `json:"hooks"`
		}
		if err := readJSON(filepath.Join(w.home, ".claude", "hooks", "hooks.json"), &f); err != nil {
			return nil, err
		}
		return map[string]map[string]any{"user": {"hooks": f.Hooks}}, nil
	}},
}

// classifyCorpusHooks says, for every command hook of every setup, which way hookd runs
// it and why: forked from the Python zygote (zygote.FromCommand models the command),
// from a prewarmed process (runner.AnalyzeCommand finds it safe to start before its
// event; a key's first event still runs cold), or cold. It prepares each setup's files
// in a scratch world but runs nothing; the session counters are the measurement, this is
// the explanation.
func classifyCorpusHooks(corpus string, setups []corpusSetup) map[string][]string {
	out := map[string][]string{}
	for _, s := range setups {
		root, err := os.MkdirTemp("", "hkclass-")
		if err != nil {
			continue
		}
		w := &corpusWorld{root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "home", "proj"), prefix: filepath.Join(root, "npm-global"), cache: corpus}
		var scopes map[string]map[string]any
		if err = makeCorpusProject(w); err == nil {
			scopes, err = s.prepare(w)
		}
		if err != nil {
			out[s.id] = []string{"(could not prepare: " + err.Error() + ")"}
			os.RemoveAll(root)
			continue
		}
		env := []string{"HOME=" + w.home, "PATH=" + filepath.Join(w.prefix, "bin") + ":" + os.Getenv("PATH"), "CLAUDE_PROJECT_DIR=" + w.proj, "NPM_CONFIG_PREFIX=" + w.prefix}
		count := map[string]int{}
		var order []string
		for _, scope := range mapKeys(scopes) {
			hooks, _ := scopes[scope]["hooks"].(map[string]any)
			for _, ev := range mapKeys(hooks) {
				groups, _ := hooks[ev].([]any)
				for _, g := range groups {
					gm, _ := g.(map[string]any)
					hs, _ := gm["hooks"].([]any)
					for _, h := range hs {
						hm, _ := h.(map[string]any)
						c, _ := hm["command"].(string)
						if c == "" {
							continue
						}
						how := ""
						if _, err := zygote.FromCommand(c, nil, env, w.proj); err == nil {
							how = "forked (zygote)"
						} else if safe, reason, _ := runner.AnalyzeCommand(runner.ProcSpec{Command: c, Dir: w.proj, Env: env, Prewarm: runner.PrewarmAuto}); safe {
							how = "prewarmed (" + reason + "; the first event of each distinct command cold)"
						} else {
							if reason == "node" || reason == "python" || reason == "ruby" {
								reason = "a " + reason + " script that does not visibly read stdin (or is over 1 MiB), so it is not started early"
							}
							how = "cold: " + reason + "; zygote: " + strings.TrimPrefix(err.Error(), "zygote: ")
						}
						if async, _ := hm["async"].(bool); async {
							how += " [async]"
						}
						if count[how] == 0 {
							order = append(order, how)
						}
						count[how]++
					}
				}
			}
		}
		for _, how := range order {
			out[s.id] = append(out[s.id], fmt.Sprintf("%d × %s", count[how], how))
		}
		os.RemoveAll(root)
	}
	return out
}
