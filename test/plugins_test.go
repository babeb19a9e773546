package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginHooksThroughDaemon: a real daemon finds an installed, enabled plugin (laid out
// as `claude plugin install` from a local-directory marketplace leaves it, Claude Code
// 2.1.332), names its hook "plugin:guard@localmkt" with version 1.2.3 in status and in the
// result, leaves it to Claude Code (not run, "run by Claude Code: …"), and follows
// enabledPlugins and the plugin's own hooks file live.
func TestPluginHooksThroughDaemon(t *testing.T) {
	e := NewEnv(t)
	mkt := filepath.Join(e.Root, "mkt")
	guard := filepath.Join(mkt, "plugins", "guard")
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(e.UserDir, "plugins", "installed_plugins.json"), `{"version": 2, "plugins": {"guard@localmkt": [{"scope": "user", "installPath": "`+
		filepath.Join(e.UserDir, "plugins", "cache", "localmkt", "guard", "1.2.3")+`", "version": "1.2.3"}]}}`)
	write(filepath.Join(e.UserDir, "plugins", "known_marketplaces.json"), `{"localmkt": {"source": {"source": "directory", "path": "`+mkt+`"}, "installLocation": "`+mkt+`"}}`)
	write(filepath.Join(mkt, ".claude-plugin", "marketplace.json"), `{"name": "localmkt", "plugins": [{"name": "guard", "source": "./plugins/guard"}]}`)
	write(filepath.Join(guard, ".claude-plugin", "plugin.json"), `{"name": "guard", "version": "1.2.3"}`)
	marker := filepath.Join(e.Root, "ran")
	write(filepath.Join(guard, "hooks", "hooks.json"), `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "touch `+marker+`"}]}]}}`)
	e.WriteSettings("user", `{"enabledPlugins": {"guard@localmkt": true}}`)
	e.Start()

	payload := e.Payload("PreToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "tool_use_id": "t1"})
	var res struct {
		Hooks []struct {
			Hook struct {
				ID, Source, Version string
			} `json:"hook"`
			Outcome, Error string
		} `json:"hooks"`
	}
	// Through hookc, as Claude Code runs it: the plugin's hook is reported, not run.
	out := e.Hookc(payload)
	if out.Code != 0 {
		t.Fatalf("hookc: exit %d %s %s", out.Code, out.Stdout, out.Stderr)
	}
	result, _ := e.Event(payload)
	b, _ := json.Marshal(result)
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Hooks) != 1 || res.Hooks[0].Hook.Source != "plugin:guard@localmkt" || res.Hooks[0].Hook.Version != "1.2.3" ||
		res.Hooks[0].Outcome != "not_run" || !strings.HasPrefix(res.Hooks[0].Hook.ID, "plugin:guard@localmkt:") {
		t.Fatalf("result hooks %+v", res.Hooks)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("hookd ran a plugin's hook: Claude Code runs it (it would run twice)")
	}

	// Status names the plugin's hooks file with its source and version.
	st := e.Status()
	found := false
	for _, f := range st["sources"].([]any) {
		m := f.(map[string]any)
		if m["source"] == "plugin:guard@localmkt" && m["version"] == "1.2.3" && strings.HasSuffix(m["path"].(string), filepath.Join("guard", "hooks", "hooks.json")) && m["state"] == "loaded" {
			found = true
		}
	}
	if !found {
		t.Fatalf("status sources do not name the plugin hooks file: %v", st["sources"])
	}

	// Disabling the plugin (a settings edit) removes its hook; an invalid edit of its
	// hooks file is reported with file:line:col and keeps the last good version.
	e.WriteSettings("user", `{"enabledPlugins": {"guard@localmkt": false}}`)
	waitFor(t, "the disabled plugin's hook to go", func() bool {
		res, _ := e.Event(payload)
		return len(res.Hooks) == 0
	})
	e.WriteSettings("user", `{"enabledPlugins": {"guard@localmkt": true}}`)
	write(filepath.Join(guard, "hooks", "hooks.json"), "{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\",\n \"hooks\": [{\"type\": \"command\", \"timeout\": \"soon\", \"command\": \"x\"}]}]}}")
	waitFor(t, "the invalid plugin hooks file to be reported", func() bool {
		for _, f := range e.Status()["sources"].([]any) {
			m := f.(map[string]any)
			if m["source"] == "plugin:guard@localmkt" && m["state"] == "invalid" && strings.Contains(m["error"].(string), "hooks.json:2:") {
				return true
			}
		}
		return false
	})
	res2, _ := e.Event(payload)
	if len(res2.Hooks) != 1 || res2.Hooks[0].Outcome != "not_run" {
		t.Fatalf("after an invalid edit the last good version stays: %+v", res2.Hooks)
	}
}
