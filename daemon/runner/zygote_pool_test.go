package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
	"github.com/hookd/hookd/test/testutil"
)

func zygoteStat(p *Pool, name string) uint64 {
	z := p.Stats().Zygote
	return map[string]uint64{"forked": z.Forked, "ran_cold": z.RanCold}[name]
}

// TestPoolForksPythonHooks: a Python hook's first event runs cold while its zygote
// starts; later events are forked and answer exactly as the cold run did (shell and exec
// form), and the pool never also prewarms a process for it.
func TestPoolForksPythonHooks(t *testing.T) {
	dir := t.TempDir()
	needZygote(t, dir)
	script := filepath.Join(dir, "hook.py")
	os.WriteFile(script, []byte("import json, os, sys\nd = json.load(sys.stdin)\nprint(d['n'], os.environ['HOOK_VAR'], sys.argv[1:], os.getcwd())\nprint('e', file=sys.stderr)\nsys.exit(d['n'] % 3)\n"), 0o644)
	p := newTestPool(t, PoolOptions{})
	for _, spec := range []ProcSpec{
		{Command: "python3 hook.py a 'b c'", Dir: dir, Env: testEnv(dir), Timeout: 20 * time.Second},
		{Command: "python3", Args: []string{"hook.py", "a", "b c"}, Dir: dir, Env: testEnv(dir), Timeout: 20 * time.Second},
	} {
		forked0 := zygoteStat(p, "forked")
		for i := 0; ; i++ {
			spec.Stdin = []byte(`{"n":` + strconv.Itoa(i) + `}`)
			cold := ExecRunner{}.Run(context.Background(), spec)
			got := p.Run(context.Background(), spec)
			if got.ExitCode != cold.ExitCode || !bytes.Equal(got.Stdout, cold.Stdout) || !bytes.Equal(got.Stderr, cold.Stderr) || got.StartErr != nil {
				t.Fatalf("event %d: pool (%d %q %q %v), cold (%d %q %q)", i, got.ExitCode, got.Stdout, got.Stderr, got.StartErr, cold.ExitCode, cold.Stdout, cold.Stderr)
			}
			if zygoteStat(p, "forked") >= forked0+3 {
				break
			}
			if i > 2000 {
				t.Fatal("never forked")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if n := stat(p, "spawned"); n != 0 {
		t.Errorf("the pool also prewarmed %d processes for a forked hook", n)
	}
}

// TestPoolZygoteTimeoutKillsGroup: a forked hook that outlives its timeout is killed
// with everything it started, and reported as timed out.
func TestPoolZygoteTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	needZygote(t, dir)
	pidFile := filepath.Join(dir, "grandchild")
	os.WriteFile(filepath.Join(dir, "slow.py"), []byte("import subprocess, sys, time\np = subprocess.Popen(['sleep', '300'])\nopen(sys.argv[1], 'w').write(str(p.pid))\ntime.sleep(300)\n"), 0o644)
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "python3 slow.py " + pidFile, Dir: dir, Env: testEnv(dir), Timeout: 5 * time.Second}
	p.Warm(spec)
	poll(t, 60*time.Second, "zygote", func() bool { return len(p.zyg.ZygotePIDs()) == 1 })
	r := p.Run(context.Background(), spec)
	if !r.TimedOut || zygoteStat(p, "forked") != 1 {
		t.Fatalf("timed out %v, forked %d: %+v", r.TimedOut, zygoteStat(p, "forked"), r)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	poll(t, 10*time.Second, "grandchild gone", func() bool { return testutil.ProcessGone(pid) })
}

// TestPoolUvRunIsNative: a `uv run` hook runs exactly as it would without hookd — with
// no uv installed it fails as the shell makes it fail (and is never forked from a Python
// zygote, though it names a Python script), and with a uv on PATH that uv is what runs.
func TestPoolUvRunIsNative(t *testing.T) {
	dir := t.TempDir()
	if _, err := lookPath("python3", testEnv(dir)); err != nil {
		t.Skip("SKIP (loud): python3 not installed")
	}
	os.WriteFile(filepath.Join(dir, "hook.py"), []byte("import sys\nprint('python ran')\nsys.exit(3)\n"), 0o644)
	p := newTestPool(t, PoolOptions{})
	env := testEnv(dir)
	if _, err := lookPath("uv", env); err == nil {
		t.Log("uv is installed: the no-uv half of this test is exercised with a PATH without it")
	}
	noUV := []string{"PATH=/nonexistent", "HOME=" + dir, "LANG=C.UTF-8"}
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	// A stand-in uv: records that it ran and how, then runs the script itself.
	os.WriteFile(filepath.Join(bin, "uv"), []byte("#!/bin/sh\necho \"uv $*\" >&2\nshift\n[ \"$1\" = --script ] && shift\nexec python3 \"$@\"\n"), 0o755)
	fakeUV := []string{"PATH=" + bin + ":" + pathOf(env), "HOME=" + dir, "HOOK_VAR=x y"}
	for _, c := range []struct {
		name string
		env  []string
	}{{"no uv", noUV}, {"uv on PATH", fakeUV}} {
		for _, cmd := range []string{"uv run hook.py a", "uv run --script hook.py a"} {
			spec := ProcSpec{Command: cmd, Dir: dir, Env: c.env, Timeout: 20 * time.Second}
			for range 3 {
				cold := ExecRunner{}.Run(context.Background(), spec)
				got := p.Run(context.Background(), spec)
				if got.ExitCode != cold.ExitCode || !bytes.Equal(got.Stdout, cold.Stdout) || !bytes.Equal(got.Stderr, cold.Stderr) {
					t.Fatalf("%s, %q: pool (%d %q %q), cold (%d %q %q)", c.name, cmd, got.ExitCode, got.Stdout, got.Stderr, cold.ExitCode, cold.Stdout, cold.Stderr)
				}
				want := 127
				if c.name == "uv on PATH" {
					want = 3
					if !bytes.Contains(got.Stderr, []byte("uv run")) {
						t.Fatalf("%q: the stand-in uv did not run: %q", cmd, got.Stderr)
					}
				}
				if got.ExitCode != want {
					t.Fatalf("%s, %q: exit %d, want %d (%q)", c.name, cmd, got.ExitCode, want, got.Stderr)
				}
			}
		}
	}
	if n := zygoteStat(p, "forked"); n != 0 {
		t.Errorf("%d uv run events were forked from a zygote", n)
	}
}

func pathOf(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return ""
}

// killZygoteMidRun runs spec (a hook that appends a byte to started, then works) through
// a pool whose zygote is ready, and SIGKILLs the zygote once the forked hook has started
// and after pause; it returns the result and how long the run took.
func killZygoteMidRun(t *testing.T, spec ProcSpec, started string, pause time.Duration) (*Pool, ProcResult, time.Duration) {
	t.Helper()
	p := newTestPool(t, PoolOptions{})
	p.Warm(spec)
	poll(t, 60*time.Second, "zygote", func() bool { return len(p.zyg.ZygotePIDs()) == 1 })
	zpid := p.zyg.ZygotePIDs()[0]
	begin := time.Now()
	done := make(chan ProcResult, 1)
	go func() { done <- p.Run(context.Background(), spec) }()
	poll(t, 30*time.Second, "the forked hook to start", func() bool {
		b, _ := os.ReadFile(started)
		return len(b) == 1
	})
	time.Sleep(pause)
	syscall.Kill(zpid, syscall.SIGKILL)
	r := <-done
	return p, r, time.Since(begin)
}

// TestPoolZygoteDeathRerunsCold (issue 28, item 3): the zygote dies while a forked guard
// runs. The guard — which would deny — is killed with it and run again cold in the time
// left, so its answer arrives (exit 2 and its reason) instead of a failed hook with no
// decision. The decision: rerun cold, not fail closed (docs/zygote.md says why).
func TestPoolZygoteDeathRerunsCold(t *testing.T) {
	dir := t.TempDir()
	needZygote(t, dir)
	started := filepath.Join(dir, "started")
	os.WriteFile(filepath.Join(dir, "guard.py"), []byte("import json, sys, time\nd = json.load(sys.stdin)\nopen(sys.argv[1], 'a').write('x')\ntime.sleep(1)\nprint('rm -rf is not allowed', file=sys.stderr)\nsys.exit(2)\n"), 0o644)
	spec := ProcSpec{Command: "python3 guard.py " + started, Dir: dir, Env: testEnv(dir), Timeout: 30 * time.Second, Stdin: []byte(`{"tool_input":{"command":"rm -rf x"}}`)}
	p, r, _ := killZygoteMidRun(t, spec, started, 0)
	if r.ExitCode != 2 || !strings.Contains(string(r.Stderr), "rm -rf is not allowed") || r.StartErr != nil || r.TimedOut {
		t.Fatalf("the guard's answer was lost with its zygote: %+v", r)
	}
	if b, _ := os.ReadFile(started); len(b) != 2 {
		t.Fatalf("the guard ran %d times, want 2 (forked, killed with its zygote; then cold)", len(b))
	}
	if z := p.Stats().Zygote; z.RerunCold != 1 || z.Lost != 1 {
		t.Fatalf("counters: %+v", z)
	}
}

// A rerun gets only the time left: a guard whose zygote dies after its timeout is spent
// is a timeout, not a second full run.
func TestPoolZygoteDeathRerunGetsTheTimeLeft(t *testing.T) {
	dir := t.TempDir()
	needZygote(t, dir)
	started := filepath.Join(dir, "started")
	os.WriteFile(filepath.Join(dir, "slow.py"), []byte("import sys, time\nopen(sys.argv[1], 'a').write('x')\ntime.sleep(3)\n"), 0o644)
	spec := ProcSpec{Command: "python3 slow.py " + started, Dir: dir, Env: testEnv(dir), Timeout: 4 * time.Second}
	// 3 s of work cannot fit in what is left of the 4 s after a 2 s pause.
	_, r, took := killZygoteMidRun(t, spec, started, 2*time.Second)
	if !r.TimedOut {
		t.Fatalf("want a timeout, got %+v", r)
	}
	if took > 8*time.Second {
		t.Fatalf("took %v: the rerun did not stop at the hook's own deadline (4 s)", took)
	}
}

// Python zygotes need os.pidfd_open (Linux >= 5.3, Python >= 3.9): an interpreter without
// it (here, a sitecustomize removes it) refuses to serve as a zygote, and its hooks run
// cold, answering exactly as a cold run. After 3 zygotes in a row that ended before they
// were ready, none is started again for that interpreter and environment — before, every
// event started one more doomed python beside its cold run.
func TestPoolPythonWithoutPidfdRunsCold(t *testing.T) {
	dir := t.TempDir()
	needZygote(t, dir)
	site := filepath.Join(dir, "site")
	os.Mkdir(site, 0o755)
	os.WriteFile(filepath.Join(site, "sitecustomize.py"), []byte("import os\ndel os.pidfd_open\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "hook.py"), []byte("import json, sys\nd = json.load(sys.stdin)\nprint(d['n'])\nsys.exit(d['n'] % 3)\n"), 0o644)
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "python3 hook.py", Dir: dir, Env: append(testEnv(dir), "PYTHONPATH="+site), Timeout: 20 * time.Second}
	const events = 6
	for i := range events {
		spec.Stdin = []byte(`{"n":` + strconv.Itoa(i) + `}`)
		cold := ExecRunner{}.Run(context.Background(), spec)
		got := p.Run(context.Background(), spec)
		if got.ExitCode != cold.ExitCode || !bytes.Equal(got.Stdout, cold.Stdout) || !bytes.Equal(got.Stderr, cold.Stderr) || got.StartErr != nil {
			t.Fatalf("event %d: pool (%d %q %q %v), cold (%d %q %q)", i, got.ExitCode, got.Stdout, got.Stderr, got.StartErr, cold.ExitCode, cold.Stdout, cold.Stderr)
		}
		// Let the zygote this event may have started end (it exits at once): the next
		// event then finds it dead, as it would after any pause.
		testutil.WaitFor(t, 30*time.Second, "the zygote to end", func() bool { z := p.Stats().Zygote; return z.Died == z.Started })
	}
	z := p.Stats().Zygote
	if z.Started == 0 || !strings.Contains(z.LastFallback, "pidfd_open") {
		t.Fatalf("no zygote was tried, or it did not fail for want of os.pidfd_open: %+v", z)
	}
	if z.Forked != 0 || z.RanCold != events {
		t.Fatalf("forked %d, ran cold %d of %d events", z.Forked, z.RanCold, events)
	}
	if z.Started > 3 {
		t.Fatalf("%d zygotes started for %d events of an interpreter that cannot serve as one", z.Started, events)
	}
}

// needZygote skips, saying why, where hookd forks no Python hooks: without python3, or on a
// system where forking a warm interpreter is not the default (macOS).
func needZygote(t *testing.T, dir string) {
	t.Helper()
	if _, err := lookPath("python3", testEnv(dir)); err != nil {
		t.Skip("SKIP (loud): python3 not installed")
	}
	if !osproc.ForkWarmInterpreters {
		t.Skip("SKIP (loud): hookd forks no warm interpreters on this system (docs/zygote.md, macOS)")
	}
}
