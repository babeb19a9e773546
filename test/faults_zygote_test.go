package test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/testutil"
)

// Issue 28: the runtime's promises under attack — the Python zygote (items 1a, 2, 3, 4,
// 8). Each test reproduces the finding end to end with real hookd, hookc, python3
// and the zygote, and fails on the main before the fix (docs/reliability.md).

// pythonGuard is a hook that denies `rm -rf` by exit 2 (stderr is the reason).
const pythonGuard = `import json, sys
d = json.load(sys.stdin)
if "rm -rf" in d.get("tool_input", {}).get("command", ""):
    print("rm -rf is not allowed", file=sys.stderr)
    sys.exit(2)
`

// needZygote skips, saying why, where hookd forks no Python hooks (no python3; macOS).
func needZygote(t *testing.T) {
	t.Helper()
	needPython(t)
	if !osproc.ForkWarmInterpreters {
		t.Skip("SKIP (loud): hookd forks no warm interpreters on this system (docs/zygote.md, macOS)")
	}
}

// warmZygote sends SessionStart (which starts the Python hooks' zygote and pre-imports
// their scripts' imports) and waits for the zygote.
func warmZygote(t *testing.T, e *Env) {
	t.Helper()
	if _, err := e.Raw(&protocol.Request{EventText: e.Payload("SessionStart", map[string]any{"source": "startup"}), ProjectDir: e.Project, Env: e.BaseEnv()}); err != nil {
		t.Fatal(err)
	}
	waitZygote(t, e)
}

// zygotePIDs lists the daemon's Python zygotes (its children running `python -c`).
func zygotePIDs(t *testing.T, e *Env) []int {
	var out []int
	for _, k := range children(t, e.daemon.Process.Pid) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(k.PID) + "/cmdline")
		if f := strings.Split(string(b), "\x00"); len(f) > 1 && strings.Contains(f[0], "python") && slicesContains(f, "-c") && k.State != "Z" {
			out = append(out, k.PID)
		}
	}
	return out
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func deniedBy(r Result, reason string) bool {
	return r.Code == 2 && strings.Contains(r.Stderr, reason) || strings.Contains(r.Stdout, `"deny"`) && strings.Contains(r.Stdout, reason)
}

// Item 1 (a): a forked hook is reaped by its zygote; a pid-reusing neighbour takes its
// pid (and so its group's number) before hookd acts on the exit. The old hookd then
// killed `-pid`: the neighbour. The daemon is stopped (SIGSTOP) between the zygote's
// report and hookd reading it, which makes the race's window as wide as the test needs.
func TestFaultZygoteChildPidReuseSparesTheNeighbour(t *testing.T) {
	needZygote(t)
	if ok, why := testutil.CanReusePids(); !ok {
		t.Skip(why)
	}
	e := NewEnv(t)
	gate := filepath.Join(e.Root, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(e.Root, "pid")
	script := e.Script("hook.py", fmt.Sprintf("import os, sys\nsys.stdin.read()\nopen(%q, 'w').write(str(os.getpid()))\nopen(%q).read()\n", pidFile, gate))
	e.WriteSettings("project", preToolUse(cmdHook("python3 "+script)))
	e.Start()
	warmZygote(t, e)
	zpids := zygotePIDs(t, e)
	res := make(chan Result, 1)
	go func() { res <- e.Hookc(bashPayload(e, "ls")) }()
	var pid int
	Eventually(t, 30*time.Second, "the forked hook to start", func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(string(b))
		return pid > 0
	})
	if ppid := parentOf(pid); !slicesContainsInt(zpids, ppid) {
		t.Fatalf("the hook (pid %d, parent %d) was not forked from the zygote %v", pid, ppid, zpids)
	}
	daemon := e.daemon.Process.Pid
	syscall.Kill(daemon, syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			syscall.Kill(daemon, syscall.SIGCONT)
		}
	}()
	w, err := os.OpenFile(gate, os.O_WRONLY, 0) // the hook's read returns: it exits
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	Eventually(t, 20*time.Second, "the zygote to reap the hook", func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return err != nil
	})
	// The zygote forks its next spare right after the reap: let it, so that the spare does
	// not take the pid the neighbour is about to be given.
	Eventually(t, 20*time.Second, "the zygote's next spare", func() bool {
		for _, z := range zpids {
			if kids, _ := testutil.Children(z); len(kids) > 0 {
				return true
			}
		}
		return false
	})
	neighbour := testutil.StartNeighbour(t, pid) // leads a new group numbered pid
	syscall.Kill(daemon, syscall.SIGCONT)
	stopped = false
	r := <-res
	if r.Code != 0 {
		t.Fatalf("hookc: %d %s", r.Code, r.Stderr)
	}
	Eventually(t, 10*time.Second, "the zygote's report to be processed", func() bool { return runnerStats(e, "zygote")["forked"] >= 1 })
	if !neighbour.Survived(t) {
		t.Fatalf("hookd killed the process group of a neighbour that reused the forked hook's pid %d", pid)
	}
	t.Logf("faults_zygote: forked hook pid %d reaped by its zygote, reused by a neighbour's new group before hookd read the exit: the neighbour survived", pid)
}

func parentOf(pid int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i > 0 {
		if f := strings.Fields(s[i+1:]); len(f) > 1 {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

func slicesContainsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Item 2: a Python hook whose script is a FIFO wedged the zygote it shared with every
// other Python hook (the pre-import and the event opened it for reading and waited for a
// writer), each hook's timeout ignored, and the wedged zygote outlived the daemon. Now it
// is refused at once, the guard beside it denies, and no zygote outlives a SIGKILLed
// daemon.
func TestFaultZygoteFIFOScript(t *testing.T) {
	needZygote(t)
	e := NewEnv(t)
	fifo := filepath.Join(e.Project, ".claude", "fifo.py")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	guard := e.Script("guard.py", pythonGuard)
	hook := func(c string) map[string]any { h := cmdHook(c); h["timeout"] = 10; return h }
	e.WriteSettings("project", preToolUse(hook("python3 "+fifo), hook("python3 "+guard)))
	e.Start()
	warmZygote(t, e)
	start := time.Now()
	r := e.Hookc(bashPayload(e, "rm -rf build"), "--timeout", "30s") // the old zygote never answered
	took := time.Since(start)
	if !deniedBy(r, "rm -rf is not allowed") {
		t.Fatalf("the guard beside a FIFO script did not deny: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if took > 8*time.Second {
		t.Fatalf("answered after %v: the FIFO script held the event (hook timeout 10 s)", took)
	}
	res, _ := e.Event(bashPayload(e, "ls"))
	fifoErr := ""
	for _, h := range res.Hooks {
		if strings.Contains(h.Hook.Command, "fifo.py") {
			fifoErr = h.Error
		}
	}
	if !strings.Contains(fifoErr, "FIFO") {
		t.Fatalf("the FIFO script's hook: %q, want an error naming the FIFO", fifoErr)
	}
	zs := zygotePIDs(t, e)
	if len(zs) == 0 {
		t.Fatal("no zygote")
	}
	e.daemon.Process.Signal(syscall.SIGKILL)
	<-e.exited
	killedAt := time.Now()
	Eventually(t, 20*time.Second, "the zygotes to die with the daemon", func() bool {
		for _, z := range zs {
			if !testutil.ProcessGone(z) {
				return false
			}
		}
		return true
	})
	t.Logf("faults_zygote: FIFO as a Python hook's script: refused (%s); the guard beside it denied in %v; %d zygote(s) gone %v after the daemon's SIGKILL",
		fifoErr, took.Round(time.Millisecond), len(zs), time.Since(killedAt).Round(time.Millisecond))
}

// Item 3: the zygote dies while a forked guard runs. The guard that would deny used to come
// back as an error with no decision (and Claude Code ran the tool). Now it is run again,
// cold, in its time left, and denies.
func TestFaultZygoteDeathGuardStillDenies(t *testing.T) {
	needZygote(t)
	e := NewEnv(t)
	started := filepath.Join(e.Root, "started")
	guard := e.Script("guard.py", fmt.Sprintf("import sys, time\nd = sys.stdin.read()\nopen(%q, 'a').write('x')\ntime.sleep(1.5)\nif 'rm -rf' in d:\n    print('rm -rf is not allowed', file=sys.stderr)\n    sys.exit(2)\n", started))
	e.WriteSettings("project", preToolUse(cmdHook("python3 "+guard)))
	e.Start()
	warmZygote(t, e)
	zs := zygotePIDs(t, e)
	res := make(chan Result, 1)
	go func() { res <- e.Hookc(bashPayload(e, "rm -rf /")) }()
	Eventually(t, 30*time.Second, "the forked guard to start", func() bool {
		b, _ := os.ReadFile(started)
		return len(b) >= 1
	})
	for _, z := range zs {
		syscall.Kill(z, syscall.SIGKILL)
	}
	r := <-res
	if !deniedBy(r, "rm -rf is not allowed") {
		t.Fatalf("the guard's deny was lost with its zygote: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	z := runnerStats(e, "zygote")
	if z["rerun_cold"] != 1 {
		t.Fatalf("zygote counters: %v", z)
	}
	t.Logf("faults_zygote: zygote SIGKILLed while a forked guard ran: the guard was run again cold and denied (rerun_cold %v, lost %v)", z["rerun_cold"], z["lost"])
}

// Item 4: "no line of any hook runs before its event". A hook with
// `import unittest.__main__` (here in a branch that never runs) made the zygote's
// pre-import run unittest's test discovery at SessionStart, importing the project's
// test_*.py inside the zygote — this one writes a marker and blinds every forked hook by
// replacing json.load, so a separate guard no longer denied `rm -rf`.
func TestFaultZygotePreImportRunsNoProjectCode(t *testing.T) {
	needZygote(t)
	e := NewEnv(t)
	marker := filepath.Join(e.Root, "marker")
	poison := fmt.Sprintf("open(%q, 'a').write('imported\\n')\nimport json\njson.load = lambda *a, **k: {}\n", marker)
	if err := os.WriteFile(filepath.Join(e.Project, "test_poison.py"), []byte(poison), 0o644); err != nil {
		t.Fatal(err)
	}
	other := e.Script("other.py", "import sys\nif len(sys.argv) > 5:\n    import unittest.__main__\n")
	guard := e.Script("guard.py", pythonGuard)
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{cmdHook("python3 " + guard)}}},
		"Stop":       []any{map[string]any{"hooks": []any{cmdHook("python3 " + other)}}},
	}})
	e.WriteSettings("project", string(b))
	e.Start()
	warmZygote(t, e)
	forked0 := runnerStats(e, "zygote")["forked"]
	r := e.Hookc(bashPayload(e, "rm -rf x"))
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the zygote's pre-import ran the project's test_poison.py before any event")
	}
	if !deniedBy(r, "rm -rf is not allowed") {
		t.Fatalf("the forked guard did not deny: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if runnerStats(e, "zygote")["forked"] <= forked0 {
		t.Fatal("the guard was not forked from the zygote (the test must exercise the zygote)")
	}
	t.Logf("faults_zygote: a hook with `import unittest.__main__` and a poisoning test_*.py in the project: nothing of the project ran at SessionStart; the forked guard denied")
}

// Item 8: a forked hook's sys.exit(2**32 + 2) exited 255 where a cold run exits 2 (block).
func TestFaultZygoteExitCodeOfAHugeInt(t *testing.T) {
	needZygote(t)
	e := NewEnv(t)
	hook := e.Script("block.py", "import sys\nsys.stdin.read()\nprint('blocked by a huge exit code', file=sys.stderr)\nsys.exit(2**32 + 2)\n")
	e.WriteSettings("project", preToolUse(cmdHook("python3 "+hook)))
	e.Start()
	warmZygote(t, e)
	cold := exec.Command("python3", hook)
	cold.Stdin = strings.NewReader("{}")
	err := cold.Run()
	coldCode := 0
	if ee, ok := err.(*exec.ExitError); ok {
		coldCode = ee.ExitCode()
	}
	r := e.Hookc(bashPayload(e, "ls"))
	if coldCode != 2 || !deniedBy(r, "blocked by a huge exit code") {
		t.Fatalf("cold exit %d; forked through hookd: exit %d stdout %q stderr %q", coldCode, r.Code, r.Stdout, r.Stderr)
	}
	if runnerStats(e, "zygote")["forked"] < 1 {
		t.Fatal("the hook was not forked from the zygote")
	}
	t.Logf("faults_zygote: sys.exit(2**32 + 2): cold exit %d, forked hook blocked as exit 2", coldCode)
}
