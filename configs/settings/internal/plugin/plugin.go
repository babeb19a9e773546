// Package plugin finds the Claude Code plugins installed for a project and the files
// that may hold their hooks, and computes the environment their hooks run with, as
// Claude Code 2.1.332 does (observed with the binary: test/e2e probes plug-*). It is a
// leaf below configs/settings, which turns what it finds into settings sources
// (configs/settings/plugins.go says what is followed and what is not).
package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hookd/hookd/configs/internal/readfile"
)

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

// RegistryFiles are the files whose change can add, remove or move a plugin: the
// store reads them as files without hooks (settings.KindPluginRegistry), so the watcher follows
// them, and lists the plugins again when one changes.
func RegistryFiles(userDir string) []string {
	if userDir == "" {
		return nil
	}
	d := filepath.Join(userDir, "plugins")
	return []string{filepath.Join(d, "installed_plugins.json"), filepath.Join(d, "known_marketplaces.json")}
}

// Discover lists the installed plugins of userDir (~/.claude) whose install is
// visible from project ("" for none): user and managed installs, and project and local
// installs of that project. Sorted by ID. A registry that cannot be read lists nothing
// and says why in problems.
func Discover(userDir, project string) (plugins []*Plugin, problems []string) {
	if userDir == "" {
		return nil, nil
	}
	reg := RegistryFiles(userDir)
	data, err := readfile.Read(reg[0])
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
	if data, err := readfile.Read(reg[1]); err == nil {
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
	data, err := readfile.Read(filepath.Join(dir, ".claude-plugin", "marketplace.json"))
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

// HookFile is one file that may hold a plugin's hooks; Manifest marks
// .claude-plugin/plugin.json, whose "hooks" member (when an object) holds hooks.
type HookFile struct {
	Path     string
	Manifest bool
}

// HookFiles are the files that may hold p's hooks, in the order Claude Code loads
// them: hooks/hooks.json, then the manifest (its inline "hooks", if any), then each
// hooks file the manifest names by a path inside the plugin (a path that escapes the
// root is skipped, as Claude Code skips it, and reported in problems).
func HookFiles(p *Plugin) (refs []HookFile, problems []string) {
	std := filepath.Join(p.Root, "hooks", "hooks.json")
	manifest := filepath.Join(p.Root, ".claude-plugin", "plugin.json")
	refs = append(refs, HookFile{Path: std}, HookFile{Path: manifest, Manifest: true})
	data, err := readfile.Read(manifest)
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
		refs = append(refs, HookFile{Path: full})
	}
	return refs, problems
}

// UserConfig matches ${user_config.KEY}; its group is KEY.
var UserConfig = regexp.MustCompile(`\$\{user_config\.([^}]*)\}`)

// Env is the environment a plugin's hooks get beyond the event's: CLAUDE_PLUGIN_ROOT,
// CLAUDE_PLUGIN_DATA and CLAUDE_PLUGIN_OPTION_<KEY> for each option (sorted by key).
func (p *Plugin) Env(opts map[string]string) []string {
	env := []string{"CLAUDE_PLUGIN_ROOT=" + p.Root, "CLAUDE_PLUGIN_DATA=" + p.Data}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, "CLAUDE_PLUGIN_OPTION_"+OptionEnvName(k)+"="+opts[k])
	}
	return env
}

// OptionEnvName is Claude Code's CLAUDE_PLUGIN_OPTION_ suffix for an option key: every
// character but [A-Za-z0-9_] as "_", upper case.
func OptionEnvName(k string) string {
	b := []byte(k)
	for i, c := range b {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	return strings.ToUpper(string(b))
}

// OptionString is an option's value as its environment variable carries it (JavaScript's
// String(value)).
func OptionString(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var f float64
	if json.Unmarshal(v, &f) == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	var b bool
	if json.Unmarshal(v, &b) == nil {
		return strconv.FormatBool(b)
	}
	var xs []json.RawMessage
	if json.Unmarshal(v, &xs) == nil { // String([a, b]) is "a,b"
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = OptionString(x)
		}
		return strings.Join(parts, ",")
	}
	if string(v) == "null" {
		return "null"
	}
	return "[object Object]"
}

// Exec is how one command handler runs: its command and exec-form
// arguments after the substitutions Claude Code makes for its source, the variables its
// source adds to the event's environment, or why it cannot run at all.
type Exec struct {
	Command string
	Args    []string // nil: shell form
	// Env are "NAME=value" entries that override the event's environment: for a
	// plugin's hooks CLAUDE_PLUGIN_ROOT, CLAUDE_PLUGIN_DATA and CLAUDE_PLUGIN_OPTION_<KEY>
	// (each option of pluginConfigs); for a skill's, CLAUDE_PLUGIN_ROOT (the skill's
	// directory, or its plugin's root for a plugin's skill).
	Env []string
	// RunError, when set, is why the hook fails to run, in Claude Code 2.1.332's words
	// ("Failed to run: …" follows): a ${user_config.KEY} that no option sets,
	// ${user_config.*} in a shell-form command, ${CLAUDE_PLUGIN_DATA} in a skill's hook.
	// Such a hook is one that could not start: an error, a block only with
	// onFailure "block".
	RunError string
}

// SkillExec is Exec for a skill's hook: root (the skill's directory, or its plugin's root;
// "" for a slash command) as CLAUDE_PLUGIN_ROOT. line is the command as shown.
func SkillExec(root, command string, args []string, line string) Exec {
	e := Exec{Command: command, Args: args}
	refs := func(v string) bool {
		return strings.Contains(command, v) || slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, v) })
	}
	if root != "" {
		e.Env = append(e.Env, "CLAUDE_PLUGIN_ROOT="+root)
	} else if refs("${CLAUDE_PLUGIN_ROOT}") {
		e.RunError = "Hook command references ${CLAUDE_PLUGIN_ROOT} but the hook is not associated with a plugin. Command: " + line
	}
	if refs("${CLAUDE_PLUGIN_DATA}") {
		e.RunError = "Hook command references ${CLAUDE_PLUGIN_DATA} but only ${CLAUDE_PLUGIN_ROOT} is available for skill hooks (${CLAUDE_PLUGIN_DATA} is plugin-only). Command: " + line
	}
	return e
}

// Exec is how a hook of p runs with the options opts: its environment (Env), and
// ${user_config.KEY} substituted in exec form (refused in shell form, and for an option
// that is not set).
func (p *Plugin) Exec(opts map[string]string, command string, args []string) Exec {
	e := Exec{Command: command, Args: args, Env: p.Env(opts)}
	if args == nil {
		if UserConfig.MatchString(command) {
			e.RunError = "Hook from plugin " + p.ID + " references ${user_config.*} in a shell-form command. The substituted value would be re-parsed by the shell. " +
				"Use exec form instead — {\"command\": \"<executable>\", \"args\": [\"${user_config.KEY}\", ...]} — or read $CLAUDE_PLUGIN_OPTION_<KEY> from the hook's environment. Command: " + command
		}
		return e
	}
	subst := func(v string) string {
		return UserConfig.ReplaceAllStringFunc(v, func(m string) string {
			key := UserConfig.FindStringSubmatch(m)[1]
			val, ok := opts[key]
			if !ok && e.RunError == "" {
				e.RunError = fmt.Sprintf("Plugin option %q isn't set. Open /plugin manage to configure it, or check that the plugin's userConfig schema declares %q.", key, key)
			}
			return val
		})
	}
	e.Command = subst(command)
	e.Args = make([]string, len(args))
	for i, a := range args {
		e.Args[i] = subst(a)
	}
	return e
}

// Environ is env (the event's environment, "NAME=value" entries) with e.Env's entries
// replacing those of the same name.
func (e Exec) Environ(env []string) []string {
	if len(e.Env) == 0 {
		return env
	}
	names := map[string]bool{}
	for _, kv := range e.Env {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
	}
	out := make([]string, 0, len(env)+len(e.Env))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !names[k] {
			out = append(out, kv)
		}
	}
	return append(out, e.Env...)
}
