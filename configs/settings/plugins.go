package settings

import "github.com/hookd/hookd/configs/settings/internal/plugin"

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

// Plugin is one installed plugin (configs/settings/internal/plugin finds them).
type Plugin = plugin.Plugin

// PluginRegistryFiles are the files whose change can add, remove or move a plugin: the
// store reads them as files without hooks (KindPluginRegistry), so the watcher follows
// them, and lists the plugins again when one changes.
func PluginRegistryFiles(userDir string) []string { return plugin.RegistryFiles(userDir) }

// DiscoverPlugins lists the installed plugins of userDir (~/.claude) whose install is
// visible from project ("" for none), sorted by ID; problems say what could not be read.
func DiscoverPlugins(userDir, project string) ([]*Plugin, []string) {
	return plugin.Discover(userDir, project)
}

// PluginHookFiles are the files that may hold p's hooks, in the order Claude Code loads
// them (hooks/hooks.json, the manifest, the hooks files it names inside the plugin).
func PluginHookFiles(p *Plugin) (refs []FileRef, problems []string) {
	files, problems := plugin.HookFiles(p)
	for _, f := range files {
		refs = append(refs, FileRef{Path: f.Path, Kind: KindPlugin, Plugin: p, Manifest: f.Manifest})
	}
	return refs, problems
}
