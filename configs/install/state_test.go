package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/settings"
)

// stateWorld is a world whose backups go to a state directory, as the CLI's do.
func stateWorld(t *testing.T, content string) (*world, string) {
	w := newWorld(t, content)
	return w, filepath.Join(t.TempDir(), "install-backups")
}

func (w *world) optsIn(backups string) Options {
	o := w.opts()
	o.BackupDir = backups
	return o
}

func (w *world) apply(p *Plan, err error) *Plan {
	w.t.Helper()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// The moved hooks are in hookd.json once: under "hooks". The install record names the
// backup, which holds the original, and says whether the file had hooks.
func TestHookdFileHoldsMovedHooksOnce(t *testing.T) {
	w, backups := stateWorld(t, mixed)
	w.apply(PlanInstall(w.optsIn(backups)))
	data := w.read(w.hookd)
	if n := strings.Count(data, "/p/h/guard.sh"); n != 1 {
		t.Errorf("the moved hook appears %d times in hookd.json:\n%s", n, data)
	}
	var f struct {
		Hookd map[string]any `json:"hookd"`
	}
	if err := json.Unmarshal([]byte(data), &f); err != nil {
		t.Fatal(err)
	}
	if _, dup := f.Hookd["original_hooks"]; dup || f.Hookd["version"] != float64(2) || f.Hookd["original_had_hooks"] != true {
		t.Errorf("install record: %v", f.Hookd)
	}
	b, _ := f.Hookd["backup"].(string)
	if got, err := os.ReadFile(b); err != nil || string(got) != mixed {
		t.Errorf("the record's backup %q does not hold the original: %v", b, err)
	}
}

// A version 1 record (original_hooks kept in hookd.json) still uninstalls exactly, also
// without its backup.
func TestVersion1RecordStillUninstalls(t *testing.T) {
	w, backups := stateWorld(t, mixed)
	w.apply(PlanInstall(w.optsIn(backups)))
	hf, err := readHookd(w.hookd)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := readSettings(hf.meta.Backup)
	m := *hf.meta
	m.Version, m.OriginalHadHooks = 1, false
	m.OriginalHooks = orig.hooks.JSON()
	if err := os.Remove(m.Backup); err != nil {
		t.Fatal(err)
	}
	v1 := hf.top.Set("hookd", m).JSON()
	if err := os.WriteFile(w.hookd, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	w.apply(PlanUninstall(w.optsIn(backups)))
	if got := hooksOf(t, w.read(w.settings)); !equalJSON([]byte(got), orig.hooks.JSON()) {
		t.Errorf("v1 uninstall restored hooks\n%s\nwant\n%s", got, orig.hooks.JSON())
	}
}

// The case: hookd.json deleted, then uninstall. The backup brings the file back
// byte for byte and is named.
func TestUninstallWithoutHookdFileRestoresFromBackup(t *testing.T) {
	for name, content := range map[string]string{
		"pretty":   mixed,
		"one line": `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"s.sh"}]}]},"env":{"A":"1"}}`,
		"no hooks": "{\n  \"model\": \"opus\",\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"s.sh\"}]}]}\n}\n",
	} {
		t.Run(name, func(t *testing.T) {
			w, backups := stateWorld(t, content)
			w.apply(PlanInstall(w.optsIn(backups)))
			if err := os.Remove(w.hookd); err != nil {
				t.Fatal(err)
			}
			if f := Check(w.settings, settings.KindProject, backups); len(f) != 1 || !strings.Contains(f[0].Message, "forwarders present, moved hooks missing") ||
				!strings.Contains(f[0].Message, "hookd uninstall claude-code --scope project") {
				t.Errorf("Check: %v", f)
			}
			p := w.apply(PlanUninstall(w.optsIn(backups)))
			if got := w.read(w.settings); got != content {
				t.Errorf("restored:\n%s\nwant:\n%s", got, content)
			}
			sum := strings.Join(p.Summary, "\n")
			if !strings.Contains(sum, "byte for byte from "+backups) || !strings.Contains(sum, "is gone") {
				t.Errorf("summary does not name the backup:\n%s", sum)
			}
			if f := Check(w.settings, settings.KindProject, backups); len(f) != 0 {
				t.Errorf("Check after uninstall: %v", f)
			}
			if _, err := PlanUninstall(w.optsIn(backups)); err == nil || !strings.Contains(err.Error(), "not installed") {
				t.Errorf("second uninstall: %v", err)
			}
		})
	}
}

// Edited since the install (another key), or installed twice with a hook added between:
// the forwarders go, every moved hook comes back, the edit stays.
func TestUninstallWithoutHookdFileAfterEdits(t *testing.T) {
	w, backups := stateWorld(t, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"s.sh"}]}]},"env":{"A":"1"}}`)
	w.apply(PlanInstall(w.optsIn(backups)))
	// A hook added to Claude Code's file, moved by a second install.
	s := strings.Replace(w.read(w.settings), `"Stop"`, `"SessionEnd":[{"hooks":[{"type":"command","command":"bye.sh"}]}],"Stop"`, 1)
	w.write(s)
	w.apply(PlanInstall(w.optsIn(backups)))
	// Then someone edits the permissions and deletes hookd.json.
	w.write(strings.Replace(w.read(w.settings), `"env"`, `"permissions":{"allow":["Read"]},"env"`, 1))
	if err := os.Remove(w.hookd); err != nil {
		t.Fatal(err)
	}
	p := w.apply(PlanUninstall(w.optsIn(backups)))
	got := w.read(w.settings)
	want := `{"Stop":[{"hooks":[{"type":"command","command":"s.sh"}]}],"SessionEnd":[{"hooks":[{"type":"command","command":"bye.sh"}]}]}`
	if !equalJSON([]byte(hooksOf(t, got)), []byte(want)) {
		t.Errorf("hooks after recovery: %s\nwant %s", hooksOf(t, got), want)
	}
	if !strings.Contains(got, `"permissions":{"allow":["Read"]}`) {
		t.Errorf("the later edit was lost:\n%s", got)
	}
	if sum := strings.Join(p.Summary, "\n"); !strings.Contains(sum, "1 later backup") {
		t.Errorf("summary: %s", sum)
	}
}

func TestUninstallWithoutHookdFileOrBackupRefuses(t *testing.T) {
	w, backups := stateWorld(t, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"s.sh"}]}]}}`)
	w.apply(PlanInstall(w.optsIn(backups)))
	os.Remove(w.hookd)
	os.RemoveAll(backups)
	before := w.read(w.settings)
	if _, err := PlanUninstall(w.optsIn(backups)); err == nil || !strings.Contains(err.Error(), "cannot be restored") {
		t.Errorf("uninstall with nothing to restore from: %v", err)
	}
	if w.read(w.settings) != before {
		t.Error("the settings file changed")
	}
	if f := Check(w.settings, settings.KindProject, backups); len(f) != 1 || !strings.Contains(f[0].Message, "No backup without forwarders") {
		t.Errorf("Check: %v", f)
	}
}

// Backups are pruned to the newest N per file; the one the install record names stays.
func TestBackupsArePruned(t *testing.T) {
	w, backups := stateWorld(t, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"s.sh"}]}]}}`)
	o := w.optsIn(backups)
	o.KeepBackups = 3
	w.apply(PlanInstall(o))
	hf, _ := readHookd(w.hookd)
	first := hf.meta.Backup
	for i := range 6 { // each install moves one new hook: one backup each
		s := strings.Replace(w.read(w.settings), `"Stop"`, `"SessionEnd":[{"hooks":[{"type":"command","command":"x`+string(rune('a'+i))+`.sh"}]}],"Stop"`, 1)
		w.write(s)
		o := w.optsIn(backups)
		o.KeepBackups = 3
		w.apply(PlanInstall(o))
	}
	all := backupsOf(backups, w.settings)
	if len(all) != 4 || !containsPath(all, first) {
		t.Errorf("backups after 7 installs keeping 3: %d %v (the record's %s must stay)", len(all), all, first)
	}
}

// Issue 28 item 7: a dotfiles manager's symlinked settings file stays a link through
// install and uninstall, and what the user later writes into the dotfiles copy keeps
// reaching Claude Code.
func TestSymlinkedSettingsFile(t *testing.T) {
	home := t.TempDir()
	dotfiles := filepath.Join(home, "dotfiles", "claude")
	claude := filepath.Join(home, ".claude")
	for _, d := range []string{dotfiles, claude} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const orig = "{\n  \"hooks\": {\"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"guard.sh\"}]}]}\n}\n"
	target := filepath.Join(dotfiles, "settings.json")
	if err := os.WriteFile(target, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(claude, "settings.json")
	if err := os.Symlink("../dotfiles/claude/settings.json", link); err != nil {
		t.Fatal(err)
	}
	isLink := func(when string) {
		t.Helper()
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s: %s is no longer a symbolic link (%v)", when, link, err)
		}
	}
	o := Options{Scope: settings.KindUser, Settings: link, Forwarder: fwd, BackupDir: filepath.Join(home, "state"), HookdVersion: "test"}
	p, err := PlanInstall(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	isLink("after install")
	if sum := strings.Join(p.Summary, "\n"); !strings.Contains(sum, "writing through it to "+target) {
		t.Errorf("the summary does not name the link's target:\n%s", sum)
	}
	data, _ := os.ReadFile(target)
	if !strings.Contains(string(data), fwd) || strings.Contains(string(data), "guard.sh") {
		t.Fatalf("the dotfiles copy was not installed:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(claude, "hookd.json")); err != nil {
		t.Errorf("hookd.json is not beside the link, where hookd reads it: %v", err)
	}
	// The user adds a deny rule in the dotfiles copy: Claude Code reads it through the link.
	edited := strings.Replace(string(data), "{\n", "{\n  \"permissions\": {\"deny\": [\"Read(./.env)\"]},\n", 1)
	if err := os.WriteFile(target, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(link); !strings.Contains(string(got), "Read(./.env)") {
		t.Fatal("the deny rule added in the dotfiles copy does not reach ~/.claude/settings.json")
	}
	// Take the edit back out, then uninstall: the dotfiles copy is as it was, the link a link.
	if err := os.WriteFile(target, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanUninstall(o); err != nil {
		t.Fatal(err)
	}
	p, _ = PlanUninstall(o)
	if err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	isLink("after uninstall")
	if got, _ := os.ReadFile(target); string(got) != orig {
		t.Errorf("uninstall left the dotfiles copy\n%s\nwant\n%s", got, orig)
	}

	// A link whose target's directory is gone: refused, naming the target.
	dangling := filepath.Join(t.TempDir(), "settings.json")
	if err := os.Symlink(filepath.Join(home, "nowhere", "settings.json"), dangling); err != nil {
		t.Fatal(err)
	}
	o.Settings = dangling
	if _, err := PlanInstall(o); err == nil || !strings.Contains(err.Error(), filepath.Join(home, "nowhere", "settings.json")) {
		t.Errorf("install through a dangling link: %v", err)
	}
	t.Logf("faults_install: ~/.claude/settings.json a symlink into dotfiles: install and uninstall wrote through it, the link stayed a link, a deny rule added in the dotfiles copy reached it, uninstall restored the copy byte for byte; a dangling link refused, naming its target")
}

// A settings file that is not valid JSON: install refuses, naming line and column.
func TestInstallNamesTheSyntaxErrorsPlace(t *testing.T) {
	w := newWorld(t, "{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}\n")
	_, err := PlanInstall(w.opts())
	if err == nil || !strings.Contains(err.Error(), w.settings+":3:14: not a valid settings file") {
		t.Errorf("install on a syntax error: %v", err)
	}
}
