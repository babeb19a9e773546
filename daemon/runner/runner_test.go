package runner

import (
	"bytes"
	"context"
	"github.com/hookd/hookd/test/testutil"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestExecRunnerShellForm(t *testing.T) {
	r := ExecRunner{}
	res := r.Run(context.Background(), ProcSpec{
		Command: `read -r line; echo "got:$line"; echo err >&2; exit 3`,
		Stdin:   []byte("payload\n"), Env: []string{"PATH=/usr/bin:/bin"},
	})
	if res.StartErr != nil || res.ExitCode != 3 {
		t.Fatalf("exit = %d, start err %v", res.ExitCode, res.StartErr)
	}
	if got := string(res.Stdout); got != "got:payload\n" {
		t.Errorf("stdout = %q", got)
	}
	if got := string(res.Stderr); got != "err\n" {
		t.Errorf("stderr = %q", got)
	}
}

func TestExecRunnerExecFormUsesCallerPath(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "myhook")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"args:$*\"; cat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := ExecRunner{}.Run(context.Background(), ProcSpec{
		Command: "myhook", Args: []string{"a b", "$HOME"},
		Env: []string{"PATH=" + dir + ":/usr/bin:/bin"}, Stdin: []byte("in"),
	})
	if res.StartErr != nil {
		t.Fatal(res.StartErr)
	}
	if got := string(res.Stdout); got != "args:a b $HOME\nin" {
		t.Errorf("stdout = %q (exec form must not expand or split)", got)
	}
}

func TestExecRunnerMissingCommand(t *testing.T) {
	// Exec form: cannot start at all.
	res := ExecRunner{}.Run(context.Background(), ProcSpec{Command: "/nonexistent/hook", Args: []string{}})
	if res.StartErr == nil {
		t.Fatal("missing exec-form command started")
	}
	// Shell form: the shell reports 127.
	res = ExecRunner{}.Run(context.Background(), ProcSpec{Command: "/nonexistent/hook.sh", Env: []string{"PATH=/usr/bin:/bin"}})
	if res.ExitCode != 127 {
		t.Fatalf("exit = %d, want 127", res.ExitCode)
	}
}

func TestExecRunnerTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	start := time.Now()
	res := ExecRunner{WaitDelay: 500 * time.Millisecond}.Run(context.Background(), ProcSpec{
		// A grandchild that holds stdout open and would outlive the shell.
		Command: `sleep 30 & echo $! > ` + pidFile + `; wait`,
		Timeout: 300 * time.Millisecond, Env: []string{"PATH=/usr/bin:/bin"},
	})
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	// The bound is the grandchild's own 30 s, not the machine's speed: Run must not wait
	// for a grandchild that holds stdout.
	if d := time.Since(start); d >= 30*time.Second {
		t.Fatalf("Run took %v after a 300ms timeout: it waited for the grandchild", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if testutil.ProcessGone(pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive after timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A cancelled hook (its caller left) is killed with its whole group: the background
// work it started too.
func TestExecRunnerCancel(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	var bg int
	go func() { // cancel once the background sleep runs (or after 30 s: then the test fails)
		defer cancel()
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			b, _ := os.ReadFile(pidFile)
			if bg, _ = strconv.Atoi(strings.TrimSpace(string(b))); bg > 0 {
				return
			}
		}
	}()
	res := ExecRunner{WaitDelay: 500 * time.Millisecond}.Run(ctx, ProcSpec{
		Command: `sleep 300 & echo $! > ` + pidFile + `.tmp; mv ` + pidFile + `.tmp ` + pidFile + `; wait`,
		Env:     []string{"PATH=/usr/bin:/bin"},
	})
	if !res.Cancelled || res.TimedOut || bg <= 0 {
		t.Fatalf("want cancelled with a background sleep started: %+v (sleep pid %d)", res, bg)
	}
	testutil.WaitFor(t, 30*time.Second, "the cancelled hook's background sleep to be killed", func() bool { return testutil.ProcessGone(bg) })
}

func TestExecRunnerOutputCap(t *testing.T) {
	res := ExecRunner{}.Run(context.Background(), ProcSpec{
		Command:   `head -c 3000000 /dev/zero`,
		OutputCap: 1 << 20, Env: []string{"PATH=/usr/bin:/bin"},
	})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	if len(res.Stdout) != 1<<20 || !res.StdoutTruncated {
		t.Fatalf("stdout len %d truncated %v", len(res.Stdout), res.StdoutTruncated)
	}
	if !bytes.Equal(res.Stdout[:10], make([]byte, 10)) {
		t.Fatal("kept the wrong bytes")
	}
}

// TestHookRunsInItsOwnSession: Claude Code starts every hook in a session of its own
// (spec §6: own session, no controlling terminal); so does hookd, cold and prewarmed.
// Besides the terminal, the session decides how the kernel's autogroup scheduler shares
// CPU: hooks left in the daemon's session shared one slice (docs/performance.md).
func TestHookRunsInItsOwnSession(t *testing.T) {
	dir := t.TempDir()
	// /proc/PID/stat: pid (comm) state ppid pgrp session tty_nr ...
	script := "read -r pid comm state ppid pgrp sid tty rest < /proc/$$/stat\ncat >/dev/null\necho \"$pid $pgrp $sid $tty\"\n"
	if err := os.WriteFile(filepath.Join(dir, "hook.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := ProcSpec{
		Command: "sh", Args: []string{"hook.sh"},
		Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 20 * time.Second, Prewarm: PrewarmOn, HookID: "h", HookRev: "r",
	}
	check := func(how string, r ProcResult) {
		t.Helper()
		f := strings.Fields(string(r.Stdout))
		if r.ExitCode != 0 || len(f) != 4 {
			t.Fatalf("%s: exit %d stdout %q stderr %q", how, r.ExitCode, r.Stdout, r.Stderr)
		}
		if f[0] != f[1] || f[0] != f[2] {
			t.Errorf("%s: pid %s, process group %s, session %s: want the hook to lead its own session", how, f[0], f[1], f[2])
		}
		if f[2] == strconv.Itoa(testSession(t)) {
			t.Errorf("%s: the hook runs in the test's (the daemon's) session %s", how, f[2])
		}
		if f[3] != "0" {
			t.Errorf("%s: controlling terminal %s, want none", how, f[3])
		}
	}
	check("cold", ExecRunner{}.Run(context.Background(), spec))
	p := newTestPool(t, PoolOptions{NoZygote: true})
	check("first event", p.Run(context.Background(), spec))
	waitIdle(t, p, 1)
	check("prewarmed", p.Run(context.Background(), spec))
	if stat(p, "hits") != 1 {
		t.Fatalf("hits = %d, want 1 (misses %d, fallbacks %d, died %d)", stat(p, "hits"), stat(p, "misses"), stat(p, "fallbacks"), stat(p, "died_waiting"))
	}
}

// testSession is the session id of the test process.
func testSession(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // state ppid pgrp session
	n, err := strconv.Atoi(f[3])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
