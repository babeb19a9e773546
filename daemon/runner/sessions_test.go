package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/test/testutil"
)

// nodeGuard writes a hook of cc-safety-net's shape (a package's bin, `#!/usr/bin/env node`,
// that requires the module reading stdin; issue 26's corpus) on PATH as "guard". Every
// process of it notes "start PID" in log when it has loaded and "used PID" once it has
// read an event, so the test counts node processes started and used from the processes
// themselves.
func nodeGuard(t *testing.T, dir, log string) (command string, env []string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIPPING: node is not on PATH (CI installs it); the cc-safety-net shape is a Node hook")
	}
	bin := filepath.Join(dir, "pkg", "dist", "bin")
	for name, body := range map[string]string{
		"cli.js":  "#!/usr/bin/env node\n'use strict';\nrequire('./hook.js');\n",
		"hook.js": "const fs = require('fs');\nfs.appendFileSync(process.env.GUARD_LOG, 'start ' + process.pid + '\\n');\nconst input = fs.readFileSync(0, 'utf8');\nfs.appendFileSync(process.env.GUARD_LOG, 'used ' + process.pid + '\\n');\nprocess.stdout.write(input.length > 0 ? '{}' : '');\n",
	} {
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "prefix", "bin")
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bin, "cli.js"), filepath.Join(path, "guard")); err != nil {
		t.Fatal(err)
	}
	return "guard hook --claude-code", []string{"PATH=" + path + ":" + filepath.Dir(node) + ":/usr/bin:/bin", "HOME=" + dir,
		"GUARD_LOG=" + log, "CLAUDE_CODE_SESSION_ID=s-1", "CLAUDE_PROJECT_DIR=" + dir}
}

// guardCounts reads the guard's log: node processes started and used.
func guardCounts(t *testing.T, log string) (started, used int) {
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "start "):
			started++
		case strings.HasPrefix(l, "used "):
			used++
		}
	}
	return started, used
}

// startHarness starts a stand-in for the session's harness (Claude Code): a real process
// that lives until the test kills it.
func startHarness(t *testing.T) *exec.Cmd {
	t.Helper()
	h := exec.Command("sleep", "3600")
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Process.Kill(); _ = h.Wait() })
	return h
}

// TestPoolSparesEndWithSession is issue 26's cc-safety-net shape: one Node guard on
// PreToolUse, four events in one session, with real node processes counted by themselves.
// Natively that is 4 node processes, all used. Through the pool the first event runs cold
// and each later one on the spare the previous event left — and the spare left by the
// last event can serve nothing (its key holds the session's CLAUDE_CODE_SESSION_ID). With
// the spares waiting out RefillDelay (as a session's last spare does while Claude Code
// finishes), the session's end — its harness process exiting — means that spare never
// starts: 4 started, 4 used. With no delay it has started (a spare cannot know the event
// was the last) and is killed when the harness exits, not IdleTimeout later: 5 started,
// 4 used, none left. SessionEnd does the same as the harness's exit.
func TestPoolSparesEndWithSession(t *testing.T) {
	event := []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`)
	session := func(t *testing.T, delay time.Duration) (p *Pool, spec ProcSpec, log string, harness *exec.Cmd) {
		dir := t.TempDir()
		log = filepath.Join(dir, "guard.log")
		cmd, env := nodeGuard(t, dir, log)
		// With a delay: not in the background, where events this close together would
		// start their replacements at once (refillDelayLocked).
		p = newTestPool(t, PoolOptions{RefillDelay: delay, NoBackground: delay > 0})
		harness = startHarness(t)
		p.Session("s-1", harness.Process.Pid, false)
		spec = ProcSpec{Command: cmd, Dir: dir, Env: env, Stdin: event, Timeout: time.Minute, HookID: "h", HookRev: "1"}
		for i := range 4 {
			if r := p.Run(context.Background(), spec); r.ExitCode != 0 || string(r.Stdout) != "{}" || r.StartErr != nil {
				t.Fatalf("event %d: exit %d stdout %q stderr %q err %v", i+1, r.ExitCode, r.Stdout, r.Stderr, r.StartErr)
			}
		}
		if h, m := stat(p, "hits"), stat(p, "misses"); h != 3 || m != 1 {
			t.Fatalf("hits %d misses %d, want 3 prewarmed and the first event cold", h, m)
		}
		return p, spec, log, harness
	}
	settled := func(p *Pool) bool { return stat(p, "idle") == 0 && stat(p, "starting") == 0 && stat(p, "keys") == 0 }

	for _, polling := range []bool{false, true} {
		how := map[bool]string{false: " (pidfd)", true: " (polling, macOS's path)"}[polling]
		pollOwners.Store(polling)
		t.Cleanup(func() { pollOwners.Store(false) })
		t.Run("spare still waiting when the session ends"+how, func(t *testing.T) {
			p, _, log, harness := session(t, time.Hour) // a spare starts only when its next event asks for it
			if err := harness.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = harness.Wait()
			poll(t, 30*time.Second, "the session's spares ended", func() bool { return settled(p) })
			if started, used := guardCounts(t, log); started != 4 || used != 4 {
				t.Fatalf("node processes: %d started, %d used; want 4 and 4 (as natively)", started, used)
			}
			if s := stat(p, "spawned"); s != 3 {
				t.Fatalf("spawned %d, want 3 (one per prewarmed event, none after the last)", s)
			}
		})

		t.Run("spare already started when the session ends"+how, func(t *testing.T) {
			p, _, log, harness := session(t, -1)
			pids := waitIdle(t, p, 1)
			poll(t, 30*time.Second, "the spare loaded", func() bool { s, _ := guardCounts(t, log); return s == 5 })
			if err := harness.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = harness.Wait()
			poll(t, 30*time.Second, "the session's spare killed", func() bool { return settled(p) && testutil.ProcessGone(pids[0]) })
			if started, used := guardCounts(t, log); started != 5 || used != 4 {
				t.Fatalf("node processes: %d started, %d used; want 5 and 4", started, used)
			}
			if d := stat(p, "discarded"); d != 1 {
				t.Fatalf("discarded %d, want the one spare", d)
			}
		})

	}
	t.Run("SessionEnd", func(t *testing.T) {
		p, spec, log, _ := session(t, time.Hour)
		p.Session("s-1", 0, true)
		poll(t, 30*time.Second, "the session's spares ended", func() bool { return settled(p) })
		// A hook of the ended session (a SessionEnd hook runs after it) still runs, cold,
		// and leaves no spare.
		if r := p.Run(context.Background(), spec); r.ExitCode != 0 {
			t.Fatalf("after SessionEnd: exit %d stderr %q", r.ExitCode, r.Stderr)
		}
		if started, used := guardCounts(t, log); started != 5 || used != 5 || stat(p, "spawned") != 3 || stat(p, "starting")+stat(p, "idle") != 0 {
			t.Fatalf("after SessionEnd: %d started, %d used, spawned %d, starting %d, idle %d", started, used, stat(p, "spawned"), stat(p, "starting"), stat(p, "idle"))
		}
	})
}

// TestHarnessOf: the process a session's spares are tied to is the harness that started
// the forwarder — hookc's parent, past a shell — or the caller itself when it speaks the
// socket protocol directly. Real processes: a python3 "harness" running a shell running a
// program named hookc.
func TestHarnessOf(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIPPING: python3 is not on PATH")
	}
	dir := t.TempDir()
	hookc := filepath.Join(dir, "hookc")
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hookc, b, 0o755); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "pid")
	// The harness runs `sh -c 'hookc 3600 & echo $! > pid; wait'`: hookc's parent is the
	// shell, the shell's the harness.
	h := exec.Command(py, "-c", "import subprocess, sys; subprocess.run(['/bin/sh', '-c', sys.argv[1] + ' 3600 & echo $! > ' + sys.argv[2] + '; wait'])", hookc, pidFile)
	h.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := h.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-h.Process.Pid, syscall.SIGKILL); _ = h.Wait() })
	var caller int
	poll(t, 30*time.Second, "hookc started", func() bool {
		b, _ := os.ReadFile(pidFile)
		s := strings.TrimSpace(string(b))
		if s == "" {
			return false
		}
		_, err := strconv.Atoi(s)
		caller, _ = strconv.Atoi(s)
		return err == nil
	})
	if o, ok := harnessOf(caller); !ok || o.pid != h.Process.Pid {
		t.Fatalf("harnessOf(hookc %d) = %+v %v, want the python3 harness %d", caller, o, ok, h.Process.Pid)
	}
	if o, ok := harnessOf(h.Process.Pid); !ok || o.pid != h.Process.Pid {
		t.Fatalf("harnessOf(harness) = %+v %v, want itself", o, ok)
	}
}
