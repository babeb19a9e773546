//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/test/claudeapi"
	"github.com/hookd/hookd/test/testutil"
)

// The managed drop-in, black box (issue 16): `hookd install claude-code --scope managed`
// writes /etc/claude-code/managed-settings.d/50-hookd.json — the path Claude Code 2.1.330
// reads on Linux, which nothing can redirect (its managed-dir lookup is a stub returning
// the platform default) — and then real Claude Code runs a user hook and a project hook
// only through hookd (audit records name their files), while a native hook added to the
// user's settings after the install does not run natively either: it too runs in hookd
// only, audited.
//
// Writing the machine's real /etc/claude-code would change every other Claude Code on the
// machine for the test's duration (allowManagedHooksOnly turns off their user and project
// hooks) — on a shared machine, other test runs. So the test gives the processes it starts
// a private mount namespace in which a tmpfs covers /etc/claude-code: Claude Code, hookd and
// hookc open the real path, and nobody else sees the drop-in. The one change to the
// machine is the empty mount point /etc/claude-code when it did not exist (as root; removed
// again at cleanup, under a lock that serialises such tests). Without root it tries an
// unprivileged user namespace. Root without mount namespaces (or HOOKD_E2E_MANAGED=host)
// uses the machine's real directory (hostManaged). Neither root nor a user namespace: a
// loud skip (a failure under CI=true).

const managedDir = "/etc/claude-code"

// managedNS is a private mount namespace with a scratch /etc/claude-code — or, with pid
// 0, the machine's own /etc/claude-code (root, and no mount namespace to be had).
type managedNS struct {
	pid  int
	user bool // an unprivileged user namespace (nsenter -U)
}

// command builds a command that runs inside the namespace, in directory dir (nsenter
// would otherwise start it in the namespace's root).
func (ns *managedNS) command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	if ns.pid == 0 {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		return cmd
	}
	nsArgs := []string{"-t", fmt.Sprint(ns.pid), "-m", "--wd=" + dir}
	if ns.user {
		nsArgs = append(nsArgs, "-U", "--preserve-credentials")
	}
	return exec.CommandContext(ctx, "nsenter", append(append(nsArgs, "--", name), args...)...)
}

func setupManagedNS(t *testing.T) *managedNS {
	t.Helper()
	skip := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("managed-scope e2e cannot run: %s (CI=true: it must; run CI as root or allow user namespaces)", why)
		}
		t.Skipf("SKIP (loud): managed-scope e2e cannot run here: %s", why)
	}
	for _, tool := range []string{"unshare", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			skip(tool + " not found (util-linux)")
		}
	}
	root := os.Geteuid() == 0

	// One managed test at a time: they share the mount point's creation and removal.
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "hookd-e2e-managed.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); lock.Close() })

	var script string
	var unshareArgs []string
	switch _, statErr := os.Stat(managedDir); {
	case root:
		if os.IsNotExist(statErr) {
			// Create only what is missing, remove exactly that.
			if err := os.Mkdir(managedDir, 0o755); err != nil {
				t.Fatalf("creating the mount point %s: %v", managedDir, err)
			}
			t.Cleanup(func() {
				if err := os.Remove(managedDir); err != nil {
					t.Errorf("removing the mount point %s this test created: %v", managedDir, err)
				}
			})
		}
		unshareArgs = []string{"--mount", "--propagation", "private"}
		script = "mount -t tmpfs -o mode=0755 hookd-e2e " + managedDir
	case statErr == nil:
		unshareArgs = []string{"--user", "--map-root-user", "--mount", "--propagation", "private"}
		script = "mount -t tmpfs -o mode=0755 hookd-e2e " + managedDir
	default:
		// No mount point and no root to make one: an overlay over /etc in a user
		// namespace, with the mount point in its upper layer.
		up := t.TempDir()
		unshareArgs = []string{"--user", "--map-root-user", "--mount", "--propagation", "private"}
		script = fmt.Sprintf("mkdir -p %[1]s/u %[1]s/w && mount -t overlay hookd-e2e -o lowerdir=/etc,upperdir=%[1]s/u,workdir=%[1]s/w /etc && mkdir %[2]s", up, managedDir)
	}
	holder := exec.Command("unshare", append(unshareArgs, "sh", "-c", "set -e; "+script+"; echo ready; exec sleep 100000")...)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuf
	holder.Stderr = &stderr
	failed := func(why string) *managedNS {
		if root {
			return hostManaged(t, why)
		}
		skip(why)
		return nil
	}
	if os.Getenv("HOOKD_E2E_MANAGED") == "host" {
		return failed("HOOKD_E2E_MANAGED=host")
	}
	if err := holder.Start(); err != nil {
		return failed(fmt.Sprintf("unshare %v: %v", unshareArgs, err))
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		holder.Process.Kill()
		holder.Wait()
		return failed(fmt.Sprintf("unshare %v with %q failed: %s", unshareArgs, script, stderr.String()))
	}
	ns := &managedNS{pid: holder.Process.Pid, user: !root}
	// The namespace really is private: the scratch dir is empty inside, and what is
	// written inside does not appear outside.
	probe := ns.command(context.Background(), "/", "sh", "-c", "ls -A "+managedDir+"; touch "+managedDir+"/.probe")
	if b, err := probe.CombinedOutput(); err != nil || len(bytes.TrimSpace(b)) != 0 {
		t.Fatalf("scratch %s inside the namespace: %v %q", managedDir, err, b)
	}
	if _, err := os.Stat(filepath.Join(managedDir, ".probe")); !os.IsNotExist(err) {
		t.Fatalf("the namespace's %s leaks to the machine: %v", managedDir, err)
	}
	return ns
}

// hostManaged is the fallback for root without mount namespaces (a container without
// CAP_SYS_ADMIN): the machine's real /etc/claude-code, creating only what is missing, never
// touching an existing drop-in, removing exactly what it created — also when the test fails
// — under the lock setupManagedNS holds.
func hostManaged(t *testing.T, why string) *managedNS {
	t.Helper()
	t.Logf("NOTE: no private mount namespace (%s): using the machine's real %s; other Claude Code processes on this machine see hookd's drop-in while the test runs", why, managedDir)
	if err := os.MkdirAll(managedDir, 0o755); err != nil { // setupManagedNS created it when missing
		t.Fatal(err)
	}
	d := filepath.Join(managedDir, "managed-settings.d")
	if _, err := os.Lstat(d); os.IsNotExist(err) {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := os.Remove(d); err != nil {
				t.Errorf("removing %s this test created: %v", d, err)
			}
		})
	}
	f := filepath.Join(d, "50-hookd.json")
	if _, err := os.Lstat(f); err == nil {
		t.Fatalf("%s already exists on this machine; the test does not overwrite it", f)
	}
	t.Cleanup(func() {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Errorf("removing %s: %v", f, err)
		}
	})
	return &managedNS{}
}

// ancestry is a hook body line: it appends the comm names of the hook's ancestors to the
// counts file, so the test can tell a hook Claude Code ran (claude among them) from one
// hookd ran (hookd's daemon, not under claude).
func ancestry(countFile string) string {
	return "cat > /dev/null\n" + ancestryChain + fmt.Sprintf("echo \"$chain\" >> %s\n", countFile)
}

// ancestryChain sets $chain to the comm names of the hook's ancestors, /-separated.
const ancestryChain = `p=$$; chain=""; i=0
while [ "$p" -gt 1 ] && [ $i -lt 12 ]; do
  chain="$chain/$(cat /proc/$p/comm 2>/dev/null)"
  p=$(sed 's/.*) [A-Za-z] \([0-9]*\).*/\1/' /proc/$p/stat 2>/dev/null || echo 1)
  i=$((i+1))
done
`

func TestClaudeManagedDropIn(t *testing.T) {
	ns := setupManagedNS(t)

	w := newManagedWorld(t)
	root, home, proj, state, sock, counts := w.root, w.home, w.proj, w.state, w.sock, w.counts
	write, script := w.write, w.script
	hooksFile := func(extra string, cmds ...string) string {
		var hs []string
		for _, c := range cmds {
			hs = append(hs, fmt.Sprintf(`{"type": "command", "command": %q}`, c))
		}
		return fmt.Sprintf(`{%s"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [%s]}]}}`, extra, strings.Join(hs, ", ")) + "\n"
	}
	userSettings := filepath.Join(home, ".claude", "settings.json")
	projSettings := filepath.Join(proj, ".claude", "settings.json")
	write(userSettings, hooksFile("", script("user")), 0o644)
	write(projSettings, hooksFile(`"permissions": {"allow": ["Bash(echo *)"]}, `, script("project")), 0o644)
	trust, _ := json.Marshal(map[string]any{"projects": map[string]any{proj: map[string]any{"hasTrustDialogAccepted": true}}})
	write(filepath.Join(home, ".claude.json"), string(trust), 0o644)
	userBefore, _ := os.ReadFile(userSettings)
	projBefore, _ := os.ReadFile(projSettings)

	// The forwarder: a witness named hookc that counts the events reaching it, then runs
	// the real hookc.
	witness := filepath.Join(root, "bin", "hookc")
	os.MkdirAll(filepath.Dir(witness), 0o755)
	write(witness, fmt.Sprintf("#!/bin/sh\nf=$(mktemp)\ncat > \"$f\"\nsed -n 's/.*\"hook_event_name\" *: *\"\\([A-Za-z]*\\)\".*/\\1/p' \"$f\" | head -n 1 >> %s\n%s < \"$f\"\nrc=$?\nrm -f \"$f\"\nexit $rc\n",
		filepath.Join(counts, "_hookc"), bin.hookc), 0o755)

	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=x", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"XDG_CONFIG_HOME=" + filepath.Join(root, "xdg-config"), "XDG_STATE_HOME=" + filepath.Join(root, "xdg-state"),
		"HOOKD_SOCKET=" + sock, "HOOKD_BIN=" + bin.hookd, "HOOKD_STATE_DIR=" + state}
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	hookd := func(args ...string) string {
		t.Helper()
		cmd := ns.command(ctx, proj, bin.hookd, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hookd %v: %v\n%s", args, err, out)
		}
		return string(out)
	}

	// Install: no --managed-dir, so hookd writes (and later reads) the default, real path.
	t.Log(hookd("install", "claude-code", "--scope", "managed", "--hookc", witness))
	dropIn := filepath.Join(managedDir, "managed-settings.d", "50-hookd.json")
	cat := ns.command(ctx, "/", "cat", dropIn)
	dropData, err := cat.Output()
	if err != nil || !bytes.Contains(dropData, []byte(`"allowManagedHooksOnly": true`)) || !bytes.Contains(dropData, []byte(witness)) {
		t.Fatalf("drop-in %s inside the namespace: %v\n%s", dropIn, err, dropData)
	}
	// A developer adds a native hook to their user settings after the install.
	write(userSettings, hooksFile("", script("user"), script("late")), 0o644)
	userAfterEdit, _ := os.ReadFile(userSettings)

	// The daemon, reading the default managed dir.
	daemon := ns.command(context.Background(), "/", bin.hookd, "--socket", sock, "--user-dir", filepath.Join(home, ".claude"), "serve")
	daemon.Env = env
	d := testutil.StartDaemon(t, testutil.DaemonOptions{Cmd: daemon, Socket: sock})
	stopDaemon := d.Stop

	// runs: the ancestries each hook recorded; audited: how often the audit log names
	// each hook, with the file and source it was recorded with.
	type hookRec struct{ File, Source string }
	check := func(phase, marker string, want int) {
		t.Helper()
		srv := claudeapi.Start(t, []claudeapi.Turn{bash("echo " + marker), say("done")})
		cmd := ns.command(ctx, proj, bin.claude, "-p", "go", "--output-format", "stream-json", "--verbose", "--include-hook-events")
		cmd.Env = append(env, "ANTHROPIC_BASE_URL="+srv.URL)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: claude: %v\nstderr: %s\nstdout: %s", phase, err, stderr.String(), stdout.String())
		}
		if !strings.Contains(stdout.String(), marker) {
			t.Errorf("%s: the Bash call did not run:\n%s", phase, stdout.String())
		}
		// Each hook ran exactly once per Bash call, and never by Claude Code: the nearest
		// of claude and hookd among its ancestors is hookd (the daemon; or, without one,
		// `hookd run` under hookc under claude).
		for _, name := range []string{"user", "project", "late"} {
			b, _ := os.ReadFile(filepath.Join(counts, name))
			runs := strings.Fields(string(b))
			if len(runs) != want {
				t.Errorf("%s: %s hook ran %d times in all (%q), want %d", phase, name, len(runs), runs, want)
			}
			for _, chain := range runs {
				h, c := strings.Index(chain, "/hookd/"), strings.Index(chain, "/claude/")
				if h < 0 || c >= 0 && c < h {
					t.Errorf("%s: %s hook ran with ancestors %s: not through hookd", phase, name, chain)
				}
			}
		}
		if b, _ := os.ReadFile(filepath.Join(counts, "_hookc")); !strings.Contains(string(b), "PreToolUse") || !strings.Contains(string(b), "SessionStart") {
			t.Errorf("%s: events through the managed forwarder: %q", phase, b)
		}
		// The audit records name each hook's own file and source.
		data, err := os.ReadFile(filepath.Join(state, "audit", "decisions.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		audited := map[string][]hookRec{}
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var r struct {
				Event string
				Hooks []struct{ Source, File, Command string }
			}
			if err := dec.Decode(&r); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			if r.Event != "PreToolUse" {
				continue
			}
			for _, h := range r.Hooks {
				name := strings.TrimSuffix(filepath.Base(h.Command), ".sh")
				audited[name] = append(audited[name], hookRec{h.File, h.Source})
			}
		}
		for name, rec := range map[string]hookRec{
			"user":    {File: userSettings, Source: "user"},
			"project": {File: projSettings, Source: "project"},
			"late":    {File: userSettings, Source: "user"},
		} {
			if got := audited[name]; len(got) != want || got[want-1] != rec {
				t.Errorf("%s: audit records of the %s hook %+v; want %d, the last with file %s source %s", phase, name, got, want, rec.File, rec.Source)
			}
		}
	}
	check("with the daemon", "managed-ok", 1)
	// Without a daemon hookc runs the event in-process (`hookd run`): same routing, same
	// audit log (HOOKD_STATE_DIR).
	stopDaemon()
	check("hookc's fallback, no daemon", "fallback-ok", 2)

	// User and project files untouched by the install.
	if b, _ := os.ReadFile(projSettings); !bytes.Equal(b, projBefore) {
		t.Errorf("project settings changed:\n%s", b)
	}
	if b, _ := os.ReadFile(userSettings); !bytes.Equal(b, userAfterEdit) || bytes.Equal(userBefore, userAfterEdit) {
		t.Errorf("user settings changed by hookd:\n%s", b)
	}
	for _, dir := range []string{filepath.Join(home, ".claude"), filepath.Join(proj, ".claude")} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents { // Claude Code keeps its own state in ~/.claude
			if strings.Contains(e.Name(), "hookd") {
				t.Errorf("%s: new file %s", dir, e.Name())
			}
		}
	}

	// Uninstall removes exactly the drop-in.
	t.Log(hookd("uninstall", "claude-code", "--scope", "managed"))
	if b, err := ns.command(ctx, "/", "ls", "-A", filepath.Join(managedDir, "managed-settings.d")).CombinedOutput(); err != nil || len(bytes.TrimSpace(b)) != 0 {
		t.Errorf("after uninstall managed-settings.d holds %q (%v)", b, err)
	}
}

// managedWorld is the scratch HOME, project, state dir and socket of a managed-scope e2e
// test, with its hook scripts that record their process ancestry under counts/.
type managedWorld struct {
	t                                     *testing.T
	root, home, proj, state, sock, counts string
}

func newManagedWorld(t *testing.T) *managedWorld {
	root := t.TempDir()
	w := &managedWorld{t: t, root: root, home: filepath.Join(root, "home"), proj: filepath.Join(root, "proj"),
		state: filepath.Join(root, "state"), sock: filepath.Join(root, "s.sock"), counts: filepath.Join(root, "counts")}
	for _, d := range []string{filepath.Join(w.home, ".claude"), filepath.Join(w.proj, ".claude"), w.counts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// write writes path, creating its directory.
func (w *managedWorld) write(path, content string, mode os.FileMode) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		w.t.Fatal(err)
	}
}

// script writes a hook script named name that records each run in counts/name.
func (w *managedWorld) script(name string) string {
	p := filepath.Join(w.root, name+".sh")
	w.write(p, "#!/bin/sh\n"+ancestry(filepath.Join(w.counts, name)), 0o755)
	return p
}
