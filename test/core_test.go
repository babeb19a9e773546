package test

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/testutil"
)

// settings builds a settings file with one PreToolUse group on matcher Bash.
func preToolUse(hooks ...map[string]any) string {
	hs := make([]any, len(hooks))
	for i, h := range hooks {
		hs[i] = h
	}
	b, _ := json.Marshal(map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "Bash", "hooks": hs}},
	}})
	return string(b)
}

func cmdHook(command string) map[string]any {
	return map[string]any{"type": "command", "command": command}
}

func bashPayload(e *Env, command string) string {
	return e.Payload("PreToolUse", map[string]any{
		"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "d"}, "tool_use_id": "toolu_1",
	})
}

func hso(t *testing.T, r Result) map[string]any {
	t.Helper()
	m, _ := r.JSON(t)["hookSpecificOutput"].(map[string]any)
	if m == nil {
		t.Fatalf("no hookSpecificOutput in %q", r.Stdout)
	}
	return m
}

func TestPreToolUseScenarios(t *testing.T) {
	tests := []struct {
		name  string
		hooks []map[string]any
		check func(t *testing.T, r Result, res *protocol.Result)
	}{
		{"allow", []map[string]any{cmdHook(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"ok"}}'`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				if h := hso(t, r); h["permissionDecision"] != "allow" || r.Code != 0 {
					t.Fatalf("got %v exit %d", h, r.Code)
				}
			}},
		{"deny via JSON", []map[string]any{cmdHook(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no rm"}}'`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				h := hso(t, r)
				if h["permissionDecision"] != "deny" || h["permissionDecisionReason"] != "no rm" {
					t.Fatalf("got %v", h)
				}
				if res.Permission.Source != "hook" || res.Permission.Hook == nil || res.Permission.Hook.File == "" {
					t.Fatalf("permission provenance: %+v", res.Permission)
				}
			}},
		{"block via exit 2", []map[string]any{cmdHook(`echo "dangerous" >&2; exit 2`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				// Claude Code shows the model "[<command>]: <stderr>" for an exit-2 block.
				h := hso(t, r)
				reason, _ := h["permissionDecisionReason"].(string)
				if h["permissionDecision"] != "deny" || !strings.HasPrefix(reason, `[echo "dangerous" >&2; exit 2]: dangerous`) {
					t.Fatalf("got %v", h)
				}
			}},
		{"JSON deny on exit 1 is honoured", []map[string]any{cmdHook(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R1"}}'; exit 1`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				if h := hso(t, r); h["permissionDecision"] != "deny" || h["permissionDecisionReason"] != "R1" {
					t.Fatalf("got %v", h)
				}
			}},
		{"exit 1 plain stderr is a non-blocking error", []map[string]any{cmdHook(`echo oops >&2; exit 1`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				if r.Code != 0 || strings.Contains(r.Stdout, "deny") {
					t.Fatalf("non-blocking error blocked: exit %d %q", r.Code, r.Stdout)
				}
				if res.Hooks[0].Outcome != protocol.OutcomeError || !strings.Contains(res.Hooks[0].Error, "oops") {
					t.Fatalf("outcome %+v", res.Hooks[0])
				}
			}},
		{"additionalContext from two hooks in configuration order", []map[string]any{
			cmdHook(`sleep 0.3; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx-A"}}'`),
			cmdHook(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"ctx-B"}}'`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				// The first hook finishes last; the merged context is still A then B.
				if h := hso(t, r); h["additionalContext"] != "ctx-A\nctx-B" {
					t.Fatalf("context %q", h["additionalContext"])
				}
			}},
		{"updatedInput", []map[string]any{cmdHook(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"ls -la"}}}'`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				h := hso(t, r)
				in, _ := h["updatedInput"].(map[string]any)
				if in["command"] != "ls -la" {
					t.Fatalf("updatedInput %v", h)
				}
			}},
		{"continue false", []map[string]any{cmdHook(`echo '{"continue":false,"stopReason":"halt"}'`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				m := r.JSON(t)
				if m["continue"] != false || m["stopReason"] != "halt" || !res.PreventContinuation {
					t.Fatalf("got %v", m)
				}
			}},
		{"missing command is an error, never an allow", []map[string]any{
			cmdHook(`/nonexistent/guard.sh`),
			{"type": "command", "command": "/nonexistent/exec-form", "args": []any{"x"}}},
			func(t *testing.T, r Result, res *protocol.Result) {
				if strings.Contains(r.Stdout, `"allow"`) {
					t.Fatalf("missing hook produced an allow: %q", r.Stdout)
				}
				for _, h := range res.Hooks {
					if h.Outcome != protocol.OutcomeError {
						t.Fatalf("missing hook outcome %+v", h)
					}
				}
				if res.Permission != nil && res.Permission.Decision == "allow" {
					t.Fatal("permission allow from a hook that never ran")
				}
			}},
		{"garbage stdout is ignored", []map[string]any{cmdHook(`echo 'not json {'; echo '{broken'`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				if r.Code != 0 || strings.TrimSpace(r.Stdout) != "" {
					t.Fatalf("garbage rendered: exit %d %q", r.Code, r.Stdout)
				}
			}},
		{"1 MiB stdout", []map[string]any{cmdHook(`head -c 1048576 /dev/zero | tr '\0' 'x'; echo`)},
			func(t *testing.T, r Result, res *protocol.Result) {
				if r.Code != 0 || res.Hooks[0].Outcome == protocol.OutcomeTimeout {
					t.Fatalf("1 MiB output: exit %d %+v", r.Code, res.Hooks[0])
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewEnv(t)
			e.WriteSettings("project", preToolUse(tt.hooks...))
			e.Start()
			r := e.Hookc(bashPayload(e, "echo hi"))
			res, _ := e.Event(bashPayload(e, "echo hi"))
			tt.check(t, r, res)
		})
	}
}

// TestHooksRunInParallel: two hooks that each wait for the other to have started can only
// both finish if they run at the same time; run one after the other, the first would wait
// out its timeout. The property holds on a machine of any speed (it used to be "two 1 s
// hooks take < 1.9 s").
func TestHooksRunInParallel(t *testing.T) {
	e := NewEnv(t)
	a, b := filepath.Join(e.Root, "a-started"), filepath.Join(e.Root, "b-started")
	barrier := func(mine, other string) map[string]any {
		h := cmdHook("touch " + mine + "; while [ ! -e " + other + " ]; do sleep 0.05; done")
		h["timeout"] = 30
		return h
	}
	e.WriteSettings("project", preToolUse(barrier(a, b), barrier(b, a)))
	e.Start()
	res, _ := e.Event(bashPayload(e, "echo hi"))
	if len(res.Hooks) != 2 {
		t.Fatalf("hooks %+v", res.Hooks)
	}
	for _, h := range res.Hooks {
		if h.Outcome != protocol.OutcomeOK {
			t.Fatalf("hook %s: outcome %q (%s): the hooks did not run in parallel", h.Hook.Command, h.Outcome, h.Error)
		}
	}
}

func TestTimeoutKillsHookAndGrandchildren(t *testing.T) {
	e := NewEnv(t)
	pidFile := filepath.Join(e.Root, "grandchild.pid")
	e.WriteSettings("project", preToolUse(map[string]any{
		"type": "command", "timeout": 1,
		"command": `sleep 30 & echo $! > ` + pidFile + `; sleep 30`,
	}))
	e.Start()
	r := e.Hookc(bashPayload(e, "echo hi"))
	// The bound is the hook's own 30 s sleep, not the machine's speed.
	if r.Took >= 30*time.Second {
		t.Fatalf("a 1 s timeout took %v: the hook was not killed at its timeout", r.Took)
	}
	if r.Code != 0 || strings.Contains(r.Stdout, "allow") {
		t.Fatalf("timeout rendered as exit %d %q (a timeout is no decision)", r.Code, r.Stdout)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	Eventually(t, 5*time.Second, "grandchild to be killed", func() bool {
		return testutil.ProcessGone(pid)
	})
	res, _ := e.Event(bashPayload(e, "echo hi"))
	if res.Hooks[0].Outcome != protocol.OutcomeTimeout {
		t.Fatalf("outcome %+v", res.Hooks[0])
	}
}

func TestPlainTextContext(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", `{"hooks":{
		"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo plain-context"}]}],
		"SessionStart":[{"matcher":"startup","hooks":[{"type":"command","command":"echo session-context"}]}],
		"PostToolUse":[{"hooks":[{"type":"command","command":"echo not-context"}]}]}}`)
	e.Start()
	for ev, want := range map[string]string{"UserPromptSubmit": "plain-context", "SessionStart": "session-context"} {
		res, _ := e.Event(e.Payload(ev, map[string]any{"prompt": "hi", "source": "startup"}))
		if len(res.AdditionalContext) != 1 || strings.TrimSpace(res.AdditionalContext[0]) != want {
			t.Errorf("%s context %q, want %q", ev, res.AdditionalContext, want)
		}
	}
	res, _ := e.Event(e.Payload("PostToolUse", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "x"}, "tool_response": map[string]any{}}))
	if len(res.AdditionalContext) != 0 {
		t.Errorf("plain stdout became context on PostToolUse: %q", res.AdditionalContext)
	}
}

func TestUnknownEventAndMalformedRequests(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", preToolUse(cmdHook("true")))
	e.Start()

	_, err := e.Raw(&protocol.Request{Event: json.RawMessage(`{"hook_event_name":"NoSuchEvent","session_id":"s","cwd":"/"}`)})
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Code != protocol.CodeUnknownEvent || !strings.Contains(pe.Message, "NoSuchEvent") {
		t.Fatalf("unknown event: %v", err)
	}

	// Raw garbage, a wrong version, and an oversized line on one connection: each gets an
	// error frame and the connection (and daemon) keeps serving.
	conn, err := net.Dial("unix", e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	send := func(line string) *protocol.Frame {
		t.Helper()
		if _, err := conn.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		// Generous: the daemon judges a payload's size after decoding the line (escaping
		// does not count against max_request_bytes), which for the 16 MiB line below
		// takes seconds in a race-built daemon on a loaded machine.
		_ = conn.SetReadDeadline(time.Now().Add(90 * time.Second))
		l, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("no answer to %.40q: %v", line, err)
		}
		var f protocol.Frame
		if err := json.Unmarshal(l, &f); err != nil {
			t.Fatal(err)
		}
		return &f
	}
	for line, code := range map[string]string{
		`this is not json`:                                             protocol.CodeBadRequest,
		`{"v":99,"event":{}}`:                                          protocol.CodeUnsupportedVersion,
		`{"v":1,"event":{"hook_event_name":42}}`:                       protocol.CodeBadRequest,
		`{"v":1,"event":{"session_id":"no name"}}`:                     protocol.CodeBadRequest,
		`{"v":1,"op":"event","event":[1,2,3]}`:                         protocol.CodeBadRequest,
		`{"v":1,"event":{"hook_event_name":"Stop"}}x`:                  protocol.CodeBadRequest,
		`{"v":1,"event":{"hook_event_name":"Stop"},"event_text":"{}"}`: protocol.CodeBadRequest,
	} {
		f := send(line)
		if f.Type != protocol.FrameError || f.Error.Code != code {
			t.Errorf("%q: got %+v, want error %s", line, f, code)
		}
	}
	big := `{"v":1,"event":{"hook_event_name":"Stop","pad":"` + strings.Repeat("x", protocol.DefaultMaxRequestBytes) + `"}}`
	if f := send(big); f.Type != protocol.FrameError || f.Error.Code != protocol.CodeTooLarge {
		t.Errorf("oversized request: %+v", f)
	}
	// Still serving on the same connection.
	f := send(`{"v":1,"op":"ping"}`)
	if f.Type != protocol.FrameResult {
		t.Fatalf("ping after errors: %+v", f)
	}

	// hookc turns a refused event into a block with the reason, never an allow.
	r := e.Hookc(`{"hook_event_name":"NoSuchEvent","session_id":"s","cwd":"/"}`)
	if r.Code != 2 || !strings.Contains(r.Stderr, "NoSuchEvent") {
		t.Fatalf("hookc on unknown event: exit %d stderr %q", r.Code, r.Stderr)
	}
	r = e.Hookc(`garbage`)
	if r.Code != 2 {
		t.Fatalf("hookc on garbage: exit %d", r.Code)
	}
}

func TestFailSafeWhenDaemonIsDown(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("project", preToolUse(cmdHook(`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard"}}'`)))
	// No daemon: hookc runs the event in-process through `hookd run` and gets the same answer.
	r := e.Hookc(bashPayload(e, "rm -rf /"))
	if h := hso(t, r); h["permissionDecision"] != "deny" || h["permissionDecisionReason"] != "guard" {
		t.Fatalf("in-process fallback: %v", h)
	}
	// No daemon and no hookd binary: block with a reason.
	e.extraEnv = []string{"HOOKD_BIN=/nonexistent/hookd"}
	r = e.Hookc(bashPayload(e, "rm -rf /"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "hookd") {
		t.Fatalf("no daemon, no fallback: exit %d stderr %q", r.Code, r.Stderr)
	}
	// A fallback that crashes also blocks.
	broken := filepath.Join(e.Root, "broken-hookd")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\necho boom >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.extraEnv = []string{"HOOKD_BIN=" + broken}
	r = e.Hookc(bashPayload(e, "rm -rf /"))
	if r.Code != 2 || !strings.Contains(r.Stderr, "boom") {
		t.Fatalf("crashing fallback: exit %d stderr %q", r.Code, r.Stderr)
	}
	// The same answer from `hookd run` directly.
	rr := e.Hookd(bashPayload(e, "rm -rf /"), "run")
	if !strings.Contains(rr.Stdout, `"permissionDecision":"deny"`) {
		t.Fatalf("hookd run: %q %q", rr.Stdout, rr.Stderr)
	}
}

func TestSocketHygiene(t *testing.T) {
	e := NewEnv(t)
	e.Start()
	fi, err := os.Stat(e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	// A second daemon on the same socket refuses to start.
	cmd := exec.Command(bins.hookd, append(e.DaemonArgs(), "serve")...)
	cmd.Env = e.BaseEnv()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already") {
		t.Fatalf("second daemon: err %v output %s", err, out)
	}
	// Clean shutdown removes the socket.
	e.Stop()
	if _, err := os.Stat(e.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left behind: %v", err)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	e := NewEnv(t)
	// A dead daemon's socket file: nobody answers it.
	ln, err := net.Listen("unix", e.Socket)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	e.Start()
}

func TestOtherUsersAreRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to connect as another uid") // CI runs as root
	}
	e := NewEnv(t)
	e.Start()
	// Loosen the file modes so that only the SO_PEERCRED check stands in the way.
	if err := os.Chmod(filepath.Dir(e.Socket), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.Socket, 0o666); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bins.hookc, "--stream", "--fallback=false")
	cmd.Env = []string{"HOOKD_SOCKET=" + e.Socket, "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(e.Payload("Stop", nil))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "forbidden") && !strings.Contains(string(out), "may not use this daemon") {
		t.Fatalf("uid 65534 was not refused: %s", out)
	}
	Eventually(t, 10*time.Second, "the refusal to be logged", func() bool {
		return strings.Contains(e.Logs(), "connection from another user refused")
	})
}

func TestStatusAndValidate(t *testing.T) {
	e := NewEnv(t)
	e.WriteSettings("user", `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":"ok?"},{"type":"command","command":"true"}]}]}}`)
	e.WriteSettings("project", `{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"true"}]}]}}`)
	v := e.Hookd("", "validate")
	if v.Code == 0 || !strings.Contains(v.Stdout, "settings.json") || !strings.Contains(v.Stdout, "PreToolUse[0].matcher") {
		t.Fatalf("validate: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	e.Start()
	// The Stop event reports the prompt hook as not run, runs the command hook.
	res, frames := e.Event(e.Payload("Stop", map[string]any{"stop_hook_active": false}))
	var notRun int
	for _, f := range frames {
		if f.Type == protocol.FrameMessage && f.Kind == protocol.MsgNotRun {
			notRun++
		}
	}
	if notRun != 1 || len(res.Hooks) != 2 {
		t.Fatalf("not-run frames %d, hooks %+v", notRun, res.Hooks)
	}
	st := e.Hookd("", "status")
	for _, want := range []string{"invalid", "PreToolUse[0].matcher", "not run by hookd", "prompt", "HOOKS RUN"} {
		if !strings.Contains(st.Stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, st.Stdout)
		}
	}
}

// Exec form (args) runs without a shell, so Claude Code substitutes its placeholders
// itself, literally (spec §3.2): a project path with spaces stays one argument.
func TestExecFormPlaceholders(t *testing.T) {
	e := NewEnv(t)
	e.Project = filepath.Join(e.Home, "my proj")
	if err := os.MkdirAll(filepath.Join(e.Project, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(e.Root, "args.txt")
	e.Script("args.sh", "#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done > "+out+"\n")
	e.WriteSettings("project", `{"hooks":{"Stop":[{"hooks":[{"type":"command",
		"command":"${CLAUDE_PROJECT_DIR}/hooks/args.sh","args":["${CLAUDE_PROJECT_DIR}/x","$HOME","plain"]}]}]}}`)
	e.Start()
	res, _ := e.Event(e.Payload("Stop", map[string]any{"stop_hook_active": false}))
	if res.Hooks[0].Outcome != protocol.OutcomeOK {
		t.Fatalf("exec-form hook: %+v", res.Hooks[0])
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := "[" + e.Project + "/x]\n[$HOME]\n[plain]\n"
	if string(b) != want {
		t.Fatalf("args = %q, want %q", b, want)
	}
}

// hookd's own configuration can make a guard's timeout deny instead of letting the call
// through (Claude Code: a timeout is no decision).
func TestOnTimeoutDeny(t *testing.T) {
	e := NewEnv(t)
	e.Config = filepath.Join(e.Root, "hookd.json")
	WriteAtomic(t, e.Config, `{"hooks":[{"match":"sleep 5 # guard","on_timeout":"deny"}]}`)
	e.WriteSettings("project", `{"hooks":{
		"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"sleep 5 # guard","timeout":1},{"type":"command","command":"sleep 5 # other","timeout":1}]}],
		"Stop":[{"hooks":[{"type":"command","command":"sleep 5 # guard","timeout":1}]}]}}`)
	e.Start()
	r := e.Hookc(bashPayload(e, "echo hi"))
	h := hso(t, r)
	if reason, _ := h["permissionDecisionReason"].(string); h["permissionDecision"] != "deny" || !strings.Contains(reason, "timed out") {
		t.Fatalf("guard timeout with on_timeout deny: %v", h)
	}
	res, _ := e.Event(e.Payload("Stop", map[string]any{"stop_hook_active": false}))
	if res.Block == nil || !strings.Contains(res.Block.Reason, "on_timeout") {
		t.Fatalf("Stop guard timeout: block %+v", res.Block)
	}
	// The hook without the setting still times out to no decision.
	var outcomes []string
	res, _ = e.Event(bashPayload(e, "echo hi"))
	for _, o := range res.Hooks {
		outcomes = append(outcomes, o.Hook.Command+"="+o.Outcome)
	}
	if got := strings.Join(outcomes, " "); got != "sleep 5 # guard=blocked sleep 5 # other=timeout" {
		t.Fatalf("outcomes %q", got)
	}
}
