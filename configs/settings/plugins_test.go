package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/events"
)

// pluginWorld lays out what `claude plugin marketplace add <dir>` and `claude plugin
// install guard@localmkt` left behind with Claude Code 2.1.332 (probe plug-1-guard):
// installed_plugins.json v2, known_marketplaces.json with a directory marketplace, and the
// marketplace itself with one plugin; plus a second plugin installed from elsewhere
// (its installPath is its root) at project scope.
func pluginWorld(t *testing.T) (userDir, project, mkt string) {
	t.Helper()
	root := t.TempDir()
	userDir, project, mkt = filepath.Join(root, "home", ".claude"), filepath.Join(root, "proj"), filepath.Join(root, "mkt")
	write := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(userDir, "plugins", "cache", "localmkt", "guard", "1.2.3")
	other := filepath.Join(userDir, "plugins", "cache", "remote", "lint", "0.9.0")
	write(filepath.Join(userDir, "plugins", "installed_plugins.json"), `{"version": 2, "plugins": {
 "guard@localmkt": [{"scope": "user", "installPath": "`+cache+`", "version": "1.2.3"}],
 "lint@remote": [{"scope": "project", "installPath": "`+other+`", "version": "0.9.0", "projectPath": "`+project+`"}],
 "gone@remote": [{"scope": "local", "installPath": "/nowhere", "version": "1", "projectPath": "/another/project"}]}}`)
	write(filepath.Join(userDir, "plugins", "known_marketplaces.json"), `{"localmkt": {"source": {"source": "directory", "path": "`+mkt+`"}, "installLocation": "`+mkt+`"}}`)
	write(filepath.Join(mkt, ".claude-plugin", "marketplace.json"), `{"name": "localmkt", "plugins": [{"name": "guard", "source": "./plugins/guard", "version": "1.2.3"}]}`)
	g := filepath.Join(mkt, "plugins", "guard")
	write(filepath.Join(g, ".claude-plugin", "plugin.json"), `{"name": "guard", "version": "1.2.3", "hooks": ["./extra/more.json", "../../escape.json"]}`)
	write(filepath.Join(g, "hooks", "hooks.json"), `{"description": "guard hooks", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"}]}]}}`)
	write(filepath.Join(g, "extra", "more.json"), `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/stop.sh"}]}]}}`)
	write(filepath.Join(other, ".claude-plugin", "plugin.json"), `{"name": "lint", "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "lint"}]}]}}`)
	return userDir, project, mkt
}

func TestDiscoverPlugins(t *testing.T) {
	userDir, project, mkt := pluginWorld(t)
	ps, problems := DiscoverPlugins(userDir, project)
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	if len(ps) != 2 || ps[0].ID != "guard@localmkt" || ps[1].ID != "lint@remote" {
		t.Fatalf("plugins %+v, want guard@localmkt and lint@remote (gone@remote is another project's)", ps)
	}
	g := ps[0]
	if g.Root != filepath.Join(mkt, "plugins", "guard") || g.Version != "1.2.3" || g.Name != "guard" || g.Marketplace != "localmkt" {
		t.Errorf("guard: %+v (a directory marketplace's plugin is used in place)", g)
	}
	if g.Data != filepath.Join(userDir, "plugins", "data", "guard-localmkt") {
		t.Errorf("guard data dir %s (Claude Code 2.1.332: ~/.claude/plugins/data/guard-localmkt)", g.Data)
	}
	if !strings.HasSuffix(ps[1].Root, filepath.Join("remote", "lint", "0.9.0")) {
		t.Errorf("lint root %s: its installPath", ps[1].Root)
	}
	if ps, _ := DiscoverPlugins(userDir, ""); len(ps) != 1 {
		t.Errorf("without a project only the user install is visible: %+v", ps)
	}
	refs, problems := PluginHookFiles(g)
	var names []string
	for _, r := range refs {
		rel, _ := filepath.Rel(g.Root, r.Path)
		names = append(names, rel)
	}
	if strings.Join(names, ",") != "hooks/hooks.json,.claude-plugin/plugin.json,extra/more.json" || len(problems) != 1 || !strings.Contains(problems[0], "escapes") {
		t.Errorf("hook files %v, problems %v", names, problems)
	}
}

// TestPluginHooks: a plugin's hooks compile under its source name and version; enabled
// ones are Claude Code's (hookd reports them, never runs them), disabled ones are off,
// and under the managed routing drop-in they run nowhere (named in RunNowhere) unless
// managed settings force-enable the plugin.
func TestPluginHooks(t *testing.T) {
	userDir, project, _ := pluginWorld(t)
	src := Sources{UserDir: userDir, ProjectDir: project, ManagedDir: filepath.Join(t.TempDir(), "managed")}
	load := func(extra map[string]string) *Snapshot {
		t.Helper()
		var files []*File
		for _, ref := range src.Files() {
			data, ok := extra[ref.Path]
			if !ok {
				b, err := os.ReadFile(ref.Path)
				if err != nil {
					continue
				}
				data = string(b)
			}
			f, err := ParseFile(ref, []byte(data), "")
			if err != nil {
				t.Fatalf("%s: %v", ref.Path, err)
			}
			files = append(files, f)
		}
		return Compile(files)
	}
	userSettings := filepath.Join(userDir, "settings.json")
	pre, _ := events.Lookup("PreToolUse")

	snap := load(map[string]string{userSettings: `{"enabledPlugins": {"guard@localmkt": true, "lint@remote": false}}`})
	hs := snap.HandlersFor("PreToolUse")
	if len(hs) != 1 {
		t.Fatalf("PreToolUse handlers %d", len(hs))
	}
	h := hs[0]
	ref := h.Ref()
	if ref.Source != "plugin:guard@localmkt" || ref.Version != "1.2.3" || !strings.HasPrefix(h.ID, "plugin:guard@localmkt:") {
		t.Errorf("ref %+v, id %s", ref, h.ID)
	}
	if !snap.ClaudeCodeRuns(h) || !strings.Contains(snap.ReasonFor(h, true), "plugin:guard@localmkt 1.2.3") {
		t.Errorf("an enabled plugin's hook is Claude Code's: %q", snap.ReasonFor(h, true))
	}
	for _, fromCC := range []bool{true, false} {
		run, notRun := snap.Match(Query{Event: pre, MatchValue: "Bash", FromClaudeCode: fromCC})
		if len(run) != 0 || len(notRun) != 1 {
			t.Errorf("fromClaudeCode=%v: run %d notRun %d — hookd never runs a plugin's hook itself", fromCC, len(run), len(notRun))
		}
	}
	if snap.Reason(h) != ReasonThirdPartyOutsideClaudeCode {
		t.Errorf("reason for other harnesses: %q", snap.Reason(h))
	}
	post, _ := events.Lookup("PostToolUse")
	if run, notRun := snap.Match(Query{Event: post, MatchValue: "Edit", FromClaudeCode: true}); len(run)+len(notRun) != 0 {
		t.Errorf("a disabled plugin's hook matched: %d %d", len(run), len(notRun))
	}
	if len(snap.HandlersFor("Stop")) != 1 {
		t.Errorf("the hooks file the manifest names was not loaded")
	}

	// Under hookd's managed drop-in Claude Code blocks the hooks of plugins managed
	// settings do not force-enable: hookd runs them, with the plugin's environment.
	dropIn := filepath.Join(src.ManagedDir, "managed-settings.json")
	routed := `{"allowManagedHooksOnly": true, "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/usr/bin/hookc"}]}], "Stop": [{"hooks": [{"type": "command", "command": "/usr/bin/hookc"}]}]}}`
	if err := os.MkdirAll(src.ManagedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dropIn, []byte(routed), 0o644); err != nil {
		t.Fatal(err)
	}
	snap = load(map[string]string{userSettings: `{"enabledPlugins": {"guard@localmkt": true}, "pluginConfigs": {"guard@localmkt": {"options": {"api-token": "tok", "n": 3}}}}`})
	h = snap.HandlersFor("PreToolUse")[1]
	if snap.RoutedBy == "" || snap.ClaudeCodeRuns(h) || snap.Reason(h) != "" {
		t.Errorf("routed: routedBy %q, claude code runs %v, reason %q", snap.RoutedBy, snap.ClaudeCodeRuns(h), snap.Reason(h))
	}
	if run, _ := snap.Match(Query{Event: pre, MatchValue: "Bash", FromClaudeCode: true}); len(run) != 1 || run[0] != h {
		t.Errorf("routed: hookd runs %v", run)
	}
	ex := snap.Exec(h)
	wantEnv := []string{"CLAUDE_PLUGIN_ROOT=" + h.Plugin.Root, "CLAUDE_PLUGIN_DATA=" + h.Plugin.Data, "CLAUDE_PLUGIN_OPTION_API_TOKEN=tok", "CLAUDE_PLUGIN_OPTION_N=3"}
	if strings.Join(ex.Env, "\n") != strings.Join(wantEnv, "\n") || ex.RunError != "" {
		t.Errorf("plugin hook env %q (%s), want %q", ex.Env, ex.RunError, wantEnv)
	}
	if len(snap.RunNowhere) != 0 {
		t.Errorf("run-nowhere findings %v", snap.RunNowhere)
	}
	// A managed force-enable keeps them Claude Code's.
	forced := strings.Replace(routed, `"allowManagedHooksOnly": true,`, `"allowManagedHooksOnly": true, "enabledPlugins": {"guard@localmkt": true},`, 1)
	snap = load(map[string]string{dropIn: forced})
	h = snap.HandlersFor("PreToolUse")[1]
	if !snap.PluginForced("guard@localmkt") || !snap.ClaudeCodeRuns(h) || len(snap.RunNowhere) != 0 {
		t.Errorf("forced: %v %v %v", snap.PluginForced("guard@localmkt"), snap.ClaudeCodeRuns(h), snap.RunNowhere)
	}
}

// TestPluginHooksStrict: a plugin hooks file is decoded like a settings file — an error
// names file, field, line and column — and enabledPlugins with a non-boolean is a finding.
func TestPluginHooksStrict(t *testing.T) {
	p := &Plugin{ID: "guard@localmkt", Name: "guard", Marketplace: "localmkt", Version: "1"}
	_, err := ParseFile(FileRef{Path: "/p/hooks/hooks.json", Kind: KindPlugin, Plugin: p},
		[]byte("{\"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\",\n  \"hooks\": [{\"type\": \"command\", \"timeout\": \"soon\", \"command\": \"x\"}]}]}}"), "")
	if err == nil || !strings.Contains(err.Error(), "/p/hooks/hooks.json:2:") || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("error %v, want file:line:col naming timeout", err)
	}
	f, err := ParseFile(FileRef{Path: "/p/.claude-plugin/plugin.json", Kind: KindPlugin, Plugin: p, Manifest: true},
		[]byte(`{"name": "guard", "author": {"name": "x"}, "hooks": "./hooks/other.json"}`), "")
	if err != nil || len(f.Handlers) != 0 {
		t.Errorf("a manifest without inline hooks: %v %+v", err, f)
	}
	f, err = ParseFile(FileRef{Path: "/u/settings.json", Kind: KindUser}, []byte(`{"enabledPlugins": {"a@b": true, "c@d": "yes"}}`), "")
	if err != nil || !f.Settings.EnabledPlugins["a@b"] || len(f.Settings.EnabledPlugins) != 1 || len(f.Warnings) != 1 {
		t.Errorf("enabledPlugins: %v %+v %v", err, f.Settings.EnabledPlugins, f.Warnings)
	}
}
