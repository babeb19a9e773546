package settings

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/hookd/hookd/configs/settings/internal/frontmatter"
	"github.com/hookd/hookd/protocol/lite"
)

// Kind is where a settings file sits in Claude Code's hierarchy (spec §7).
type Kind string

// Kinds of settings files.
const (
	KindManaged Kind = "managed" // managed-settings.json and managed-settings.d/*.json
	KindUser    Kind = "user"    // ~/.claude/settings.json
	KindProject Kind = "project" // <project>/.claude/settings.json
	KindLocal   Kind = "local"   // <project>/.claude/settings.local.json
	KindFlag    Kind = "flag"    // --settings files
	// KindHookd is a file hookd owns: hooks moved out of a Claude Code settings file so
	// that Claude Code no longer runs them itself. Its FileRef.Origin names the file the
	// hooks came from, and they keep that file's standing (precedence, managed or not).
	KindHookd Kind = "hookd"
	// KindPlugin is a plugin's hooks: hooks/hooks.json, a hooks file its manifest names,
	// or the manifest itself (.claude-plugin/plugin.json, FileRef.Manifest) for inline
	// hooks. FileRef.Plugin names the plugin (plugins.go).
	KindPlugin Kind = "plugin"
	// KindPluginRegistry is a file that lists plugins (installed_plugins.json,
	// known_marketplaces.json): read for its changes only, it holds no hooks.
	KindPluginRegistry Kind = "plugin-registry"
)

// DefaultManagedDir is where Claude Code reads managed settings on this OS (spec §7):
// /etc/claude-code on Linux and WSL, /Library/Application Support/ClaudeCode on macOS
// (lite.PathsFor decides).
var DefaultManagedDir = lite.PathsHere(os.Getenv).ManagedDir

// FileRef names one candidate settings file.
type FileRef struct {
	Path string
	Kind Kind
	// Origin is the label used in status and audit records; "" means Kind. hookd-owned
	// files holding hooks moved out of a Claude Code file claim the original source here.
	Origin Kind
	// Channel is which of Claude Code's managed channels a managed file belongs to:
	// ChannelFile ("", also for every other kind) or ChannelMDM (a plist).
	Channel string
	// Plugin is the plugin a KindPlugin file belongs to; Manifest marks its
	// .claude-plugin/plugin.json, whose "hooks" member (when an object) holds hooks.
	Plugin   *Plugin
	Manifest bool
	// Harness names the harness a KindHarness or KindHarnessConfig file belongs to.
	Harness string
	// Frontmatter is the subagent or skill a KindAgent or KindSkill file defines (its
	// Name is filled in from the file when parsed; for agents, the frontmatter "name").
	Frontmatter *Frontmatter
}

// Label is the source name hooks of this file carry in status, validate and the audit
// record: "plugin:<name>@<marketplace>" for a plugin's files, else Source.
func (r FileRef) Label() string {
	if r.Frontmatter != nil {
		return r.Frontmatter.Label()
	}
	if r.Plugin != nil {
		return r.Plugin.Label()
	}
	return string(r.Source())
}

// Source returns the label the file's hooks and rules carry: Origin, or Kind when Origin
// is empty. Precedence and "is this managed?" are decided by it, so moving a hook into a
// hookd-owned file never changes its standing.
func (r FileRef) Source() Kind {
	if r.Origin != "" {
		return r.Origin
	}
	return r.Kind
}

// Managed reports whether the file speaks with managed authority.
func (r FileRef) Managed() bool { return r.Source() == KindManaged }

// precedence ranks sources for scalar settings (spec §7: managed > command line > local >
// project > user). hookd-owned files rank as their Origin; an unlabelled one as a flag file.
func (r FileRef) precedence() int {
	switch r.Source() {
	case KindManaged:
		return 5
	case KindFlag, KindHookd:
		return 4
	case KindLocal:
		return 3
	case KindProject:
		return 2
	case KindUser:
		return 1
	}
	return 0
}

// base is the directory that "/x" permission-rule patterns are relative to (spec §8):
// project and local settings → the project root; user → the user dir (~/.claude);
// managed → the managed dir (also for managed-settings.d drop-ins); --settings files →
// the file's own directory. It follows where the file physically is (Kind), not its
// label — except for hookd-owned files with an Origin, which sit next to the Claude Code
// file their hooks came from and resolve `if` patterns exactly as it would.
func (r FileRef) base() string {
	dir := filepath.Dir(r.Path)
	kind := r.Kind
	if kind == KindHookd && r.Origin != "" {
		kind = r.Origin
	}
	switch kind {
	case KindProject, KindLocal:
		if filepath.Base(dir) == ".claude" {
			return filepath.Dir(dir)
		}
	case KindManaged:
		if filepath.Base(dir) == managedDropIns {
			return filepath.Dir(dir)
		}
	}
	return dir
}

const (
	managedFile    = "managed-settings.json"
	managedDropIns = "managed-settings.d"
)

// Where `hookd install claude-code` moves the hooks of each Claude Code settings file:
// a file beside it that Claude Code does not read (it reads only settings.json and
// settings.local.json there). Same schema as a settings file, plus a top-level "hookd"
// object recording the installation (HookdMeta).
const (
	HookdFile      = "hookd.json"       // beside ~/.claude/settings.json and <project>/.claude/settings.json
	HookdLocalFile = "hookd.local.json" // beside <project>/.claude/settings.local.json
)

// HookdPathFor returns the hookd-owned file that holds the hooks moved out of the Claude
// Code settings file at settingsPath, of kind user, project or local.
func HookdPathFor(settingsPath string, kind Kind) string {
	name := HookdFile
	if kind == KindLocal {
		name = HookdLocalFile
	}
	return filepath.Join(filepath.Dir(settingsPath), name)
}

// ClaudePathFor is the inverse of HookdPathFor: the Claude Code settings file whose hooks
// the hookd-owned file ref holds ("" unless ref is KindHookd with a user, project or
// local Origin).
func ClaudePathFor(ref FileRef) string {
	if ref.Kind != KindHookd {
		return ""
	}
	dir := filepath.Dir(ref.Path)
	switch ref.Origin {
	case KindUser, KindProject:
		return filepath.Join(dir, "settings.json")
	case KindLocal:
		return filepath.Join(dir, "settings.local.json")
	}
	return ""
}

// Sources locates the settings files of one project.
type Sources struct {
	// ManagedDir holds managed-settings.json and managed-settings.d/*.json; "" means
	// DefaultManagedDir.
	ManagedDir string
	// UserDir holds the user's settings.json; "" means Home/.claude.
	UserDir string
	// ProjectDir is the project root: <ProjectDir>/.claude/settings.json (project) and
	// <ProjectDir>/.claude/settings.local.json (local). "" means no project files.
	ProjectDir string
	// MDMProfiles are the MDM profile plists Claude Code reads, the first present one
	// winning (lite.Paths.MDMProfiles: on macOS the user's, then the device's
	// com.anthropic.claudecode plist under /Library/Managed Preferences; none on Linux).
	MDMProfiles []string
	// Extra are --settings files (Kind flag) and hookd-owned files, in that order of
	// configuration.
	Extra []FileRef
	Home  string
	// NoPlugins leaves plugins out of Files (tests of the settings files alone);
	// NoFrontmatter leaves out subagent and skill files.
	NoPlugins, NoFrontmatter bool
	// CodexHome is Codex's configuration directory ($CODEX_HOME); "" means Home/.codex.
	CodexHome string
}

func (s Sources) managedDir() string {
	if s.ManagedDir != "" {
		return s.ManagedDir
	}
	return DefaultManagedDir
}

func (s Sources) userDir() string {
	if s.UserDir != "" {
		return s.UserDir
	}
	if s.Home == "" {
		return ""
	}
	return filepath.Join(s.Home, ".claude")
}

// ManagedDropInDir is the managed-settings.d directory. The daemon watches it even when
// it does not exist yet, because a drop-in may appear at any time.
func (s Sources) ManagedDropInDir() string { return filepath.Join(s.managedDir(), managedDropIns) }

// Files returns every candidate settings file in configuration order: the managed file,
// the managed drop-ins (alphabetical), user, project, local, then Extra, then the
// harnesses' own files (harness.go). Each of user,
// project and local is followed by its hookd-owned file (HookdPathFor: Kind hookd, Origin
// the Claude Code file's kind), which holds the hooks `hookd install claude-code` moved
// out of it — so moved hooks keep their place in configuration order. Files that do not
// exist are listed too, so the daemon can watch for them; LoadFile reports them absent.
// Drop-ins are the only entries that depend on the disk: the *.json files present in
// managed-settings.d now (hidden files, such as editor swap files, are skipped).
func (s Sources) Files() []FileRef {
	md := s.managedDir()
	out := []FileRef{{Path: filepath.Join(md, managedFile), Kind: KindManaged}}
	for _, name := range dropIns(s.ManagedDropInDir()) {
		out = append(out, FileRef{Path: filepath.Join(s.ManagedDropInDir(), name), Kind: KindManaged})
	}
	// The MDM channel ranks above the file channel; listed after it, so that where both
	// apply ("merge") an MDM value wins a tie among managed files, as in Claude Code.
	for _, p := range s.MDMProfiles {
		out = append(out, FileRef{Path: p, Kind: KindManaged, Channel: ChannelMDM})
	}
	claude := func(path string, kind Kind) {
		out = append(out, FileRef{Path: path, Kind: kind},
			FileRef{Path: HookdPathFor(path, kind), Kind: KindHookd, Origin: kind})
	}
	if ud := s.userDir(); ud != "" {
		claude(filepath.Join(ud, "settings.json"), KindUser)
	}
	if s.ProjectDir != "" {
		cd := filepath.Join(s.ProjectDir, ".claude")
		claude(filepath.Join(cd, "settings.json"), KindProject)
		claude(filepath.Join(cd, "settings.local.json"), KindLocal)
	}
	for _, e := range s.Extra {
		if e.Kind == "" {
			e.Kind = KindFlag
		}
		out = append(out, e)
	}
	if ud := s.userDir(); ud != "" && !s.NoPlugins {
		out = append(out, s.PluginFiles(ud)...)
	}
	if !s.NoFrontmatter {
		out = append(out, s.FrontmatterFiles()...)
	}
	return append(out, s.harnessFiles()...)
}

// FrontmatterFiles are the subagent and skill files whose frontmatter may hold hooks:
// the user's and the project's agents (any depth) and skills, and the skills of every
// plugin installed for this project. They depend on the disk: the store lists them again
// on a full reload, and at a SessionStart that finds one it has not listed (store.Notice).
func (s Sources) FrontmatterFiles() []FileRef {
	var out []FileRef
	add := func(kind Kind, es []frontmatter.Entry, p *Plugin) {
		for _, e := range es {
			fm := &Frontmatter{Kind: kind, Name: e.Name, Dir: e.Dir, Command: e.Command, Plugin: p}
			if p != nil {
				fm.Name = p.Name + ":" + e.Name
			}
			out = append(out, FileRef{Path: e.Path, Kind: kind, Plugin: p, Frontmatter: fm})
		}
	}
	for _, d := range []string{s.userDir(), filepath.Join(s.ProjectDir, ".claude")} {
		if d != "" && d != ".claude" {
			add(KindAgent, frontmatter.Agents(filepath.Join(d, "agents")), nil)
			add(KindSkill, frontmatter.Skills(filepath.Join(d, "skills")), nil)
			add(KindSkill, frontmatter.Commands(filepath.Join(d, "commands")), nil)
		}
	}
	if ud := s.userDir(); ud != "" && !s.NoPlugins {
		plugins, _ := DiscoverPlugins(ud, s.ProjectDir)
		for _, p := range plugins {
			add(KindSkill, frontmatter.Skills(filepath.Join(p.Root, "skills")), p)
		}
	}
	return out
}

// PluginFiles are the plugin registry files of userDir and the hook files of every
// plugin installed for this project (DiscoverPlugins, PluginHookFiles). Like the
// drop-ins they depend on the disk: the store lists them again on every reload.
func (s Sources) PluginFiles(userDir string) []FileRef {
	var out []FileRef
	for _, p := range PluginRegistryFiles(userDir) {
		out = append(out, FileRef{Path: p, Kind: KindPluginRegistry})
	}
	plugins, _ := DiscoverPlugins(userDir, s.ProjectDir)
	for _, p := range plugins {
		refs, _ := PluginHookFiles(p)
		out = append(out, refs...)
	}
	return out
}

// WatchDirs returns the directories the daemon should watch to see every file of Files
// appear, change or vanish (editors save by rename, so watch directories, not files),
// including managed-settings.d. Sorted, without duplicates.
func (s Sources) WatchDirs() []string {
	seen := map[string]bool{s.ManagedDropInDir(): true}
	for _, f := range s.Files() {
		seen[filepath.Dir(f.Path)] = true
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// dropIns lists the *.json files of dir in alphabetical (byte) order.
func dropIns(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".json") || e.IsDir() {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names) // ReadDir sorts already; keep the order explicit
	return names
}

// ProjectDirFor finds the project root for a session whose working directory is cwd, for
// callers that did not send CLAUDE_PROJECT_DIR. Walking up from cwd (cwd included), it
// returns the first directory that has .claude/settings.json or .claude/settings.local.json;
// failing that, the first that has .git (a directory, or a file in worktrees); failing
// that, cwd. $HOME itself and / are never chosen by either walk: ~/.claude/settings.json
// is the user file, not a project file, and a dotfiles repository at $HOME must not turn
// every directory below it into one project.
func ProjectDirFor(cwd, home string) string {
	d, _ := ProjectDirForOwner(cwd, home, os.Geteuid())
	return d
}

// ProjectDirForOwner is ProjectDirFor for a daemon running as uid: like git's
// safe.directory check (CVE-2022-24765), the walk never looks at a directory owned by
// another uid (root excepted) — nor above it — since settings found there would run
// that user's hooks as this one. stoppedAt names the directory where the walk stopped
// for that reason ("" if it did not); if cwd itself belongs to another uid the answer
// is "" (no project: only managed and user settings apply).
func ProjectDirForOwner(cwd, home string, uid int) (dir, stoppedAt string) {
	if cwd == "" {
		return "", ""
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	cwd = filepath.Clean(cwd)
	if home != "" {
		home = filepath.Clean(home)
	}
	skip := func(d string) bool { return d == home || d == filepath.Dir(d) }
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	isFile := func(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }

	foreign := func(d string) bool {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err != nil {
			return false // missing: nothing there to trust or distrust
		}
		return int(st.Uid) != uid && st.Uid != 0
	}
	gitRoot := ""
	for d := cwd; ; d = filepath.Dir(d) {
		if foreign(d) {
			stoppedAt = d
			break
		}
		if !skip(d) {
			if isFile(filepath.Join(d, ".claude", "settings.json")) || isFile(filepath.Join(d, ".claude", "settings.local.json")) {
				return d, ""
			}
			if gitRoot == "" && exists(filepath.Join(d, ".git")) {
				gitRoot = d
			}
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if gitRoot != "" {
		return gitRoot, stoppedAt
	}
	if stoppedAt == cwd {
		return "", stoppedAt
	}
	return cwd, stoppedAt
}
