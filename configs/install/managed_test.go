package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
)

// The managed drop-in: allowManagedHooksOnly and a hookc forwarder for every event but
// the three a forwarder would change, nothing else (no key of hookd's); hookd's own
// loader reads it as a routing drop-in; it is refreshed, never clobbers a file hookd did
// not write, and uninstall removes exactly it.
func TestManagedDropIn(t *testing.T) {
	managed := t.TempDir()
	dropIn := filepath.Join(managed, "managed-settings.d", DropInName)
	o := Options{Scope: settings.KindManaged, Settings: dropIn, Forwarder: fwd}
	apply := func(plan func(Options) (*Plan, error), o Options) *Plan {
		t.Helper()
		p, err := plan(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	apply(PlanInstall, o)
	data, err := os.ReadFile(dropIn)
	if err != nil {
		t.Fatal(err)
	}
	if keys := topKeys(t, string(data)); !reflect.DeepEqual(keys, []string{"allowManagedHooksOnly", "hooks"}) {
		t.Errorf("top-level keys %v", keys)
	}
	hooks, _ := parseObject([]byte(hooksOf(t, string(data))))
	var want []string
	for _, name := range events.Names() {
		if name != "FileChanged" && name != "WorktreeCreate" && name != "WorktreeRemove" {
			want = append(want, name)
		}
	}
	if got := eventsOf(hooks); !reflect.DeepEqual(got, want) || len(got) != len(events.Names())-3 {
		t.Errorf("forwarded events %v, want %v", got, want)
	}
	eachHandler(hooks, func(event string, m *string, hi handlerInfo) {
		ev, _ := events.Lookup(event)
		if !isForwarderCmd(t, hi, fwd) || hi.Type != "command" {
			t.Errorf("%s: handler %+v", event, hi)
		}
		if (ev.MatcherField != "") != (m != nil && *m == "*") {
			t.Errorf("%s: matcher %v", event, m)
		}
		if event == "SessionEnd" && hi.Timeout != nil || event != "SessionEnd" && (hi.Timeout == nil || *hi.Timeout < 600) {
			t.Errorf("%s: timeout %v", event, hi.Timeout)
		}
	})

	// hookd's loader: a valid managed file with no warning (Claude Code would read it),
	// recognised as the routing drop-in; a user hook runs in hookd.
	src := settings.Sources{ManagedDir: managed, Home: t.TempDir()}
	user := filepath.Join(src.Home, ".claude", "settings.json")
	writeFile(t, user, `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"user-guard"}]}]}}`)
	var files []*settings.File
	for _, ref := range src.Files() {
		f, err := settings.LoadFile(ref, src.Home)
		if err != nil {
			continue
		}
		if ref.Path == dropIn {
			for _, w := range f.Warnings {
				// fwd is a made-up path: the linter's finding that it does not exist is
				// right, and tested in configs/settings (TestLintCommands).
				if !strings.Contains(w.Message, "hookd's forwarder: program "+fwd+" does not exist") {
					t.Errorf("drop-in warning: %v", w)
				}
			}
		}
		files = append(files, f)
	}
	s := settings.Compile(files)
	pre, _ := events.Lookup("PreToolUse")
	run, _ := s.Match(settings.Query{Event: pre, MatchValue: "Bash"})
	if s.RoutedBy != dropIn || len(run) != 1 || run[0].Command != "user-guard" {
		t.Errorf("RoutedBy %q, run %v", s.RoutedBy, run)
	}

	// Again: nothing changes. A new forwarder path: rewritten.
	if p := apply(PlanInstall, o); p.Changed() {
		t.Errorf("reinstall changed the drop-in: %v", p.Summary)
	}
	o2 := o
	o2.Forwarder = "/usr/local/bin/hookc"
	apply(PlanInstall, o2)
	if b, _ := os.ReadFile(dropIn); !strings.Contains(string(b), "/usr/local/bin/hookc") || strings.Contains(string(b), fwd) {
		t.Errorf("forwarder not refreshed:\n%s", b)
	}

	// An admin's hook in the file: neither install nor uninstall touches it.
	edited := strings.Replace(string(data), `"hooks": {`, `"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/corp/audit.sh"}]}], `, 1)
	writeFile(t, dropIn, edited)
	for name, plan := range map[string]func(Options) (*Plan, error){"install": PlanInstall, "uninstall": PlanUninstall} {
		if _, err := plan(o); err == nil || !strings.Contains(err.Error(), "more than hookd's forwarders") {
			t.Errorf("%s over a foreign drop-in: %v", name, err)
		}
	}
	writeFile(t, dropIn, string(data))
	apply(PlanUninstall, o)
	if _, err := os.Stat(dropIn); !os.IsNotExist(err) {
		t.Errorf("drop-in still there: %v", err)
	}
	if _, err := PlanUninstall(o); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("second uninstall: %v", err)
	}
	if ents, _ := os.ReadDir(managed); len(ents) != 1 {
		t.Errorf("managed dir holds %v", ents)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A project-scope install and uninstall leave a git repository exactly as they found it:
// `git status --porcelain` is empty afterwards (the settings file byte-identical, no
// backup or other new file, a .claude/ or settings.json the install created removed
// again), and the backups are in the backup directory (hookd's state directory), never
// beside the file.
func TestProjectInstallLeavesNoFootprint(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("git is required in CI")
		}
		t.Skip("SKIP (loud): git not installed; this test needs a real repository")
	}
	for name, setup := range map[string]func(t *testing.T, repo string){
		"no .claude":                func(t *testing.T, repo string) {},
		"tracked .claude":           func(t *testing.T, repo string) { writeFile(t, filepath.Join(repo, ".claude", "settings.json"), mixed) },
		"tracked, no settings.json": func(t *testing.T, repo string) { writeFile(t, filepath.Join(repo, ".claude", "agents", "a.md"), "x\n") },
		"tracked, no hooks key": func(t *testing.T, repo string) {
			writeFile(t, filepath.Join(repo, ".claude", "settings.json"), "{\n\t\"model\": \"opus\"\n}")
		},
	} {
		t.Run(name, func(t *testing.T) {
			repo, backups := t.TempDir(), t.TempDir()
			git := func(args ...string) string {
				t.Helper()
				cmd := exec.Command(gitBin, args...)
				cmd.Dir = repo
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
				return string(out)
			}
			git("init", "-q")
			writeFile(t, filepath.Join(repo, "README"), "r\n")
			setup(t, repo)
			git("add", "-A")
			git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
			settingsFile := filepath.Join(repo, ".claude", "settings.json")
			before, _ := readOptional(settingsFile)
			treeBefore := listTree(t, repo)
			o := Options{Scope: settings.KindProject, Settings: settingsFile, Forwarder: fwd, BackupDir: backups}
			for _, plan := range []func(Options) (*Plan, error){PlanInstall, PlanUninstall} {
				p, err := plan(o)
				if err != nil {
					t.Fatal(err)
				}
				if err := p.Apply(); err != nil {
					t.Fatal(err)
				}
				for _, b := range p.Backups {
					if !strings.HasPrefix(b, backups+string(filepath.Separator)) {
						t.Errorf("backup %s outside the backup dir", b)
					}
				}
				if st := git("status", "--porcelain", "--untracked-files=all"); strings.Contains(st, "hookd-backup") {
					t.Errorf("a backup shows in git status:\n%s", st)
				}
			}
			if st := git("status", "--porcelain", "--untracked-files=all", "--ignored"); st != "" {
				t.Errorf("git status after install+uninstall:\n%s", st)
			}
			// git does not see empty directories: compare the tree itself too.
			if got := listTree(t, repo); !reflect.DeepEqual(got, treeBefore) {
				t.Errorf("tree after install+uninstall:\n%v\nbefore:\n%v", got, treeBefore)
			}
			after, _ := readOptional(settingsFile)
			if !sameFile(before, after) {
				t.Errorf("settings.json not restored byte for byte:\n%q\nwant\n%q", after, before)
			}
			if ents, _ := os.ReadDir(backups); before != nil && len(ents) == 0 {
				t.Error("no backup was made of an existing settings file")
			}
		})
	}
}

// listTree lists every path under root but .git, with its mode.
func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, strings.TrimPrefix(p, root)+" "+fi.Mode().String())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
