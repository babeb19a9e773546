package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/test/testutil"
)

// poll waits until cond holds, failing the test after timeout.
var poll = testutil.WaitFor

// stat reads one of the pool's prewarm figures by its status name.
func stat(p *Pool, name string) uint64 {
	s := p.Stats().Prewarm
	v, ok := map[string]uint64{
		"hits": s.Hits, "misses": s.Misses, "fallbacks": s.Fallbacks, "spawned": s.Spawned,
		"spawn_errors": s.SpawnErrors, "discarded": s.Discarded, "died_waiting": s.DiedWaiting,
		"reaped_idle": s.ReapedIdle, "evicted": s.Evicted,
		"idle": uint64(s.Idle), "starting": uint64(s.Starting), "keys": uint64(s.Keys),
	}[name]
	if !ok {
		panic("no prewarm figure " + name)
	}
	return v
}

func testEnv(dir string) []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "HOOK_VAR=x y"}
}

func newTestPool(t *testing.T, o PoolOptions) *Pool {
	p := NewPool(o)
	t.Cleanup(p.Close)
	return p
}

// waitIdle waits until the pool holds n idle processes whose pids differ from not.
func waitIdle(t *testing.T, p *Pool, n int, not ...int) []int {
	t.Helper()
	var pids []int
	poll(t, 10*time.Second, strconv.Itoa(n)+" idle processes", func() bool {
		pids = p.IdlePIDs()
		if len(pids) != n {
			return false
		}
		for _, a := range pids {
			for _, b := range not {
				if a == b {
					return false
				}
			}
		}
		return true
	})
	return pids
}

func TestPoolWarmMatchesCold(t *testing.T) {
	dir := t.TempDir()
	spec := ProcSpec{
		// Output depends on stdin, the environment, the directory and the arguments.
		Command: `wc -c; env | LC_ALL=C sort; pwd; echo err >&2; exit 3`,
		Dir:     dir, Env: testEnv(dir), Timeout: 10 * time.Second, Prewarm: PrewarmOn, HookID: "h1", HookRev: "r1",
	}
	for _, size := range []int{0, 100, pipeAtomic, 300 << 10} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			p := newTestPool(t, PoolOptions{})
			spec.Stdin = bytes.Repeat([]byte("x"), size)
			cold := ExecRunner{}.Run(context.Background(), spec)
			first := p.Run(context.Background(), spec) // cold: the key is new
			waitIdle(t, p, 1)
			warm := p.Run(context.Background(), spec)
			if stat(p, "hits") != 1 || stat(p, "misses") != 1 {
				t.Fatalf("hits %d misses %d, want 1 and 1", stat(p, "hits"), stat(p, "misses"))
			}
			for _, r := range []ProcResult{first, warm} {
				if r.ExitCode != cold.ExitCode || !bytes.Equal(r.Stdout, cold.Stdout) || !bytes.Equal(r.Stderr, cold.Stderr) {
					t.Fatalf("warm/cold differ:\ncold %d %q %q\ngot  %d %q %q", cold.ExitCode, cold.Stdout, cold.Stderr, r.ExitCode, r.Stdout, r.Stderr)
				}
			}
			if !strings.Contains(string(warm.Stdout), strconv.Itoa(size)+"\n") {
				t.Fatalf("payload size not seen: %q", warm.Stdout)
			}
		})
	}
}

func TestPoolExecFormWarm(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "hook.py")
	if err := os.WriteFile(script, []byte("import json,sys\nd=json.load(sys.stdin)\nprint(d['n'])\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := lookPath("python3", testEnv(dir)); err != nil {
		t.Skip("python3 not installed")
	}
	p := newTestPool(t, PoolOptions{NoZygote: true}) // the pool's own path; zygote_pool_test.go has the other
	spec := ProcSpec{Command: "python3", Args: []string{"hook.py"}, Dir: dir, Env: testEnv(dir), Timeout: 20 * time.Second}
	for i := range 3 {
		spec.Stdin = []byte(`{"n":` + strconv.Itoa(i) + `}`)
		r := p.Run(context.Background(), spec)
		if got := strings.TrimSpace(string(r.Stdout)); got != strconv.Itoa(i) || r.ExitCode != 0 {
			t.Fatalf("event %d: exit %d stdout %q stderr %q", i, r.ExitCode, r.Stdout, r.Stderr)
		}
		waitIdle(t, p, 1)
	}
	if stat(p, "hits") != 2 {
		t.Fatalf("hits = %d, want 2 (auto policy should prewarm python3 hook.py)", stat(p, "hits"))
	}
}

func TestPoolAutoSkipsUnsafe(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "cat >/dev/null; echo ok", Dir: dir, Env: testEnv(dir), Stdin: []byte("{}")}
	for range 3 {
		if r := p.Run(context.Background(), spec); string(r.Stdout) != "ok\n" {
			t.Fatalf("stdout %q", r.Stdout)
		}
	}
	if n := stat(p, "spawned"); n != 0 {
		t.Fatalf("spawned %d prewarmed processes for a shell pipeline under auto", n)
	}
	spec.Prewarm = PrewarmOff
	spec.Command = "cat"
	p.Run(context.Background(), spec)
	if n := stat(p, "spawned"); n != 0 {
		t.Fatalf("spawned %d with prewarm off", n)
	}
}

func TestAnalyzeCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("hook.py", "import json, sys\njson.load(sys.stdin)\n", 0o644)
	write("nostdin.py", "print('hello')\n", 0o644)
	write("hook.js", "JSON.parse(require('fs').readFileSync(0))\n", 0o644)
	write("hook.rb", "require 'json'; JSON.parse(STDIN.read)\n", 0o644)
	write(".claude/hooks/guard.py", "#!/usr/bin/env python3\nimport sys\nsys.stdin.read()\n", 0o755)
	write("envS.js", "#!/usr/bin/env -S node --no-warnings\nprocess.stdin.resume()\n", 0o755)
	write("hook.sh", "#!/bin/bash\ninput=$(cat)\n", 0o755)
	// A package's bin that only launches the module reading stdin (cc-safety-net's shape),
	// an ES module importing one, launchers of modules that do not read stdin, or of a
	// package (not a relative path), and a Python launcher (not followed).
	write("pkg/dist/bin/cli.js", "#!/usr/bin/env node\n'use strict';\nconst { enableCompileCache } = require('node:module');\nrequire('./hook.js');\n", 0o755)
	write("pkg/dist/bin/hook.js", "async function main(){ for await (const c of process.stdin) {} }\nmain()\n", 0o644)
	write("esm/main.mjs", "import { run } from './lib/run.mjs'\nrun()\n", 0o644)
	write("esm/lib/run.mjs", "export function run(){ process.stdin.on('data', () => {}) }\n", 0o644)
	write("dirmod/main.js", "require('./impl')\n", 0o644)
	write("dirmod/impl/index.js", "require('fs').readFileSync(0)\n", 0o644)
	write("quiet/main.js", "require('./util.js')\nconsole.log('hi')\n", 0o644)
	write("quiet/util.js", "module.exports = 1\n", 0o644)
	write("quiet/pkg.js", "require('some-package')\n", 0o644)
	write("pyl/main.py", "import impl\n", 0o644)
	write("pyl/impl.py", "import sys; sys.stdin.read()\n", 0o644)
	// npm's bin directory links to the package's script: its requires resolve from there.
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../pkg/dist/bin/cli.js", filepath.Join(dir, "bin", "cli")); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin:" + filepath.Join(dir, "bin"), "HOME=" + dir, "CLAUDE_PROJECT_DIR=" + dir, "SPACEY=a b"}
	tests := []struct {
		cmd    string
		args   []string
		safe   bool
		script string
	}{
		{cmd: "python3 " + dir + "/hook.py", safe: true, script: "hook.py"},
		{cmd: "python3 hook.py", safe: true, script: "hook.py"},
		{cmd: "python3 -u -X dev hook.py --flag", safe: true, script: "hook.py"},
		{cmd: `"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.py`, safe: true, script: ".claude/hooks/guard.py"},
		{cmd: `${CLAUDE_PROJECT_DIR}/.claude/hooks/guard.py arg`, safe: true, script: ".claude/hooks/guard.py"},
		{cmd: "~/.claude/hooks/guard.py", safe: true, script: ".claude/hooks/guard.py"},
		{cmd: "FOO=1 python3 'hook.py'", safe: true, script: "hook.py"},
		{cmd: "python3.11 hook.py", safe: true, script: "hook.py"},
		{cmd: "node hook.js", safe: true, script: "hook.js"},
		{cmd: "ruby hook.rb", safe: true, script: "hook.rb"},
		{cmd: "./envS.js", safe: true, script: "envS.js"},
		{cmd: "python3", args: []string{"hook.py"}, safe: true, script: "hook.py"},
		{cmd: dir + "/.claude/hooks/guard.py", args: []string{}, safe: true, script: ".claude/hooks/guard.py"},
		{cmd: dir + "/pkg/dist/bin/cli.js hook --claude-code", safe: true, script: "pkg/dist/bin/cli.js"},
		{cmd: "cli hook --claude-code", safe: true, script: "bin/cli"},
		{cmd: "node esm/main.mjs", safe: true, script: "esm/main.mjs"},
		{cmd: "node dirmod/main.js", safe: true, script: "dirmod/main.js"},
		{cmd: "node quiet/main.js", script: "quiet/main.js"},
		{cmd: "node quiet/pkg.js", script: "quiet/pkg.js"},
		{cmd: "python3 pyl/main.py", script: "pyl/main.py"},

		{cmd: "python3 nostdin.py", script: "nostdin.py"},
		{cmd: "python3 -c 'import sys; sys.stdin.read()'"},
		{cmd: "python3 -m hook"},
		{cmd: "python3 -Bc x"},
		{cmd: "python3 - < hook.py", script: "hook.py"},
		{cmd: "python3 missing.py"},
		{cmd: "bash hook.sh", script: "hook.sh"},
		{cmd: "./hook.sh", script: "hook.sh"},
		{cmd: "curl -s http://example.com | python3 hook.py", script: "hook.py"},
		{cmd: "echo x >> log; python3 hook.py", script: "hook.py"},
		{cmd: "python3 $(pwd)/hook.py"},
		{cmd: "python3 `pwd`/hook.py"},
		{cmd: "python3 *.py"},
		{cmd: "python3 $SPACEY"},
		{cmd: "python3 hook.py # note", script: "hook.py"},
		{cmd: "cat >/dev/null"},
		{cmd: "node -e 'process.stdin.on()' -r ./x.js"},
		{cmd: "python3", args: []string{"-c", "x"}},
	}
	for _, tt := range tests {
		spec := ProcSpec{Command: tt.cmd, Args: tt.args, Dir: dir, Env: env}
		safe, reason, script := AnalyzeCommand(spec)
		want := ""
		if tt.script != "" {
			want = filepath.Join(dir, tt.script)
		}
		if safe != tt.safe || script != want {
			t.Errorf("%q %q: safe=%v (%s) script=%q; want safe=%v script=%q", tt.cmd, tt.args, safe, reason, script, tt.safe, want)
		}
	}
}

func TestShellWords(t *testing.T) {
	env := []string{"A=1", "P=/x y/z", "HOME=/h"}
	tests := []struct {
		in   string
		want []string
	}{
		{`a b  c`, []string{"a", "b", "c"}},
		{`"$P"/q '$P' \$P`, []string{"/x y/z/q", "$P", "$P"}},
		{`${A}x "a\"b" ~/f`, []string{"1x", `a"b`, "/h/f"}},
		{`x=1 y`, []string{"x=1", "y"}},
		{`a ''`, []string{"a", ""}},
		{`a; b`, nil},
		{`a && b`, nil},
		{`a $(b)`, nil},
		{`a $P`, nil}, // would be field-split
		{`a "${A:-x}"`, nil},
		{`a $1`, nil},
		{`~root/x`, nil},
		{`a 'unterminated`, nil},
		{`a # comment`, nil},
		{"a\nb", nil},
		{`a {b,c}`, nil},
		{`a > f`, nil},
		{`a $'\x41'`, nil},
		{`/usr/bin/env  "x y"`, []string{"/usr/bin/env", "x y"}},
	}
	for _, tt := range tests {
		checkWords(t, tt.in, env, nil, tt.want)
	}
}

// checkWords checks shellWords(in, env, lookup) against want (nil: rejected).
func checkWords(t *testing.T, in string, env []string, lookup lookupFunc, want []string) {
	t.Helper()
	got, ok := shellWords(in, env, lookup)
	if want == nil {
		if ok {
			t.Errorf("%q: accepted as %q", in, got)
		}
		return
	}
	if !ok || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("%q = %q, %v; want %q", in, got, ok, want)
	}
}

func TestPoolScriptEditDiscards(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "hook.sh")
	write := func(v string) {
		if err := os.WriteFile(script, []byte("cat >/dev/null\necho "+v+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("v1")
	fi, _ := os.Stat(script)
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "sh " + script, Dir: dir, Env: testEnv(dir), Stdin: []byte("{}"), Prewarm: PrewarmOn}
	if r := p.Run(context.Background(), spec); string(r.Stdout) != "v1\n" {
		t.Fatalf("first: %q", r.Stdout)
	}
	old := waitIdle(t, p, 1)
	// Same size, mtime put back: only ctime and the hash tell.
	write("v2")
	if err := os.Chtimes(script, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if r := p.Run(context.Background(), spec); string(r.Stdout) != "v2\n" {
		t.Fatalf("after edit: %q (a prewarmed process of the old script answered)", r.Stdout)
	}
	if stat(p, "discarded") != 1 || stat(p, "hits") != 0 {
		t.Fatalf("discarded %d hits %d", stat(p, "discarded"), stat(p, "hits"))
	}
	poll(t, 5*time.Second, "old process gone", func() bool { return testutil.ProcessGone(old[0]) })
	waitIdle(t, p, 1, old...)
	if r := p.Run(context.Background(), spec); string(r.Stdout) != "v2\n" || stat(p, "hits") != 1 {
		t.Fatalf("warm after edit: %q hits %d", r.Stdout, stat(p, "hits"))
	}
}

func TestPoolHookRevisionDiscards(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "cat >/dev/null; echo $0", Dir: dir, Env: testEnv(dir), Prewarm: PrewarmOn, HookID: "h", HookRev: "1"}
	p.Run(context.Background(), spec)
	old := waitIdle(t, p, 1)
	spec.HookRev = "2"
	p.Run(context.Background(), spec)
	if stat(p, "hits") != 0 || stat(p, "discarded") != 1 {
		t.Fatalf("hits %d discarded %d after a revision change", stat(p, "hits"), stat(p, "discarded"))
	}
	poll(t, 5*time.Second, "old revision's process gone", func() bool { return testutil.ProcessGone(old[0]) })
	waitIdle(t, p, 1, old...)
}

// Two hooks whose processes would be identical (cc-starter's Write and Edit matchers both
// run `node .claude/hooks/protect-sensitive-files.js`) share warm processes: the one started
// after the first hook's event serves the second hook's. A change of either hook in the
// settings still discards them; a difference in anything that shapes the process — the
// environment, the prewarm policy, the output cap — keeps them apart.
func TestPoolIdenticalHooksShareProcesses(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{})
	write := ProcSpec{Command: "cat; echo $0", Dir: dir, Env: testEnv(dir), Stdin: []byte("w\n"), Prewarm: PrewarmOn, HookID: "write", HookRev: "1"}
	edit := write
	edit.HookID, edit.Stdin = "edit", []byte("e\n")
	p.Run(context.Background(), write)
	first := waitIdle(t, p, 1)
	if r := p.Run(context.Background(), edit); !strings.HasPrefix(string(r.Stdout), "e\n") || r.ExitCode != 0 {
		t.Fatalf("edit's event: exit %d stdout %q", r.ExitCode, r.Stdout)
	}
	if stat(p, "hits") != 1 || stat(p, "keys") != 1 {
		t.Fatalf("hits %d keys %d: the edit hook's first event was not served by the write hook's warm process", stat(p, "hits"), stat(p, "keys"))
	}
	if !testutil.ProcessGone(first[0]) {
		poll(t, 5*time.Second, "the shared process used and gone", func() bool { return testutil.ProcessGone(first[0]) })
	}
	// Either hook's revision change drops the shared processes.
	second := waitIdle(t, p, 1, first...)
	edit.HookRev = "2"
	p.Run(context.Background(), edit)
	if stat(p, "discarded") != 1 || stat(p, "hits") != 1 {
		t.Fatalf("discarded %d hits %d after the edit hook changed", stat(p, "discarded"), stat(p, "hits"))
	}
	poll(t, 5*time.Second, "the old revision's process gone", func() bool { return testutil.ProcessGone(second[0]) })

	// Anything that shapes the process keeps the keys apart.
	for name, change := range map[string]func(*ProcSpec){
		"env":       func(s *ProcSpec) { s.Env = append(slices.Clone(s.Env), "EXTRA=1") },
		"policy":    func(s *ProcSpec) { s.Prewarm = PrewarmAuto },
		"outputcap": func(s *ProcSpec) { s.OutputCap = 7 },
		"keepgroup": func(s *ProcSpec) { s.KeepGroup = true },
		"dir":       func(s *ProcSpec) { s.Dir = t.TempDir() },
	} {
		other := write
		change(&other)
		if prewarmKey(other) == prewarmKey(write) {
			t.Errorf("%s: a different process shares the prewarm key", name)
		}
	}
	if workerKey(write) == workerKey(edit) {
		t.Error("two hooks share a worker")
	}
}

func TestPoolReplacesProcessThatDied(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{DeathBackoff: time.Millisecond})
	spec := ProcSpec{Command: "cat; echo done", Dir: dir, Env: testEnv(dir), Stdin: []byte("in\n"), Prewarm: PrewarmOn}
	p.Run(context.Background(), spec)
	old := waitIdle(t, p, 1)
	if err := syscall.Kill(-old[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Replaced in the background, and reaped: no zombie left behind.
	repl := waitIdle(t, p, 1, old...)
	poll(t, 5*time.Second, "killed process reaped", func() bool { return testutil.ProcessGone(old[0]) })
	if r := p.Run(context.Background(), spec); string(r.Stdout) != "in\ndone\n" {
		t.Fatalf("stdout %q", r.Stdout)
	}
	if stat(p, "hits") != 1 || stat(p, "died_waiting") != 1 {
		t.Fatalf("hits %d died %d", stat(p, "hits"), stat(p, "died_waiting"))
	}
	// Killed between take and use: the event still runs (cold), never sees an error.
	waitIdle(t, p, 1, append(old, repl...)...)
	p.mu.Lock()
	for _, wk := range p.keys {
		for _, wp := range wk.idle {
			_ = syscall.Kill(-wp.p.cmd.Process.Pid, syscall.SIGKILL)
			<-wp.p.done // dead, but the pool has not looked yet
		}
	}
	p.mu.Unlock()
	if r := p.Run(context.Background(), spec); string(r.Stdout) != "in\ndone\n" || r.ExitCode != 0 {
		t.Fatalf("after a silent death: exit %d stdout %q", r.ExitCode, r.Stdout)
	}
}

func TestPoolStopsPrewarmingHookThatDoesNotWait(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "echo hi", Dir: dir, Env: testEnv(dir), Prewarm: PrewarmOn}
	p.Run(context.Background(), spec)
	poll(t, 5*time.Second, "the early exit noticed", func() bool { return stat(p, "died_waiting") == 1 })
	for range 3 {
		if r := p.Run(context.Background(), spec); string(r.Stdout) != "hi\n" {
			t.Fatalf("stdout %q", r.Stdout)
		}
	}
	if n := stat(p, "spawned"); n != 1 {
		t.Fatalf("spawned %d: a hook that exits 0 without its event must not be prewarmed again", n)
	}
}

func TestPoolReapsIdle(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{IdleTimeout: 100 * time.Millisecond})
	spec := ProcSpec{Command: "cat", Dir: dir, Env: testEnv(dir), Prewarm: PrewarmOn}
	p.Run(context.Background(), spec)
	pids := waitIdle(t, p, 1)
	poll(t, 5*time.Second, "idle process reaped", func() bool { return stat(p, "reaped_idle") == 1 && len(p.IdlePIDs()) == 0 })
	poll(t, 5*time.Second, "reaped process gone", func() bool { return testutil.ProcessGone(pids[0]) })
	poll(t, 5*time.Second, "key forgotten", func() bool { return stat(p, "keys") == 0 })
}

func TestPoolBounds(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{PerKey: 2, Total: 3})
	spec := ProcSpec{Command: "cat >/dev/null; sleep 0.2", Dir: dir, Env: testEnv(dir), Prewarm: PrewarmOn}
	// Two concurrent events on one key: it wants two processes.
	done := make(chan struct{})
	for range 2 {
		go func() { p.Run(context.Background(), spec); done <- struct{}{} }()
	}
	<-done
	<-done
	waitIdle(t, p, 2)
	// Other keys share the total; the least recently used key gives way.
	for i := range 3 {
		s := spec
		s.Command = "cat >/dev/null; : " + strconv.Itoa(i)
		p.Run(context.Background(), s)
		poll(t, 5*time.Second, "pool settles", func() bool { return stat(p, "starting") == 0 })
		if n := len(p.IdlePIDs()); n > 3 {
			t.Fatalf("%d idle processes, total is 3", n)
		}
	}
	if stat(p, "evicted") == 0 {
		t.Fatal("nothing evicted")
	}
}

func TestPoolWarmTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	p := newTestPool(t, PoolOptions{WaitDelay: 200 * time.Millisecond})
	spec := ProcSpec{Command: "cat >/dev/null; sleep 30 & echo $! > " + pidFile + "; wait", Dir: dir, Env: testEnv(dir),
		Prewarm: PrewarmOn, Timeout: 300 * time.Millisecond}
	p.Run(context.Background(), spec)
	waitIdle(t, p, 1)
	start := time.Now()
	r := p.Run(context.Background(), spec)
	if !r.TimedOut || stat(p, "hits") != 1 {
		t.Fatalf("timed out %v hits %d", r.TimedOut, stat(p, "hits"))
	}
	if d := time.Since(start); d >= 30*time.Second { // the grandchild's own 30 s, not a speed bound
		t.Fatalf("took %v after a 300ms timeout: the run waited for the grandchild", d)
	}
	b, _ := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	poll(t, 5*time.Second, "grandchild gone", func() bool { return testutil.ProcessGone(pid) })
}

func TestPoolSessionWarm(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "cat", Dir: dir, Env: testEnv(dir), Prewarm: PrewarmOn, Stdin: []byte("x")}
	p.Warm(spec)
	waitIdle(t, p, 1)
	p.Warm(spec) // already warm: no second process
	if r := p.Run(context.Background(), spec); string(r.Stdout) != "x" || stat(p, "hits") != 1 {
		t.Fatalf("stdout %q hits %d", r.Stdout, stat(p, "hits"))
	}
	if n := stat(p, "spawned"); n > 2 {
		t.Fatalf("spawned %d", n)
	}
}

func TestPoolCloseKillsEverything(t *testing.T) {
	dir := t.TempDir()
	p := NewPool(PoolOptions{})
	for i := range 3 {
		p.Run(context.Background(), ProcSpec{Command: "cat; : " + strconv.Itoa(i), Dir: dir, Env: testEnv(dir), Prewarm: PrewarmOn})
	}
	pids := waitIdle(t, p, 3)
	p.Close()
	for _, pid := range pids {
		if !testutil.ProcessGone(pid) {
			t.Errorf("pid %d alive after Close", pid)
		}
	}
	if r := p.Run(context.Background(), ProcSpec{Command: "echo ok", Env: testEnv(dir), Prewarm: PrewarmOn}); string(r.Stdout) != "ok\n" {
		t.Fatalf("run after close: %q", r.Stdout)
	}
}

// TestPoolNoLeaks runs many events through one warm key and checks the daemon side:
// file descriptors and child processes stay bounded.
func TestPoolNoLeaks(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "cat >/dev/null", Dir: dir, Env: testEnv(dir), Prewarm: PrewarmOn, Stdin: []byte(`{"a":1}`)}
	p.Run(context.Background(), spec)
	waitIdle(t, p, 1)
	fds0 := countFDs(t)
	n := 1000
	if testing.Short() {
		n = 100
	}
	for i := range n {
		if r := p.Run(context.Background(), spec); r.ExitCode != 0 {
			t.Fatalf("event %d: %+v", i, r)
		}
	}
	waitIdle(t, p, 1)
	poll(t, 5*time.Second, "children settle", func() bool { return len(children(t)) == 1 })
	if fds := countFDs(t); fds > fds0+2 {
		t.Fatalf("fds %d → %d after %d events", fds0, fds, n)
	}
	if hits := stat(p, "hits"); hits < uint64(n)/2 {
		t.Fatalf("only %d of %d events were warm", hits, n)
	}
}

func countFDs(t testing.TB) int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc")
	}
	return len(es)
}

func TestPoolNoPrewarm(t *testing.T) {
	dir := t.TempDir()
	p := newTestPool(t, PoolOptions{NoPrewarm: true})
	spec := ProcSpec{Command: "cat", Dir: dir, Env: testEnv(dir), Prewarm: PrewarmOn, Stdin: []byte("x")}
	p.Warm(spec)
	for range 2 {
		if r := p.Run(context.Background(), spec); string(r.Stdout) != "x" {
			t.Fatalf("stdout %q", r.Stdout)
		}
	}
	// A refill is counted as starting the moment an event releases its key.
	if n, m := stat(p, "spawned"), stat(p, "starting"); n != 0 || m != 0 {
		t.Fatalf("spawned %d, starting %d with NoPrewarm", n, m)
	}
	w := workerSpec(t, dir)
	answer(t, runEvent(p, w, `{}`))
}

// children lists this process's child processes (zombies included).
func children(t testing.TB) []testutil.Proc {
	kids, err := testutil.Children(os.Getpid())
	if err != nil {
		t.Skip("no /proc")
	}
	return kids
}
