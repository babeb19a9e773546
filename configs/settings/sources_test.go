package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// write creates path (and its parents) with content.
func write(t testing.TB, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mkdir(t testing.TB, path string) string {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestSourcesFilesOrder(t *testing.T) {
	root := t.TempDir()
	managed := filepath.Join(root, "etc")
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "proj")
	// Drop-ins: alphabetical, *.json only, hidden files and directories skipped.
	for _, n := range []string{"20-b.json", "10-a.json", "30-c.txt", ".swap.json", "05-Z.json"} {
		write(t, filepath.Join(managed, "managed-settings.d", n), "{}")
	}
	mkdir(t, filepath.Join(managed, "managed-settings.d", "00-dir.json"))
	mkdir(t, filepath.Join(proj, ".codex"))
	mkdir(t, filepath.Join(proj, ".gemini"))

	src := Sources{
		ManagedDir: managed,
		Home:       home,
		ProjectDir: proj,
		Extra: []FileRef{
			{Path: filepath.Join(root, "flag.json")}, // Kind defaults to flag
			{Path: filepath.Join(root, "hookd", "moved.json"), Kind: KindHookd, Origin: KindProject},
		},
	}
	got := src.Files()
	want := []FileRef{
		{Path: filepath.Join(managed, "managed-settings.json"), Kind: KindManaged},
		{Path: filepath.Join(managed, "managed-settings.d", "05-Z.json"), Kind: KindManaged},
		{Path: filepath.Join(managed, "managed-settings.d", "10-a.json"), Kind: KindManaged},
		{Path: filepath.Join(managed, "managed-settings.d", "20-b.json"), Kind: KindManaged},
		{Path: filepath.Join(home, ".claude", "settings.json"), Kind: KindUser},
		{Path: filepath.Join(home, ".claude", "hookd.json"), Kind: KindHookd, Origin: KindUser},
		{Path: filepath.Join(proj, ".claude", "settings.json"), Kind: KindProject},
		{Path: filepath.Join(proj, ".claude", "hookd.json"), Kind: KindHookd, Origin: KindProject},
		{Path: filepath.Join(proj, ".claude", "settings.local.json"), Kind: KindLocal},
		{Path: filepath.Join(proj, ".claude", "hookd.local.json"), Kind: KindHookd, Origin: KindLocal},
		{Path: filepath.Join(root, "flag.json"), Kind: KindFlag},
		{Path: filepath.Join(root, "hookd", "moved.json"), Kind: KindHookd, Origin: KindProject},
		// Last: the plugin registry (no plugin installed here, so no plugin hook files).
		{Path: filepath.Join(home, ".claude", "plugins", "installed_plugins.json"), Kind: KindPluginRegistry},
		{Path: filepath.Join(home, ".claude", "plugins", "known_marketplaces.json"), Kind: KindPluginRegistry},
		{Path: filepath.Join(home, ".codex", "hookd.json"), Kind: KindHarness, Origin: "codex-user", Harness: "codex"},
		{Path: filepath.Join(proj, ".codex", "hookd.json"), Kind: KindHarness, Origin: "codex-project", Harness: "codex"},
		{Path: filepath.Join(home, ".gemini", "settings.json"), Kind: KindHarnessConfig, Origin: "gemini-user", Harness: "gemini"},
		{Path: filepath.Join(home, ".gemini", "hookd.json"), Kind: KindHarness, Origin: "gemini-user", Harness: "gemini"},
		{Path: filepath.Join(proj, ".gemini", "settings.json"), Kind: KindHarnessConfig, Origin: "gemini-project", Harness: "gemini"},
		{Path: filepath.Join(proj, ".gemini", "hookd.json"), Kind: KindHarness, Origin: "gemini-project", Harness: "gemini"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Files():\n got %v\nwant %v", got, want)
	}

	dirs := src.WatchDirs()
	wantDirs := []string{
		root, filepath.Join(root, "hookd"), managed, filepath.Join(managed, "managed-settings.d"),
		filepath.Join(home, ".claude"), filepath.Join(proj, ".claude"),
		filepath.Join(home, ".codex"), filepath.Join(proj, ".codex"), filepath.Join(home, ".gemini"), filepath.Join(proj, ".gemini"),
	}
	for _, d := range wantDirs {
		found := false
		for _, g := range dirs {
			found = found || g == d
		}
		if !found {
			t.Errorf("WatchDirs() = %v, missing %s", dirs, d)
		}
	}
}

func TestSourcesFilesDefaults(t *testing.T) {
	tests := []struct {
		name string
		src  Sources
		want []FileRef
	}{
		{"defaults", Sources{Home: "/nonexistent/h"}, []FileRef{
			{Path: "/etc/claude-code/managed-settings.json", Kind: KindManaged},
			{Path: "/nonexistent/h/.claude/settings.json", Kind: KindUser},
			{Path: "/nonexistent/h/.claude/hookd.json", Kind: KindHookd, Origin: KindUser},
			{Path: "/nonexistent/h/.claude/plugins/installed_plugins.json", Kind: KindPluginRegistry},
			{Path: "/nonexistent/h/.claude/plugins/known_marketplaces.json", Kind: KindPluginRegistry},
			{Path: "/nonexistent/h/.codex/hookd.json", Kind: KindHarness, Origin: "codex-user", Harness: "codex"},
			{Path: "/nonexistent/h/.gemini/settings.json", Kind: KindHarnessConfig, Origin: "gemini-user", Harness: "gemini"},
			{Path: "/nonexistent/h/.gemini/hookd.json", Kind: KindHarness, Origin: "gemini-user", Harness: "gemini"},
		}},
		{"CODEX_HOME", Sources{Home: "/nonexistent/h", UserDir: "/u", CodexHome: "/cx"}, []FileRef{
			{Path: "/etc/claude-code/managed-settings.json", Kind: KindManaged},
			{Path: "/u/settings.json", Kind: KindUser},
			{Path: "/u/hookd.json", Kind: KindHookd, Origin: KindUser},
			{Path: "/u/plugins/installed_plugins.json", Kind: KindPluginRegistry},
			{Path: "/u/plugins/known_marketplaces.json", Kind: KindPluginRegistry},
			{Path: "/cx/hookd.json", Kind: KindHarness, Origin: "codex-user", Harness: "codex"},
			{Path: "/nonexistent/h/.gemini/settings.json", Kind: KindHarnessConfig, Origin: "gemini-user", Harness: "gemini"},
			{Path: "/nonexistent/h/.gemini/hookd.json", Kind: KindHarness, Origin: "gemini-user", Harness: "gemini"},
		}},
		{"explicit user dir, project", Sources{ManagedDir: "/nonexistent/m", UserDir: "/u", ProjectDir: "/p"}, []FileRef{
			{Path: "/nonexistent/m/managed-settings.json", Kind: KindManaged},
			{Path: "/u/settings.json", Kind: KindUser},
			{Path: "/u/hookd.json", Kind: KindHookd, Origin: KindUser},
			{Path: "/p/.claude/settings.json", Kind: KindProject},
			{Path: "/p/.claude/hookd.json", Kind: KindHookd, Origin: KindProject},
			{Path: "/p/.claude/settings.local.json", Kind: KindLocal},
			{Path: "/p/.claude/hookd.local.json", Kind: KindHookd, Origin: KindLocal},
			{Path: "/u/plugins/installed_plugins.json", Kind: KindPluginRegistry},
			{Path: "/u/plugins/known_marketplaces.json", Kind: KindPluginRegistry},
			// No /p/.codex or /p/.gemini: a project's harness files are listed only when
			// the harness's directory exists.
		}},
		{"no home, no user file", Sources{ManagedDir: "/nonexistent/m"}, []FileRef{
			{Path: "/nonexistent/m/managed-settings.json", Kind: KindManaged},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.src.Files(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProjectDirFor(t *testing.T) {
	root := t.TempDir()
	home := mkdir(t, filepath.Join(root, "home", "u"))
	// home itself has settings and .git (dotfiles): never chosen.
	write(t, filepath.Join(home, ".claude", "settings.json"), "{}")
	mkdir(t, filepath.Join(home, ".git"))

	withSettings := filepath.Join(home, "a")
	write(t, filepath.Join(withSettings, ".claude", "settings.json"), "{}")
	mkdir(t, filepath.Join(withSettings, "sub", "repo", ".git")) // nested repo below settings

	localOnly := filepath.Join(home, "b")
	write(t, filepath.Join(localOnly, ".claude", "settings.local.json"), "{}")

	gitOnly := filepath.Join(home, "c")
	mkdir(t, filepath.Join(gitOnly, ".git"))
	mkdir(t, filepath.Join(gitOnly, "deep", "er"))

	worktree := filepath.Join(home, "d")
	write(t, filepath.Join(worktree, ".git"), "gitdir: /elsewhere\n") // .git file
	mkdir(t, filepath.Join(worktree, "x"))

	claudeDirNoSettings := filepath.Join(home, "e")
	mkdir(t, filepath.Join(claudeDirNoSettings, ".claude", "agents"))
	mkdir(t, filepath.Join(claudeDirNoSettings, "y"))

	plain := mkdir(t, filepath.Join(home, "plain", "dir"))
	outside := mkdir(t, filepath.Join(root, "elsewhere", "z"))

	tests := []struct {
		name, cwd, want string
	}{
		{"settings in cwd", withSettings, withSettings},
		{"settings above, nested git below wins not", filepath.Join(withSettings, "sub", "repo"), withSettings},
		{"local settings only", localOnly, localOnly},
		{"git root", filepath.Join(gitOnly, "deep", "er"), gitOnly},
		{"git file (worktree)", filepath.Join(worktree, "x"), worktree},
		{".claude without settings is not a project", filepath.Join(claudeDirNoSettings, "y"), filepath.Join(claudeDirNoSettings, "y")},
		{"nothing found: cwd (home's own settings and .git ignored)", plain, plain},
		{"home itself", home, home},
		{"outside home", outside, outside},
		{"unclean path", plain + "/../dir/", plain},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ProjectDirFor(tt.cwd, home); got != tt.want {
				t.Errorf("ProjectDirFor(%q) = %q, want %q", tt.cwd, got, tt.want)
			}
		})
	}
}

func TestFileRefBase(t *testing.T) {
	tests := []struct {
		ref  FileRef
		want string
	}{
		{FileRef{Path: "/p/.claude/settings.json", Kind: KindProject}, "/p"},
		{FileRef{Path: "/p/.claude/settings.local.json", Kind: KindLocal}, "/p"},
		{FileRef{Path: "/h/.claude/settings.json", Kind: KindUser}, "/h/.claude"},
		{FileRef{Path: "/etc/claude-code/managed-settings.json", Kind: KindManaged}, "/etc/claude-code"},
		{FileRef{Path: "/etc/claude-code/managed-settings.d/10.json", Kind: KindManaged}, "/etc/claude-code"},
		{FileRef{Path: "/x/flag.json", Kind: KindFlag}, "/x"},
		{FileRef{Path: "/s/hookd/moved.json", Kind: KindHookd, Origin: KindProject}, "/s/hookd"},
	}
	for _, tt := range tests {
		if got := tt.ref.base(); got != tt.want {
			t.Errorf("%v.base() = %q, want %q", tt.ref, got, tt.want)
		}
	}
}
