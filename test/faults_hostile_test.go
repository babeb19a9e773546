package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 13 asks the fault suite to script "the red team's held-back cases" too; that list
// never reached us. These are the next things an attacker or a broken hook would try that
// the other fault tests do not: a hook that floods stdout, one that closes its output
// early, an event nested 100,000 deep, and the socket's directory opened up mid-run. In
// each, a guard's "no" must survive and nothing may read as an allow by accident.

func decisionOf(t *testing.T, r Result) string {
	t.Helper()
	if r.Code == 2 {
		return "block(exit 2)"
	}
	h, _ := r.JSON(t)["hookSpecificOutput"].(map[string]any)
	if h == nil {
		return "none"
	}
	s, _ := h["permissionDecision"].(string)
	return s
}

// A hook writes 1 GiB to stdout, then denies by exit 2: its output is capped (1 MiB
// kept, the rest drained), the daemon's memory stays flat, and the deny holds.
func TestFaultHostileHookFloodsStdout(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", preToolUse(cmdHook(`head -c 1073741824 /dev/zero; echo 'flooded, still no' >&2; exit 2`)))
	e.Start()
	pid := e.daemon.Process.Pid
	rss0 := procStatus(t, pid, "VmRSS")
	start := time.Now()
	r := e.Hookc(bashPayload(e, "rm -rf /"))
	took := time.Since(start)
	if d := decisionOf(t, r); d != "deny" && d != "block(exit 2)" || !strings.Contains(r.Stdout+r.Stderr, "flooded, still no") {
		t.Fatalf("1 GiB on stdout then exit 2: %s (exit %d), stdout %.300q stderr %.200q", d, r.Code, r.Stdout, r.Stderr)
	}
	rss := procStatus(t, pid, "VmRSS")
	if rss > rss0+64*1024 { // kB: 1 GiB must not have been held
		t.Fatalf("daemon RSS %d kB → %d kB after a 1 GiB stdout flood", rss0, rss)
	}
	t.Logf("faults_hostile: hook writes 1 GiB to stdout then exits 2: blocked in %v; daemon RSS %d kB before, %d kB after", took.Round(time.Millisecond), rss0, rss)
}

// A hook that closes stdout (and stderr) at once and decides later by its exit code.
func TestFaultHostileHookClosesOutputEarly(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", preToolUse(cmdHook(`exec >&-; sleep 0.3; echo 'closed stdout, still no' >&2; exit 2`)))
	e.Start()
	if r := e.Hookc(bashPayload(e, "rm -rf /")); decisionOf(t, r) != "deny" && r.Code != 2 || !strings.Contains(r.Stdout+r.Stderr, "closed stdout, still no") {
		t.Fatalf("stdout closed early, exit 2: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	e.WriteSettings("project", preToolUse(cmdHook(`exec >&- 2>&-; sleep 0.3; exit 2`)))
	Eventually(t, 20*time.Second, "the exit-2-with-everything-closed hook to block", func() bool {
		r := e.Hookc(bashPayload(e, "rm -rf /"))
		return decisionOf(t, r) == "deny" || r.Code == 2
	})
	t.Logf("faults_hostile: hook closes stdout (and stderr) early, exits 2 later: blocked both times")
}

// An event whose tool_input nests 100,000 arrays deep (Go's decoder stops at 10,000):
// an error the forwarder turns into its fail-closed answer, and the daemon answers the
// next event as usual.
func TestFaultHostileDeepJSONEvent(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", preToolUse(allowHook("")))
	e.Start()
	pid := e.daemon.Process.Pid
	const depth = 100000
	deep := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	payload := strings.Replace(bashPayload(e, "ls"), `"description":"d"`, `"description":"d","x":`+deep, 1)
	if !strings.Contains(payload, "[[[[") {
		t.Fatal("payload not built")
	}
	start := time.Now()
	r := e.Hookc(payload, "--fallback=false")
	took := time.Since(start)
	if d := decisionOf(t, r); d == "allow" || d == "none" && r.Code == 0 {
		t.Fatalf("a 100,000-deep event was answered %q (exit %d, stderr %q), want the fail-closed answer", d, r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "depth") {
		t.Errorf("the error does not say the event is nested too deep: %q", r.Stderr)
	}
	if d := decisionOf(t, e.Hookc(bashPayload(e, "ls"))); d != "allow" {
		t.Fatalf("the next event after a deep one: %q", d)
	}
	t.Logf("faults_hostile: event nested %d deep: exit %d in %v (%.120s); next event answered; daemon threads %d", depth, r.Code, took.Round(time.Millisecond), strings.TrimSpace(r.Stderr), threadsOf(t, pid))
}

// The socket's directory is made world-writable while hookd runs (someone could now
// replace the socket): hookc stops trusting it at once, sends nothing, and takes its
// fail-safe path; made private again, it is used again.
func TestFaultHostileSocketDirChmodDuringRun(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"permissions":{"deny":["Bash(rm *)"]},`+strings.TrimPrefix(preToolUse(allowHook("")), "{"))
	e.Start()
	dir := filepath.Dir(e.Socket)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, fi.Mode().Perm())
	r := e.Hookc(bashPayload(e, "ls"), "--fallback=false")
	if r.Code != 2 || !strings.Contains(r.Stderr, "nothing was sent") {
		t.Fatalf("socket dir 0777, no fallback: exit %d stderr %q", r.Code, r.Stderr)
	}
	// With the fallback (the default), hookd runs in-process: the deny rule still holds.
	if d := decisionOf(t, e.Hookc(bashPayload(e, "rm -rf /"))); d != "deny" {
		t.Fatalf("socket dir 0777, fallback: rm answered %q, want deny", d)
	}
	if err := os.Chmod(dir, fi.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
	if r := e.Hookc(bashPayload(e, "ls"), "--fallback=false"); decisionOf(t, r) != "allow" {
		t.Fatalf("socket dir private again: exit %d stderr %q", r.Code, r.Stderr)
	}
	t.Logf("faults_hostile: socket dir chmod 0777 mid-run: hookc refused it (exit 2, nothing sent) / fell back in-process (deny kept); private again: served")
}
