package zygote

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
	"github.com/hookd/hookd/test/testutil"
)

// Issue 28: the zygote's promises under attack (docs/zygote.md, docs/reliability.md).

// A FIFO, a device or a socket as the script is refused at once (the old zygote opened a
// FIFO for reading and waited for a writer for ever, with every hook sharing it), by hookd
// before it asks and by the zygote itself when the file changes in between; the zygote
// keeps serving.
func TestSpecialFileScriptRefused(t *testing.T) {
	m, spec := setup(t)
	fifo := filepath.Join(spec.Dir, "fifo.py")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/dev/zero", filepath.Join(spec.Dir, "zero.py"))
	l, err := net.Listen("unix", filepath.Join(spec.Dir, "sock.py"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, zygoteChecks := range []bool{false, true} {
		if zygoteChecks {
			preCheck = func(Spec) error { return nil }
		}
		for _, name := range []string{"fifo.py", "zero.py", "sock.py"} {
			s := spec
			s.Script = name
			start := time.Now()
			_, err := tryForked(m, s, nil)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("%s (zygote's own check %v): %v, want ErrRefused", name, zygoteChecks, err)
			}
			t.Logf("%s refused in %v (zygote's own check %v): %v", name, time.Since(start).Round(time.Millisecond), zygoteChecks, err)
		}
		preCheck = checkScript
	}
	if o := forked(t, m, spec, nil); o.code != 0 {
		t.Fatalf("the zygote no longer serves: %+v", o)
	}
}

// A hook whose script is a FIFO does not wedge the pre-import either (it read each script
// to find its imports).
func TestPreloadOfAFIFOScriptReturns(t *testing.T) {
	m, spec := setup(t)
	s := spec
	s.Script = "fifo.py"
	if err := syscall.Mkfifo(filepath.Join(spec.Dir, "fifo.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Preload(s) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the pre-import of a FIFO script did not return")
	}
	if o := forked(t, m, spec, nil); o.code != 0 {
		t.Fatalf("the zygote no longer serves: %+v", o)
	}
}

// A zygote that stops answering (stopped, wedged) is stopped with its children within the
// answer timeout; the event falls back (runs cold) and the next one gets a new zygote.
func TestUnresponsiveZygoteIsStopped(t *testing.T) {
	m, spec := setupWith(t, Options{AnswerTimeout: 500 * time.Millisecond})
	os.WriteFile(filepath.Join(spec.Dir, "slow.py"), []byte("import sys\nsys.stdin.read()\n"), 0o644)
	slow := spec
	slow.Script = "slow.py"
	preImported(t, m, spec)
	forked(t, m, spec, nil)
	preImported(t, m, slow)
	inR, inW, _ := os.Pipe()
	defer inW.Close()
	outR, outW, _ := os.Pipe()
	defer outR.Close()
	running, err := m.Start(slow, inR, outW, outW, RunOptions{})
	inR.Close()
	outW.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	zpid := m.ZygotePIDs()[0]
	syscall.Kill(zpid, syscall.SIGSTOP)
	defer syscall.Kill(zpid, syscall.SIGCONT)
	start := time.Now()
	_, err = tryForked(m, spec, nil)
	took := time.Since(start)
	if !errors.Is(err, ErrFallback) {
		t.Fatalf("a stopped zygote: %v, want a fallback", err)
	}
	if took > 5*time.Second {
		t.Fatalf("the event waited %v for a stopped zygote (answer timeout 500ms)", took)
	}
	waitGone(t, zpid)
	<-running.Done()
	if _, err := running.Result(); !errors.Is(err, ErrLost) {
		t.Fatalf("the stopped zygote's running child: %v, want ErrLost", err)
	}
	waitGone(t, running.Pid)
	if c := m.Stats.Get(); c.Unresponsive == 0 {
		t.Fatalf("not counted: %+v", c)
	}
	preImported(t, m, spec)
	if o := forked(t, m, spec, nil); o.code != 0 {
		t.Fatalf("the replacement zygote: %+v", o)
	}
	t.Logf("stopped zygote: event fell back after %v; zygote and its running child killed", took.Round(time.Millisecond))
}

// When a forked hook exits, the zygote — its parent — kills what it left in its group
// before it reaps it; with KeepGroup it leaves it.
func TestZygoteKillsTheGroupBeforeTheReap(t *testing.T) {
	m, spec := setup(t)
	os.WriteFile(filepath.Join(spec.Dir, "bg.py"), []byte("import subprocess\np = subprocess.Popen(['sleep', '300'])\nprint(p.pid)\n"), 0o644)
	s := spec
	s.Script = "bg.py"
	for _, keep := range []bool{false, true} {
		inR, inW, _ := os.Pipe()
		inW.Close()
		outR, outW, _ := os.Pipe()
		c, err := m.Start(s, inR, outW, outW, RunOptions{KeepGroup: keep})
		inR.Close()
		outW.Close()
		if err != nil {
			t.Fatal(err)
		}
		var sleeper int
		fmt.Fscan(outR, &sleeper)
		outR.Close()
		<-c.Done()
		c.Close()
		alive := func() bool { return sleeper > 0 && !testutil.ProcessGone(sleeper) }
		if keep {
			if !alive() {
				t.Fatal("KeepGroup: the background sleep was killed")
			}
			syscall.Kill(sleeper, syscall.SIGKILL)
			continue
		}
		testutil.WaitFor(t, 10*time.Second, "the background sleep to be killed", func() bool { return !alive() })
	}
}

// A forked hook that timed out is killed with its group, through its pidfd (Linux ≥ 6.9)
// or, on older kernels (simulated), by the zygote, which holds it unreaped.
func TestChildKillReachesTheGroup(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("old_kernel=%v", old), func(t *testing.T) {
			if old {
				defer osproc.SimulateOldKernel()()
			}
			m, spec := setup(t)
			os.WriteFile(filepath.Join(spec.Dir, "hang.py"), []byte("import subprocess, sys\np = subprocess.Popen(['sleep', '300'])\nprint(p.pid, flush=True)\nsys.stdin.read()\n"), 0o644)
			s := spec
			s.Script = "hang.py"
			inR, inW, _ := os.Pipe()
			defer inW.Close()
			outR, outW, _ := os.Pipe()
			c, err := m.Start(s, inR, outW, outW, RunOptions{KeepGroup: true})
			inR.Close()
			outW.Close()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var sleeper int
			fmt.Fscan(outR, &sleeper)
			outR.Close()
			c.Stop()
			if code, _ := c.Result(); code != -9 {
				t.Fatalf("child exit %d, want -9", code)
			}
			testutil.WaitFor(t, 10*time.Second, "the child's background sleep to be killed", func() bool { return testutil.ProcessGone(sleeper) })
		})
	}
}

// Issue 28, item 1 (a): the zygote reaped a forked hook, and a pid-reusing neighbour took
// its pid — and so the number of its group — before hookd's kill. The old hookd killed
// `-pid` after the zygote's exit report and took the neighbour with it. Now nothing is
// signalled by number: the pidfd names the reaped child (no group left: nothing
// happens), and a zygote asked to kill a child it no longer has does nothing.
func TestChildKillSparesAPidReusingNeighbour(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("old_kernel=%v", old), func(t *testing.T) {
			if old {
				defer osproc.SimulateOldKernel()()
			}
			m, spec := setup(t)
			inR, inW, _ := os.Pipe()
			inW.Close()
			outR, outW, _ := os.Pipe()
			c, err := m.Start(spec, inR, outW, outW, RunOptions{})
			inR.Close()
			outW.Close()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go func() {
				b := make([]byte, 4096)
				for {
					if _, err := outR.Read(b); err != nil {
						return
					}
				}
			}()
			<-c.Done() // exited, and reaped by the zygote
			outR.Close()
			// The zygote forks the next spare right after the reap: let it, so that the spare
			// does not take the pid the neighbour is about to be given.
			zygoteAtRest(t, m.ZygotePIDs()[0])
			neighbour := testutil.StartNeighbour(t, c.Pid) // leads group c.Pid
			c.Kill()
			if old {
				// The zygote gets the request; give it time to act on it (it must not).
				forked(t, m, spec, nil)
			}
			if !neighbour.Survived(t) {
				t.Fatal("the neighbour that reused the forked hook's pid was killed")
			}
		})
	}
}

// Issue 28, item 8: a forked hook's exit status is a cold run's for every sys.exit
// argument — ints of any size and sign, None, bools, strings, other objects, exceptions,
// SystemExit subclasses — with a cold `python3 SCRIPT` as the oracle.
func TestExitStatusMatchesColdRun(t *testing.T) {
	m, spec := setup(t)
	exprs := []string{"0", "1", "2", "255", "256", "257", "-1", "-2", "-255", "-256", "-257",
		"2**31-1", "2**31", "-2**31", "-2**31-1", "2**32", "2**32+2", "-2**32-2", "2**63-1", "2**63",
		"-2**63", "-2**63-1", "2**64+2", "10**30", "-10**30", "None", "True", "False", "'bad thing'",
		"b'bytes'", "1.5", "(2, 3)", "[]", "{'a': 1}", "ValueError('v')", "'\\udc80'", "'é'",
		"type('I', (int,), {'__int__': lambda s: 9, '__index__': lambda s: 9})(3)",
		"__import__('enum').IntEnum('E', {'A': 5}).A"}
	scripts := map[string]string{}
	for i, e := range exprs {
		scripts[fmt.Sprintf("exit %s", e)] = fmt.Sprintf("import sys\nsys.exit(%s)\n# %d\n", e, i)
	}
	for name, src := range map[string]string{
		"raise SystemExit":       "raise SystemExit\n",
		"SystemExit(2, 3)":       "raise SystemExit(2, 3)\n",
		"builtin exit(4)":        "exit(4)\n",
		"quit()":                 "quit()\n",
		"os._exit(7)":            "import os\nos._exit(7)\n",
		"subclass code property": "class E(SystemExit):\n    @property\n    def code(self): return 7\nraise E(5)\n",
		"subclass code raises":   "class E(SystemExit):\n    @property\n    def code(self): raise RuntimeError('no')\nraise E(5)\n",
		"str that cannot print":  "import sys\nclass S:\n    def __str__(self): raise RuntimeError('no')\nsys.exit(S())\n",
		"stderr None":            "import sys\nsys.stderr = None\nsys.exit('gone')\n",
		"exit in atexit":         "import atexit, sys\natexit.register(lambda: sys.exit(5))\nsys.exit(3)\n",
		"KeyboardInterrupt":      "raise KeyboardInterrupt\n",
		"exception":              "raise ValueError('x')\n",
	} {
		scripts[name] = src
	}
	i := 0
	for name, src := range scripts {
		i++
		t.Run(name, func(t *testing.T) {
			s := spec
			s.Script = fmt.Sprintf("exit%d.py", i)
			os.WriteFile(filepath.Join(spec.Dir, s.Script), []byte(src), 0o644)
			want := cold(t, s, nil)
			got := forked(t, m, s, nil)
			// Object addresses in messages ("<function <lambda> at 0x7f…>") differ per process.
			addr := regexp.MustCompile(`0x[0-9a-f]+`)
			got.stderr, want.stderr = addr.ReplaceAllString(got.stderr, "0x…"), addr.ReplaceAllString(want.stderr, "0x…")
			if got.code != want.code || got.stderr != want.stderr || got.stdout != want.stdout {
				t.Errorf("forked %+v, cold %+v", got, want)
			}
		})
	}
}

// Issue 28, item 4: no line of project or user code runs before its event. Each case is a
// hook whose pre-import would, in the old zygote, import a module that writes a marker
// file when imported.
func TestPreImportRunsNoProjectCode(t *testing.T) {
	m, spec := setup(t)
	marker, writer := markerModule(spec.Dir)
	// unittest's __main__ runs test discovery in the working directory: the project's
	// test_*.py would be imported inside the zygote.
	os.WriteFile(filepath.Join(spec.Dir, "test_project.py"), []byte(writer), 0o644)
	os.WriteFile(filepath.Join(spec.Dir, "uses_unittest_main.py"), []byte("import unittest.__main__\n"), 0o644)
	// Any package's __main__.
	os.WriteFile(filepath.Join(spec.Dir, "uses_json_tool_main.py"), []byte("import json.tool\nimport json.__main__\n"), 0o644)
	s := spec
	for _, script := range []string{"uses_unittest_main.py", "uses_json_tool_main.py"} {
		s.Script = script
		if err := m.Preload(s); err != nil {
			t.Fatal(err)
		}
	}
	// A directory on PYTHONPATH (ahead of the library on sys.path) shadowing a standard
	// module: a cold run imports the project's json.py, so the zygote must not import
	// json — nor anything else of the library, whose imports could reach it.
	pp := filepath.Join(spec.Dir, "pp")
	os.Mkdir(pp, 0o755)
	os.WriteFile(filepath.Join(pp, "json.py"), []byte(writer), 0o644)
	os.WriteFile(filepath.Join(spec.Dir, "uses_json.py"), []byte("import json\nimport csv\n"), 0o644)
	ppSpec := spec
	ppSpec.Env = append(append([]string{}, spec.Env...), "PYTHONPATH="+pp)
	ppSpec.Script = "uses_json.py"
	m2 := New(Options{})
	t.Cleanup(m2.Close)
	if err := m2.Preload(ppSpec); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a pre-import ran project code before any event:\n%s", b)
	}
	// At its event the hook must import the shadowing json.py, as a cold run does; the
	// zygote holds the library's json (its own protocol uses it), so it declines and the
	// event runs cold.
	if _, err := tryForked(m2, ppSpec, nil); !errors.Is(err, ErrFallback) {
		t.Fatalf("a PYTHONPATH module shadowing the zygote's json: %v, want a fallback", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the zygote imported the shadowing module")
	}
}

// The zygote's own imports at its start do not come from its working directory (the
// project: `python -c` puts it first on sys.path) either: a project json.py or socket.py
// used to be imported by the zygote itself, at SessionStart.
func TestZygoteStartRunsNoProjectCode(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	marker, writer := markerModule(dir)
	for _, name := range []string{"json.py", "socket.py", "selectors.py", "random.py", "hashlib.py"} {
		os.WriteFile(filepath.Join(dir, name), []byte(writer), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "hook.py"), []byte("import sys\nsys.exit(3)\n"), 0o644)
	spec := Spec{Python: "python3", Path: py, Script: "hook.py", Dir: dir,
		Env: []string{"PATH=" + filepath.Dir(py) + ":/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8"}}
	m := New(Options{})
	t.Cleanup(m.Close)
	if err := m.Preload(spec); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the zygote imported project modules at its start:\n%s", b)
	}
	// The hook's directory holds modules a cold run would import in place of the zygote's
	// own: the event runs cold.
	if _, err := tryForked(m, spec, nil); !errors.Is(err, ErrFallback) {
		t.Fatalf("want a fallback (the script's directory shadows the zygote's modules), got %v", err)
	}
}

// markerModule is the source of a module that, imported, appends its name to a marker file
// in dir; it returns the marker's path and the source.
func markerModule(dir string) (string, string) {
	marker := filepath.Join(dir, "marker")
	return marker, fmt.Sprintf("open(%q, 'a').write(__name__ + '\\n')\n", marker)
}
