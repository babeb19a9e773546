package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/reaper"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/testutil"
)

// Black-box tests of issue 7: prewarmed processes and persistent workers, through a real
// daemon.

// runnerStats returns status[section] ("prewarm" or "workers").
func runnerStats(e *Env, section string) map[string]float64 {
	e.t.Helper()
	m, _ := e.Status()[section].(map[string]any)
	out := map[string]float64{}
	for k, v := range m {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

// waitWarm waits until the daemon holds n idle prewarmed processes.
func waitWarm(t *testing.T, e *Env, n int) {
	t.Helper()
	Eventually(t, 20*time.Second, fmt.Sprintf("%d idle prewarmed processes", n), func() bool {
		s := runnerStats(e, "prewarm")
		return s["idle"] == float64(n) && s["starting"] == 0
	})
}

func (e *Env) writeConfig(v any) {
	e.t.Helper()
	b, _ := json.Marshal(v)
	e.Config = filepath.Join(e.Root, "hookd-config.json")
	if err := os.WriteFile(e.Config, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *Env) reload() {
	e.t.Helper()
	if _, err := e.Raw(&protocol.Request{Op: protocol.OpReload}); err != nil {
		e.t.Fatal(err)
	}
}

// needNode fails the test without node: CI has it (a skip would hide the test).
func needNode(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node not installed: this test needs it")
	}
}

func needPython(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
}

// dumpHook is an unmodified-looking Python hook that records what it was given: its stdin,
// environment, working directory and arguments, in files named by its pid.
const dumpHook = `import json, os, sys
data = sys.stdin.buffer.read()
out = sys.argv[1]
pid = str(os.getpid())
with open(os.path.join(out, "stdin." + pid), "wb") as f:
    f.write(data)
with open(os.path.join(out, "env." + pid), "w") as f:
    f.write("\n".join(sorted(k + "=" + v for k, v in os.environ.items())))
with open(os.path.join(out, "cwd." + pid), "w") as f:
    f.write(os.getcwd() + "\n" + json.dumps(sys.argv[1:]))
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "seen " + str(len(data))}}))
`

// takeDump moves the single dump written since the last call into its own directory and
// returns stdin, env and cwd.
func takeDump(t *testing.T, dir string, n int) (stdin, env, cwd string) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "stdin.*"))
	if len(m) != 1 {
		t.Fatalf("want one new dump, found %v", m)
	}
	pid := strings.TrimPrefix(filepath.Base(m[0]), "stdin.")
	dst := filepath.Join(dir, "event"+strconv.Itoa(n))
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		src := filepath.Join(dir, name+"."+pid)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Rename(src, filepath.Join(dst, name))
		return string(b)
	}
	return read("stdin"), read("env"), read("cwd")
}

// TestPrewarmedHookGetsWhatAColdOneGets: the same event sent to a hook three times —
// cold (first sight of the key), prewarmed, and with prewarming switched off in hookd's
// configuration — reaches the hook with byte-identical stdin, environment, directory and
// arguments. The payload is larger than a pipe's atomic write to exercise the streaming
// path.
func TestPrewarmedHookGetsWhatAColdOneGets(t *testing.T) {
	needPython(t)
	payloads := map[string]string{}
	envs := map[string]string{}
	cwds := map[string]string{}
	// Three worlds: forked from the Python zygote (python3 SCRIPT), served by the prewarm
	// pool (an interpreter option the zygote does not model, -W, sends the hook there), and
	// cold (prewarm off in hookd's configuration).
	for _, mode := range []string{"zygote", "pool", "cold"} {
		e := NewEnv(t)
		dump := filepath.Join(e.Root, "dump")
		if err := os.Mkdir(dump, 0o755); err != nil {
			t.Fatal(err)
		}
		hook := e.Script("dump.py", dumpHook)
		command := "python3 " + hook + " " + dump
		if mode == "pool" {
			command = "python3 -W default " + hook + " " + dump
		}
		if mode == "cold" {
			e.writeConfig(map[string]any{"hooks": []any{map[string]any{"match": command, "prewarm": false}}})
		}
		e.WriteSettings("project", preToolUse(cmdHook(command)))
		e.Start()
		payload := bashPayload(e, "cat <<'EOF'\n"+strings.Repeat("héllo wörld\n", 20000)+"EOF")
		for i := range 3 {
			res, _ := e.Event(payload)
			if len(res.AdditionalContext) != 1 || res.AdditionalContext[0] != "seen "+strconv.Itoa(len(payload)) {
				t.Fatalf("%s event %d: context %q hooks %+v", mode, i, res.AdditionalContext, res.Hooks)
			}
			stdin, env, cwd := takeDump(t, dump, i)
			if stdin != payload {
				t.Fatalf("%s event %d: hook read %d bytes, sent %d (differ)", mode, i, len(stdin), len(payload))
			}
			if i == 0 {
				payloads[mode], envs[mode], cwds[mode] = stdin, env, cwd
			} else if env != envs[mode] || cwd != cwds[mode] {
				t.Fatalf("%s event %d differs from event 0:\nenv %q\nvs  %q\ncwd %q vs %q", mode, i, env, envs[mode], cwd, cwds[mode])
			}
			switch mode {
			case "pool":
				waitWarm(t, e, 1)
			case "zygote":
				waitZygote(t, e)
			}
		}
		s, z := runnerStats(e, "prewarm"), runnerStats(e, "zygote")
		switch mode {
		case "pool":
			if s["hits"] != 2 || s["misses"] != 1 || z["forked"] != 0 {
				t.Fatalf("pool: hits %v misses %v forked %v, want 2, 1 and 0", s["hits"], s["misses"], z["forked"])
			}
		case "zygote":
			// The first event runs cold while the zygote starts; the pool starts nothing.
			if z["forked"] != 2 || z["ran_cold"] != 1 || s["spawned"] != 0 {
				t.Fatalf("zygote: forked %v ran cold %v pool spawned %v, want 2, 1 and 0", z["forked"], z["ran_cold"], s["spawned"])
			}
		case "cold":
			if s["hits"] != 0 || s["spawned"] != 0 || z["forked"] != 0 {
				t.Fatalf("prewarm off: hits %v spawned %v forked %v", s["hits"], s["spawned"], z["forked"])
			}
		}
		e.Stop()
	}
	// Two daemons, two scratch worlds: compare with the paths of each world factored out.
	norm := func(s string) string {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, os.TempDir()) {
				continue // the scratch root and socket differ between the two worlds
			}
			lines = append(lines, l)
		}
		return strings.Join(lines, "\n")
	}
	for _, mode := range []string{"zygote", "pool"} {
		if norm(envs[mode]) != norm(envs["cold"]) {
			t.Fatalf("environment differs between %s and cold:\n%s\n---\n%s", mode, envs[mode], envs["cold"])
		}
		if len(payloads[mode]) != len(payloads["cold"]) {
			t.Fatal("payload sizes differ between the worlds")
		}
	}
}

// TestPrewarmHonoursSettingsEdit: with a process prewarmed for a hook, an edit of the
// settings that touches the hook takes effect on the very next event.
func TestPrewarmHonoursSettingsEdit(t *testing.T) {
	needPython(t)
	e := NewEnv(t)
	hook := e.Script("ctx.py", "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'additionalContext': ' '.join(sys.argv[1:])}}))\n")
	// -W default: a command the zygote does not model, so this exercises the pool.
	e.WriteSettings("project", preToolUse(cmdHook("python3 -W default "+hook+" v1")))
	e.Start()
	payload := bashPayload(e, "ls")
	ctx := func() string {
		res, _ := e.Event(payload)
		return strings.Join(res.AdditionalContext, "|")
	}
	if got := ctx(); got != "v1" {
		t.Fatalf("first event: %q", got)
	}
	waitWarm(t, e, 1)

	// 1. The command changes.
	e.WriteSettings("project", preToolUse(cmdHook("python3 -W default "+hook+" v2")))
	e.reload()
	if got := ctx(); got != "v2" {
		t.Fatalf("after editing the command: %q (a process prewarmed for the old command answered)", got)
	}
	waitWarm(t, e, 1)
	Eventually(t, 10*time.Second, "the old command's process discarded", func() bool { return runnerStats(e, "prewarm")["discarded"] == 1 })

	// 2. Only the handler's other fields change: the prewarmed process would behave the
	// same, but the rule is any change touching the hook discards it.
	h := cmdHook("python3 -W default " + hook + " v2")
	h["timeout"] = 30
	e.WriteSettings("project", preToolUse(h))
	e.reload()
	before := runnerStats(e, "prewarm")
	if got := ctx(); got != "v2" {
		t.Fatalf("after editing the timeout: %q", got)
	}
	after := runnerStats(e, "prewarm")
	if after["hits"] != before["hits"] || after["discarded"] != before["discarded"]+1 {
		t.Fatalf("a settings edit touching the hook did not discard its process: before %v after %v", before, after)
	}
	waitWarm(t, e, 1)
	if got := ctx(); got != "v2" || runnerStats(e, "prewarm")["hits"] != after["hits"]+1 {
		t.Fatalf("not warm again after the edit: %q %v", got, runnerStats(e, "prewarm"))
	}
}

// TestPrewarmHonoursScriptEdit: editing the hook's script — even keeping its size and
// putting its mtime back — takes effect on the very next event.
func TestPrewarmHonoursScriptEdit(t *testing.T) {
	needPython(t)
	e := NewEnv(t)
	body := func(v string) string {
		return "import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'additionalContext': '" + v + "'}}))\n"
	}
	hook := e.Script("ver.py", body("v1"))
	fi, _ := os.Stat(hook)
	e.WriteSettings("project", preToolUse(cmdHook("python3 -W default "+hook))) // the pool, not the zygote
	e.Start()
	payload := bashPayload(e, "ls")
	ctx := func() string {
		res, _ := e.Event(payload)
		return strings.Join(res.AdditionalContext, "|")
	}
	if got := ctx(); got != "v1" {
		t.Fatalf("first: %q", got)
	}
	waitWarm(t, e, 1)
	if got := ctx(); got != "v1" {
		t.Fatalf("warm: %q", got)
	}
	waitWarm(t, e, 1)
	if err := os.WriteFile(hook, []byte(body("v2")), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(hook, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := ctx(); got != "v2" {
		t.Fatalf("after the script edit: %q (the prewarmed process of the old script answered)", got)
	}
	waitWarm(t, e, 1)
	hits := runnerStats(e, "prewarm")["hits"]
	if got := ctx(); got != "v2" || runnerStats(e, "prewarm")["hits"] != hits+1 {
		t.Fatalf("warm after the edit: %q", got)
	}
}

// TestPrewarmNoLeaks sends 300 events through a prewarmed hook and checks that the
// daemon's file descriptors and child processes stay bounded and no zombie is left.
// TestPrewarmNoLeaksSoak is the same with 10,000 events (about three minutes on 2 cores),
// run by make soak.
func TestPrewarmNoLeaks(t *testing.T) { prewarmNoLeaks(t, 300) } // a leak per event shows as hundreds

func TestPrewarmNoLeaksSoak(t *testing.T) {
	testutil.RequireSoak(t)
	prewarmNoLeaks(t, 10000)
}

func prewarmNoLeaks(t *testing.T, n int) {
	e := NewEnv(t)
	const hook = "cat >/dev/null"
	e.writeConfig(map[string]any{"hooks": []any{map[string]any{"match": hook, "prewarm": true}}})
	e.WriteSettings("project", preToolUse(cmdHook(hook)))
	e.Start()
	pid := e.daemon.Process.Pid
	payload := bashPayload(e, "ls")
	e.Event(payload)
	waitWarm(t, e, 1)
	fds0 := countFDs(t, pid)

	const clients = 4
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := protocol.Dial(context.Background(), e.Socket)
			if err != nil {
				errs <- err
				return
			}
			defer cl.Close()
			for i := c; i < n; i += clients {
				req := &protocol.Request{EventText: payload, ProjectDir: e.Project, Env: e.BaseEnv(), Options: protocol.Options{ResultOnly: true}}
				f, err := cl.Do(context.Background(), req, nil)
				if err == nil && (f.Result == nil || len(f.Result.Hooks) != 1 || f.Result.Hooks[0].Outcome != protocol.OutcomeOK) {
					err = fmt.Errorf("event %d: %+v", i, f.Result)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := runnerStats(e, "prewarm")
	Eventually(t, 20*time.Second, "the pool to settle", func() bool {
		s = runnerStats(e, "prewarm")
		return s["starting"] == 0 && s["idle"] >= 1
	})
	var kids []testutil.Proc
	Eventually(t, 20*time.Second, "children to settle at the idle processes", func() bool {
		kids = children(t, pid)
		return len(kids) == int(s["idle"])
	})
	for _, k := range kids {
		if k.State == "Z" {
			t.Errorf("zombie child %d", k.PID)
		}
	}
	if fds := countFDs(t, pid); fds > fds0+3*int(s["idle"]) {
		t.Errorf("daemon fds %d → %d after %d events", fds0, fds, n)
	}
	// Four clients, two processes per key: some events find both in use and run cold.
	if s["hits"]+s["misses"] != float64(n+1) || s["hits"] < float64(n)/2 {
		t.Errorf("only %v of %d events were served warm: %v", s["hits"], n, s)
	}
	t.Logf("%d events: fds %d → %d, children %d, %v", n, fds0, countFDs(t, pid), len(kids), s)
	// Stopping the daemon kills the idle processes.
	e.Stop()
	for _, k := range kids {
		Eventually(t, 10*time.Second, "prewarmed process gone after stop", func() bool { return testutil.ProcessGone(k.PID) })
	}
}

func countFDs(t *testing.T, pid int) int {
	t.Helper()
	es, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Skipf("cannot count fds: %v", err)
	}
	return len(es)
}

// crashWorker answers events and exits mid-event when the command contains "crash".
const crashWorker = `import json, os, sys
for line in sys.stdin:
    ev = json.loads(line)
    cmd = ev.get("tool_input", {}).get("command", "")
    if "crash" in cmd:
        print("crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    out = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
           "permissionDecisionReason": "worker pid " + str(os.getpid())}}
    sys.stdout.write(json.dumps({"exit_code": 0, "stdout": json.dumps(out), "stderr": ""}) + "\n")
    sys.stdout.flush()
`

// TestWorkerCrashIsAnErrorAndRestarts: a persistent worker that dies mid-event gives that
// event an error outcome — not an allow — and is restarted for the next one.
func TestWorkerCrashIsAnErrorAndRestarts(t *testing.T) {
	needPython(t)
	e := NewEnv(t)
	worker := e.Script("worker.py", crashWorker)
	command := "python3 " + worker
	e.writeConfig(map[string]any{"hooks": []any{map[string]any{"match": command, "worker": true}}})
	e.WriteSettings("project", preToolUse(cmdHook(command)))
	e.Start()
	reason := func(res *protocol.Result) string {
		if res.Permission == nil {
			return ""
		}
		return res.Permission.Reason
	}
	res, _ := e.Event(bashPayload(e, "ls"))
	if res.Permission == nil || res.Permission.Decision != "allow" || !strings.HasPrefix(reason(res), "worker pid ") {
		t.Fatalf("first event: %+v", res.Permission)
	}
	pid1 := reason(res)
	res2, _ := e.Event(bashPayload(e, "ls -l"))
	if reason(res2) != pid1 {
		t.Fatalf("second event served by %q, first by %q: not one persistent process", reason(res2), pid1)
	}

	res, _ = e.Event(bashPayload(e, "crash now"))
	if res.Permission != nil && res.Permission.Decision == "allow" {
		t.Fatalf("a crashed worker's event was allowed: %+v", res.Permission)
	}
	if len(res.Hooks) != 1 || res.Hooks[0].Outcome != protocol.OutcomeError || !strings.Contains(res.Hooks[0].Error, "exit status 3") {
		t.Fatalf("crash outcome: %+v", res.Hooks)
	}
	// Rendered for Claude Code: no allow on stdout either.
	r := e.Hookc(bashPayload(e, "crash again"))
	if strings.Contains(r.Stdout, `"allow"`) {
		t.Fatalf("hookc rendered an allow for a crashed worker: %q", r.Stdout)
	}
	Eventually(t, 20*time.Second, "worker restarted", func() bool { return runnerStats(e, "workers")["started"] >= 3 })
	res, _ = e.Event(bashPayload(e, "ls"))
	if res.Permission == nil || res.Permission.Decision != "allow" || reason(res) == pid1 {
		t.Fatalf("after restart: %+v (first worker %q)", res.Permission, pid1)
	}
	if s := runnerStats(e, "workers"); s["crashes"] != 2 {
		t.Fatalf("worker stats %v", s)
	}
}

// TestShippedWorkers runs configs/examples/worker.py and worker.js as workers.
func TestShippedWorkers(t *testing.T) {
	for _, w := range []struct{ interp, file string }{{"python3", "worker.py"}, {"node", "worker.js"}} {
		t.Run(w.file, func(t *testing.T) {
			if _, err := exec.LookPath(w.interp); err != nil {
				t.Skipf("%s not installed", w.interp)
			}
			e := NewEnv(t)
			command := w.interp + " " + filepath.Join(repoRoot(), "configs", "examples", w.file)
			e.writeConfig(map[string]any{"hooks": []any{map[string]any{"match": command, "worker": true}}})
			e.WriteSettings("project", preToolUse(cmdHook(command)))
			e.Start()
			for range 3 {
				res, _ := e.Event(bashPayload(e, "rm -rf build"))
				if res.Permission == nil || res.Permission.Decision != "deny" || !strings.Contains(res.Permission.Reason, w.file) {
					t.Fatalf("rm -rf: %+v %+v", res.Permission, res.Hooks)
				}
				res, _ = e.Event(bashPayload(e, "ls"))
				if res.Permission != nil || len(res.Hooks) != 1 || res.Hooks[0].Outcome != protocol.OutcomeOK {
					t.Fatalf("ls: %+v %+v", res.Permission, res.Hooks)
				}
			}
			if s := runnerStats(e, "workers"); s["started"] != 1 || s["events"] != 6 {
				t.Fatalf("worker stats %v", s)
			}
		})
	}
}

// TestSessionStartPrewarms: a session's first tool call finds its Python hook forked from
// the zygote SessionStart started (side-effect free: no line of the hook ran before its
// event), although SessionStart's environment lacks variables the PreToolUse carries; a
// hook that would need a prewarmed process of its own gets none before its first event.
func TestSessionStartPrewarms(t *testing.T) {
	needPython(t)
	e := NewEnv(t)
	hook := e.Script("guard.py", "import json, sys\njson.load(sys.stdin)\n")
	other := e.Script("other.py", "import json, sys\njson.load(sys.stdin)\n")
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{cmdHook("python3 " + hook)}}},
		"Stop":       []any{map[string]any{"hooks": []any{cmdHook("python3 -W default " + other)}}},
	}})
	e.WriteSettings("project", string(b))
	e.Start()
	// Claude Code sets CLAUDE_ENV_FILE for SessionStart hooks only; hookc forwards it.
	env := append(e.BaseEnv(), "CLAUDE_ENV_FILE="+filepath.Join(e.Root, "env-file"))
	if _, err := e.Raw(&protocol.Request{EventText: e.Payload("SessionStart", map[string]any{"source": "startup"}), ProjectDir: e.Project, Env: env}); err != nil {
		t.Fatal(err)
	}
	waitZygote(t, e)
	// Claude Code adds CLAUDE_EFFORT for PreToolUse (test/e2e/FINDINGS.md), not SessionStart.
	frames, err := e.Raw(&protocol.Request{EventText: bashPayload(e, "ls"), ProjectDir: e.Project, Env: append(e.BaseEnv(), "CLAUDE_EFFORT=medium")})
	if err != nil || len(frames) == 0 {
		t.Fatal(err)
	}
	if r := frames[len(frames)-1].Result; r == nil || len(r.Hooks) != 1 || r.Hooks[0].Outcome != protocol.OutcomeOK {
		t.Fatalf("%+v", frames[len(frames)-1])
	}
	if z := runnerStats(e, "zygote"); z["forked"] != 1 || z["ran_cold"] != 0 {
		t.Fatalf("first PreToolUse after SessionStart was not forked: %v\n%v\n%s", z, e.Status()["extra"], e.Logs())
	}
	if s := runnerStats(e, "prewarm"); s["spawned"] != 0 || s["starting"] != 0 {
		t.Fatalf("a process was prewarmed for a hook whose event has not fired: %v", s)
	}
}

// TestRunFallbackSpeaksWorkerProtocol: `hookd run` (hookc's fallback when the daemon is
// down) runs a worker-mode hook with the worker protocol too, and prewarms nothing.
func TestRunFallbackSpeaksWorkerProtocol(t *testing.T) {
	needPython(t)
	e := NewEnv(t)
	command := "python3 " + filepath.Join(repoRoot(), "configs", "examples", "worker.py")
	e.writeConfig(map[string]any{"hooks": []any{map[string]any{"match": command, "worker": true}}})
	e.WriteSettings("project", preToolUse(cmdHook(command)))
	r := e.Hookd(bashPayload(e, "rm -rf build"), "run")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"deny"`) || !strings.Contains(r.Stdout, "worker.py") {
		t.Fatalf("hookd run with a worker hook: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
}

// children lists the processes whose parent is pid.
func children(t *testing.T, pid int) []testutil.Proc {
	t.Helper()
	kids, err := testutil.Children(pid)
	if err != nil {
		t.Skip("no /proc")
	}
	// Not a hook: the daemon's group reaper (daemon/runner/reaper) is its child too.
	out := kids[:0]
	for _, k := range kids {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(k.PID) + "/cmdline")
		if !strings.Contains(string(cmdline), reaper.Arg) {
			out = append(out, k)
		}
	}
	return out
}

// waitZygote waits until the daemon runs a ready Python zygote.
func waitZygote(t *testing.T, e *Env) {
	t.Helper()
	Eventually(t, 30*time.Second, "a ready Python zygote", func() bool {
		return runnerStats(e, "zygote")["zygotes"] >= 1
	})
}

// TestSessionStartPrewarmsNode: a Node hook that is safe by construction is prewarmed at
// the session's start, so the session's first tool call finds it warm, with the
// environment that call brings (CLAUDE_EFFORT, which SessionStart lacks); the same when
// the session's first event to reach hookd is a UserPromptSubmit (no SessionStart
// forwarder). A Node hook that does not visibly read stdin, and a shell hook, are not.
func TestSessionStartPrewarmsNode(t *testing.T) {
	needNode(t)
	for _, first := range []string{"SessionStart", "UserPromptSubmit"} {
		t.Run(first, func(t *testing.T) {
			e := NewEnv(t)
			seen := filepath.Join(e.Root, "seen")
			guard := e.Script("guard.js", "const fs=require('fs');const ev=JSON.parse(fs.readFileSync(0,'utf8'));fs.writeFileSync("+strconv.Quote(seen)+",'effort='+process.env.CLAUDE_EFFORT+' tool='+ev.tool_name)\n")
			quiet := e.Script("quiet.js", "console.log('never reads its input')\n")
			b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
				"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": []any{cmdHook("node " + guard)}}},
				"Stop":       []any{map[string]any{"hooks": []any{cmdHook("node " + quiet), cmdHook("cat >/dev/null")}}},
			}})
			e.WriteSettings("project", string(b))
			e.Start()
			// Claude Code 2.1.332's order: CLAUDE_EFFORT, where an event has it, right before
			// CLAUDE_PROJECT_DIR, the last.
			tail := []string{"CLAUDE_PID=4242", "CLAUDE_PROJECT_DIR=" + e.Project}
			if _, err := e.Raw(&protocol.Request{EventText: e.Payload(first, map[string]any{"source": "startup", "prompt": "hi"}), ProjectDir: e.Project, Env: append(e.BaseEnv(), tail...)}); err != nil {
				t.Fatal(err)
			}
			Eventually(t, 30*time.Second, "the guard's spare started", func() bool {
				s := runnerStats(e, "prewarm")
				return s["spawned"] == 1 && s["starting"] == 0
			})
			frames, err := e.Raw(&protocol.Request{EventText: bashPayload(e, "ls"), ProjectDir: e.Project, Env: append(append(e.BaseEnv(), tail[0], "CLAUDE_EFFORT=medium"), tail[1:]...)})
			if err != nil || len(frames) == 0 {
				t.Fatal(err)
			}
			r := frames[len(frames)-1].Result
			if r == nil || len(r.Hooks) != 1 || r.Hooks[0].Outcome != protocol.OutcomeOK {
				t.Fatalf("%+v", frames[len(frames)-1])
			}
			if s := runnerStats(e, "prewarm"); s["hits"] != 1 || s["misses"] != 0 {
				t.Fatalf("the session's first PreToolUse did not find its spare: %v\n%s", s, e.Logs())
			}
			if got, _ := os.ReadFile(seen); string(got) != "effort=medium tool=Bash" {
				t.Fatalf("the prewarmed guard saw %q", got)
			}
		})
	}
}
