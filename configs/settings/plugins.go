package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Plugins as a hook source (issue 23). Claude Code 2.1.332 runs the hooks of every
// enabled plugin: hooks/hooks.json in the plugin's root, and the manifest's "hooks"
// (.claude-plugin/plugin.json: an inline object, or paths inside the plugin). hookd finds
// the plugins the way Claude Code does, as observed with the binary (test/e2e probes
// plug-*):
//
//   - installed plugins are listed in <user dir>/plugins/installed_plugins.json (version
//     2: "plugins": {"<name>@<marketplace>": [{"scope", "installPath", "version", …}]});
//   - a plugin of a marketplace added from a local directory (known_marketplaces.json
//     source "directory") is used in place: its root is the marketplace directory joined
//     with the plugin entry's "source" in .claude-plugin/marketplace.json (observed:
//     CLAUDE_PLUGIN_ROOT pointed there, and the cached copy under plugins/cache was
//     emptied); any other plugin's root is its installPath;
//   - it is enabled by "enabledPlugins": {"<id>": true} in the settings files, the
//     highest-precedence file that names it deciding (Snapshot.PluginEnabled); a managed
//     true force-enables it;
//   - its hooks run with CLAUDE_PLUGIN_ROOT (the root), CLAUDE_PLUGIN_DATA
//     (<user dir>/plugins/data/<id with every character but [A-Za-z0-9_-] as "-">) and
//     CLAUDE_PLUGIN_OPTION_<KEY> for each option in "pluginConfigs"; ${user_config.KEY} is
//     substituted only in exec form (a shell-form command naming it is refused).
//
// Not followed (docs/differences.md): --plugin-dir (a command-line flag of the Claude Code
// process; hookd sees only its hooks' events), CLAUDE_CODE_PLUGIN_SEED_DIR, skills-dir
// plugins (~/.claude/skills/<name>/ with a manifest), and the binary's built-in hook
// modules (native code, not command hooks).

// Plugin is one installed plugin.
type Plugin struct {
	ID          string // "<name>@<marketplace>"
	Name        string
	Marketplace string
	Version     string // as installed_plugins.json records it
	Root        string // CLAUDE_PLUGIN_ROOT
	Data        string // CLAUDE_PLUGIN_DATA
	Scope       string // user | project | local | managed (installed_plugins.json)
	ProjectPath string // for project and local installs
}

// Label is the plugin's source name in status, validate and audit records.
func (p *Plugin) Label() string { return "plugin:" + p.ID }

// pluginDataName is Claude Code 2.1.332's directory name for a plugin's data (its wye()).
var pluginDataName = regexp.MustCompile(`[^a-zA-Z0-9\-_]`)

// installedPlugins is installed_plugins.json (version 2).
type installedPlugins struct {
	Version int `json:"version"`
	Plugins map[string][]struct {
		Scope       string `json:"scope"`
		InstallPath string `json:"installPath"`
		Version     string `json:"version"`
		ProjectPath string `json:"projectPath"`
	} `json:"plugins"`
}

type knownMarketplace struct {
	Source struct {
		Source string `json:"source"`
		Path   string `json:"path"`
	} `json:"source"`
	InstallLocation string `json:"installLocation"`
}

// PluginRegistryFiles are the files whose change can add, remove or move a plugin: the
// store reads them as files without hooks (KindPluginRegistry), so the watcher follows
// them, and lists the plugins again when one changes.
func PluginRegistryFiles(userDir string) []string {
	if userDir == "" {
		return nil
	}
	d := filepath.Join(userDir, "plugins")
	return []string{filepath.Join(d, "installed_plugins.json"), filepath.Join(d, "known_marketplaces.json")}
}

// DiscoverPlugins lists the installed plugins of userDir (~/.claude) whose install is
// visible from project ("" for none): user and managed installs, and project and local
// installs of that project. Sorted by ID. A registry that cannot be read lists nothing
// and says why in problems.
func DiscoverPlugins(userDir, project string) (plugins []*Plugin, problems []string) {
	if userDir == "" {
		return nil, nil
	}
	reg := PluginRegistryFiles(userDir)
	data, err := ReadFile(reg[0])
	if err != nil {
		if !os.IsNotExist(err) {
			problems = append(problems, reg[0]+": "+err.Error())
		}
		return nil, problems
	}
	var ip installedPlugins
	if err := json.Unmarshal(data, &ip); err != nil {
		return nil, append(problems, reg[0]+": "+err.Error())
	}
	known := map[string]knownMarketplace{}
	if data, err := ReadFile(reg[1]); err == nil {
		if err := json.Unmarshal(data, &known); err != nil {
			problems = append(problems, reg[1]+": "+err.Error())
		}
	}
	for id, installs := range ip.Plugins {
		name, mkt, ok := strings.Cut(id, "@")
		if !ok || name == "" || mkt == "" {
			problems = append(problems, reg[0]+": plugin id "+id+" is not <name>@<marketplace>")
			continue
		}
		for _, in := range installs {
			switch in.Scope {
			case "project", "local":
				if project == "" || filepath.Clean(in.ProjectPath) != filepath.Clean(project) {
					continue
				}
			}
			p := &Plugin{ID: id, Name: name, Marketplace: mkt, Version: in.Version, Root: in.InstallPath,
				Scope: in.Scope, ProjectPath: in.ProjectPath,
				Data: filepath.Join(userDir, "plugins", "data", pluginDataName.ReplaceAllString(id, "-"))}
			if root := inPlaceRoot(known[mkt], name); root != "" {
				p.Root = root
			}
			if p.Root == "" {
				problems = append(problems, reg[0]+": plugin "+id+" has no installPath")
				continue
			}
			plugins = append(plugins, p)
			break // one install per plugin: the first visible one
		}
	}
	sort.Slice(plugins, func(i, j int) bool { return plugins[i].ID < plugins[j].ID })
	return plugins, problems
}

// inPlaceRoot is the root of plugin name in a marketplace added from a local directory:
// the directory joined with the plugin entry's relative "source" ("" otherwise).
func inPlaceRoot(m knownMarketplace, name string) string {
	if m.Source.Source != "directory" {
		return ""
	}
	dir := m.InstallLocation
	if dir == "" {
		dir = m.Source.Path
	}
	data, err := ReadFile(filepath.Join(dir, ".claude-plugin", "marketplace.json"))
	if err != nil {
		return ""
	}
	var mf struct {
		Plugins []struct {
			Name   string          `json:"name"`
			Source json.RawMessage `json:"source"`
		} `json:"plugins"`
	}
	if json.Unmarshal(data, &mf) != nil {
		return ""
	}
	for _, e := range mf.Plugins {
		var src string
		if e.Name != name || json.Unmarshal(e.Source, &src) != nil || src == "" {
			continue
		}
		root := filepath.Join(dir, src)
		if rel, err := filepath.Rel(dir, root); err != nil || strings.HasPrefix(rel, "..") {
			return "" // a source outside the marketplace: not followed
		}
		return root
	}
	return ""
}

// PluginHookFiles are the files that may hold p's hooks, in the order Claude Code loads
// them: hooks/hooks.json, then the manifest (its inline "hooks", if any), then each
// hooks file the manifest names by a path inside the plugin (a path that escapes the
// root is skipped, as Claude Code skips it, and reported in problems).
func PluginHookFiles(p *Plugin) (refs []FileRef, problems []string) {
	std := filepath.Join(p.Root, "hooks", "hooks.json")
	manifest := filepath.Join(p.Root, ".claude-plugin", "plugin.json")
	refs = append(refs, FileRef{Path: std, Kind: KindPlugin, Plugin: p},
		FileRef{Path: manifest, Kind: KindPlugin, Plugin: p, Manifest: true})
	data, err := ReadFile(manifest)
	if err != nil {
		return refs, nil
	}
	var m struct {
		Hooks json.RawMessage `json:"hooks"`
	}
	if json.Unmarshal(data, &m) != nil || len(m.Hooks) == 0 {
		return refs, nil
	}
	var paths []string
	var one string
	var many []json.RawMessage
	switch {
	case json.Unmarshal(m.Hooks, &one) == nil:
		paths = append(paths, one)
	case json.Unmarshal(m.Hooks, &many) == nil:
		for _, e := range many {
			if json.Unmarshal(e, &one) == nil {
				paths = append(paths, one)
			}
		}
	}
	seen := map[string]bool{std: true}
	for _, rel := range paths {
		full := filepath.Join(p.Root, rel)
		if r, err := filepath.Rel(p.Root, full); err != nil || strings.HasPrefix(r, "..") || filepath.IsAbs(rel) {
			problems = append(problems, manifest+": hooks file "+rel+" escapes the plugin directory; skipped (as Claude Code skips it)")
			continue
		}
		if seen[full] {
			continue // the standard file loads on its own, once
		}
		seen[full] = true
		refs = append(refs, FileRef{Path: full, Kind: KindPlugin, Plugin: p})
	}
	return refs, problems
}
