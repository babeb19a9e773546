package test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/reaper"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/testutil"
)

// Issue 13, defect 8: grandchildren of a hook that exits normally kept running (55 of
// 55), and hooks kept running after a daemon SIGKILL (no parent-death signal; the one
// tried reached only the `sh -c` child).

// marked lists the live (not zombie) processes whose environment carries
// HOOKD_MARK=mark — what a hook and everything it started inherit.
func marked(t *testing.T, mark string) []int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains("\x00"+string(env), "\x00HOOKD_MARK="+mark+"\x00") {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i > 0 && len(s) > i+2 && s[i+2] == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}

func newMark(t *testing.T) string {
	b := make([]byte, 8)
	rand.Read(b)
	m := hex.EncodeToString(b)
	t.Cleanup(func() { // never leave a test's sleeps behind, whatever happened
		for _, pid := range marked(t, m) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return m
}

// backgrounder is a hook that starts five `sleep 300 &` and exits at once.
func backgrounder(mark string) string {
	return "export HOOKD_MARK=" + mark + "; for i in 1 2 3 4 5; do sleep 300 & done; exit 0"
}

func TestFaultProcessGroupKilledWhenHookExits(t *testing.T) {
	e := NewEnv(t)
	mark := newMark(t)
	e.WriteSettings("project", preToolUse(cmdHook(backgrounder(mark))))
	e.Start()
	start := time.Now()
	if r := e.Hookc(bashPayload(e, "ls")); r.Code != 0 {
		t.Fatalf("hookc: %d %s", r.Code, r.Stderr)
	}
	took := time.Since(start)
	left := len(marked(t, mark))
	Eventually(t, 10*time.Second, "the hook's background sleeps to be killed", func() bool { return len(marked(t, mark)) == 0 })
	t.Logf("faults_process: hook exits leaving 5 `sleep 300 &`: %d alive right after the answer (answered in %v), 0 once the kill landed", left, took.Round(time.Millisecond))
}

// A hook that backgrounds work on purpose keeps it with kill_process_group false.
func TestFaultProcessGroupKeptWhenConfigured(t *testing.T) {
	e := NewEnv(t)
	killed, kept := newMark(t), newMark(t)
	keepCmd := backgrounder(kept)
	writeHookdConfig(t, e, map[string]any{"hooks": []any{map[string]any{"match": keepCmd, "kill_process_group": false}}})
	settings, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{
		map[string]any{"matcher": "Bash", "hooks": []any{cmdHook(backgrounder(killed))}},
		map[string]any{"matcher": "Read", "hooks": []any{cmdHook(keepCmd)}},
	}}})
	e.WriteSettings("project", string(settings))
	e.Start()
	if r := e.Hookc(bashPayload(e, "ls")); r.Code != 0 {
		t.Fatalf("hookc: %d %s", r.Code, r.Stderr)
	}
	r := e.Hookc(e.Payload("PreToolUse", map[string]any{"tool_name": "Read", "tool_input": map[string]any{"file_path": "/etc/hostname"}, "tool_use_id": "toolu_2"}))
	if r.Code != 0 {
		t.Fatalf("hookc (Read): %d %s", r.Code, r.Stderr)
	}
	Eventually(t, 10*time.Second, "the other hook's background sleeps to be killed", func() bool { return len(marked(t, killed)) == 0 })
	if n := len(marked(t, kept)); n != 5 {
		t.Fatalf("kill_process_group false: %d of 5 background sleeps alive after the answer, want 5", n)
	}
	// hookd reaps only its own children: it is no subreaper, so the work a hook leaves
	// behind is not adopted by (and never reaped or signalled as a child of) the daemon.
	for _, pid := range marked(t, kept) {
		if parentOf(pid) == e.daemon.Process.Pid {
			t.Fatalf("the daemon adopted the hook's orphaned background sleep %d", pid)
		}
	}
	t.Logf("faults_process: with kill_process_group false for one hook: its 5 of 5 background sleeps alive after the answer, none adopted by the daemon; the other hook's 0")
}

func TestFaultProcessHooksDieWithSIGKILLedDaemon(t *testing.T) {
	e := NewEnv(t)
	mark := newMark(t)
	// A hook that starts five background sleeps, then hangs in a sixth.
	e.WriteSettings("project", preToolUse(cmdHook("export HOOKD_MARK="+mark+"; for i in 1 2 3 4 5; do sleep 300 & done; sleep 300")))
	e.Start()
	pid := e.daemon.Process.Pid
	reaper := reaperOf(t, pid)

	c, err := protocol.Dial(context.Background(), e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go c.Do(context.Background(), &protocol.Request{Event: json.RawMessage(bashPayload(e, "ls")), ProjectDir: e.Project, Env: e.BaseEnv()}, nil)
	Eventually(t, 20*time.Second, "the hook's 6 sleeps (sh may exec the last)", func() bool { return len(marked(t, mark)) >= 6 })
	running := len(marked(t, mark))

	if err := e.daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-e.exited
	killedAt := time.Now()
	Eventually(t, 20*time.Second, "every process of the hook to die with the daemon", func() bool { return len(marked(t, mark)) == 0 })
	gone := time.Since(killedAt)
	if reaper > 0 {
		Eventually(t, 20*time.Second, "the group reaper to exit", func() bool {
			_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(reaper)))
			return err != nil
		})
	}
	t.Logf("faults_process: daemon SIGKILLed with a hook running (%d processes in its group): 0 left %v later; reaper pid %d exited", running, gone.Round(time.Millisecond), reaper)
}

// reaperOf finds the daemon's group reaper among its children (0 when there is none).
func reaperOf(t *testing.T, daemon int) int {
	t.Helper()
	tasks, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(daemon), "task"))
	for _, task := range tasks {
		b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(daemon), "task", task.Name(), "children"))
		for _, f := range strings.Fields(string(b)) {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", f, "cmdline"))
			if strings.Contains(string(cmdline), reaper.Arg) {
				n, _ := strconv.Atoi(f)
				return n
			}
		}
	}
	t.Errorf("daemon %d has no group reaper child", daemon)
	return 0
}

// The reaper SIGKILLed together with the daemon: nothing runs to kill the hooks, but the
// reaper's record in the state directory lets the next `hookd serve` kill what is left.
func TestFaultProcessHooksReapedByTheNextDaemon(t *testing.T) {
	e := NewEnv(t)
	mark := newMark(t)
	e.WriteSettings("project", preToolUse(cmdHook("export HOOKD_MARK="+mark+"; for i in 1 2 3 4 5; do sleep 300 & done; sleep 300")))
	e.Start()
	reaper := reaperOf(t, e.daemon.Process.Pid)
	c, err := protocol.Dial(context.Background(), e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go c.Do(context.Background(), &protocol.Request{Event: json.RawMessage(bashPayload(e, "ls")), ProjectDir: e.Project, Env: e.BaseEnv()}, nil)
	Eventually(t, 20*time.Second, "the hook's 6 sleeps", func() bool { return len(marked(t, mark)) >= 6 })
	// The reaper keeps up asynchronously (it may still be starting): wait until its
	// record lists the hook's group, as it will a few milliseconds after any hook starts.
	Eventually(t, 20*time.Second, "the reaper's record to list the hook's group", func() bool { return recorded(e, "+") })
	killDaemonAndReaper(t, e, reaper)
	// Give a (wrongly) surviving reaper time to act: the background sleeps must still run.
	time.Sleep(200 * time.Millisecond)
	orphans := len(marked(t, mark))
	if orphans < 5 {
		t.Fatalf("%d of the hook's processes left with reaper and daemon gone; the test needs the 5 background sleeps alive", orphans)
	}
	e.Start()
	Eventually(t, 20*time.Second, "the next daemon to kill the hook's orphaned group", func() bool { return len(marked(t, mark)) == 0 })
	t.Logf("faults_process: daemon and reaper both SIGKILLed: %d of the hook's processes survived them; the next hookd serve killed all of them", orphans)
}

// Issue 28, item 1 (b): daemon and reaper both SIGKILLed; the hook's process then ends
// and is reaped (by the service manager or init — this test process stands in as the
// child subreaper), and a pid-reusing neighbour starts a process group with its number.
// The old replay killed every recorded group with a member "started no earlier than the
// leader" — a recycled pid always did — and so killed the neighbour. Now a group is
// killed only while its recorded leader runs with the recorded start time in the same
// boot; otherwise nothing is done.
func TestFaultProcessReplaySparesAPidReusingNeighbour(t *testing.T) {
	if ok, why := testutil.CanReusePids(); !ok {
		t.Skip(why)
	}
	e := NewEnv(t)
	if err := setChildSubreaper(true); errors.Is(err, errors.ErrUnsupported) {
		t.Skip("no child subreaper on this OS: the orphaned hook cannot be reaped by the test")
	} else if err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(e.Root, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(e.Root, "pid")
	e.WriteSettings("project", preToolUse(cmdHook("echo $$ > "+pidFile+"; read x < "+gate)))
	e.Start()
	reaper := reaperOf(t, e.daemon.Process.Pid)
	c, err := protocol.Dial(context.Background(), e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go c.Do(context.Background(), &protocol.Request{Event: json.RawMessage(bashPayload(e, "ls")), ProjectDir: e.Project, Env: e.BaseEnv()}, nil)
	var pid int
	Eventually(t, 20*time.Second, "the hook to start", func() bool {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	Eventually(t, 20*time.Second, "the reaper's record to list the hook's group", func() bool { return recorded(e, "+"+strconv.Itoa(pid)) })
	killDaemonAndReaper(t, e, reaper)
	// The hook, orphaned (this process is its subreaper now), ends; reap it as init would.
	w, err := os.OpenFile(gate, os.O_WRONLY|syscall.O_NONBLOCK, 0) // ENXIO if the hook already died
	if err == nil {
		w.Close()
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatalf("reaping the orphaned hook %d: %v", pid, err)
	}
	setChildSubreaper(false)
	neighbour := testutil.StartNeighbour(t, pid) // leads a new group numbered pid
	e.Start()
	Eventually(t, 20*time.Second, "the next daemon to replay the record", func() bool { return !recorded(e, "+"+strconv.Itoa(pid)) })
	if !neighbour.Survived(t) {
		t.Fatalf("the next daemon killed a neighbour that reused the recorded hook's pid %d", pid)
	}
	t.Logf("faults_process: daemon and reaper SIGKILLed, the hook (pid %d) ended and its pid went to a neighbour's new group: the next hookd serve left it alone", pid)
}

// recorded reports whether a group reaper's record in e's state directory holds s.
func recorded(e *Env, s string) bool {
	recs, _ := filepath.Glob(filepath.Join(e.State, "hook-groups.*"))
	for _, r := range recs {
		if b, _ := os.ReadFile(r); strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

// killDaemonAndReaper SIGKILLs the reaper, then the daemon: the double crash.
func killDaemonAndReaper(t *testing.T, e *Env, reaper int) {
	t.Helper()
	if reaper <= 0 {
		t.Fatal("no reaper")
	}
	syscall.Kill(reaper, syscall.SIGKILL)
	Eventually(t, 10*time.Second, "the reaper to die", func() bool { return testutil.ProcessGone(reaper) })
	e.daemon.Process.Signal(syscall.SIGKILL)
	<-e.exited
}
