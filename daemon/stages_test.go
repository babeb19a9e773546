package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// The engine's composition, stage by stage, with a scripted runner (milliseconds, no
// processes): the black-box tests in test/ drive the same paths through real binaries.

// TestStageList pins the engine's pipeline: the stages and their order are the
// architecture (docs/architecture.md), not an accident of one function's layout.
func TestStageList(t *testing.T) {
	var names []string
	for _, s := range stages {
		names = append(names, s.name)
	}
	want := "decode locate observe plan run merge contribute resolve finish record"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("stages %q, want %q", got, want)
	}
}

// claudePreToolUse is a Claude Code PreToolUse of `ls` from hookc (CLAUDECODE=1).
func (w *world) claudePreToolUse(command string) *protocol.Request {
	payload, _ := json.Marshal(map[string]any{
		"session_id": "s1", "transcript_path": filepath.Join(w.home, ".claude", "projects", "p", "s1.jsonl"),
		"cwd": w.project, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": command}, "tool_use_id": "toolu_1",
	})
	return &protocol.Request{V: protocol.Version, Event: payload, Harness: protocol.HarnessClaudeCode,
		ProjectDir: w.project, Env: []string{"PATH=/usr/bin:/bin", "CLAUDECODE=1"}}
}

// TestRenderOnce: no stage before finish makes a wire answer — the outcome is a domain
// value until then — and the answer finish renders carries the decision after permission
// rules, not the hooks' (a stale render would say allow).
func TestRenderOnce(t *testing.T) {
	w := newWorld(t, map[string]string{"./.claude/settings.json": `{"permissions":{"deny":["Bash(rm:*)"]}}`,
		"./.claude/hookd.json": `{"hookd":{"version":1},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"allow-all"}]}]}}`})
	w.run.out["allow-all"] = stdout(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`)
	x := &event{ctx: context.Background(), req: w.claudePreToolUse("rm -rf /"), caller: Caller{Client: "test"}, emit: func(*protocol.Frame) {}}
	for _, s := range stages {
		if s.name == "finish" && x.res != nil {
			t.Fatalf("an answer exists before finish: %+v", x.res)
		}
		if err := s.run(w.engine, x); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	if x.out.HookPermission.Decision != "allow" || x.out.Permission.Decision != "deny" {
		t.Fatalf("outcome: hooks %+v, final %+v", x.out.HookPermission, x.out.Permission)
	}
	if !strings.Contains(string(x.res.Output), `"permissionDecision":"deny"`) || x.d.Result != x.res {
		t.Errorf("answer %s; recorded %p, returned %p", x.res.Output, x.d.Result, x.res)
	}
}

// TestFailClosedEveryHarness: the two fail-closed paths — hooks cut short at shutdown, a
// decision the audit log could not record — give the same answer for every harness,
// built by one builder and rendered for the harness, with the decision's ids and mode.
func TestFailClosedEveryHarness(t *testing.T) {
	// In hookd's file beside ~/.claude/settings.json (`hookd install claude-code`), so
	// hookd runs the hook for Claude Code's events too.
	hook := map[string]string{
		"~/.claude/hookd.json": `{"hookd":{"version":1},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"slow"}]}]}}`,
	}
	for _, c := range []struct {
		harness string
		req     func(*world) *protocol.Request
		check   func(t *testing.T, res *protocol.Result, reason string)
	}{
		{"claude-code", func(w *world) *protocol.Request { return w.claudePreToolUse("ls") }, func(t *testing.T, res *protocol.Result, reason string) {
			if res.ExitCode != 2 || !strings.Contains(res.Stderr, reason) || res.Permission == nil || res.Permission.Decision != "deny" {
				t.Errorf("exit %d stderr %q permission %+v", res.ExitCode, res.Stderr, res.Permission)
			}
		}},
		{"codex", (*world).codexPreToolUse, func(t *testing.T, res *protocol.Result, reason string) {
			if res.ExitCode != 2 || !strings.Contains(res.Stderr, reason) || len(res.Output) != 0 {
				t.Errorf("exit %d stderr %q output %s", res.ExitCode, res.Stderr, res.Output)
			}
		}},
		{"gemini", (*world).geminiBeforeTool, func(t *testing.T, res *protocol.Result, reason string) {
			var out struct{ Decision, Reason string }
			if json.Unmarshal(res.Output, &out) != nil || out.Decision != "deny" || !strings.Contains(out.Reason, reason) || res.ExitCode != 0 {
				t.Errorf("output %s exit %d", res.Output, res.ExitCode)
			}
		}},
	} {
		t.Run(c.harness, func(t *testing.T) {
			w := newWorld(t, hook)
			w.run.block["slow"] = true
			ctx, cancel := context.WithCancelCause(context.Background())
			done := make(chan *protocol.Result, 1)
			go func() {
				res, _ := w.engine.Handle(ctx, c.req(w), Caller{Client: "test"}, nil)
				done <- res
			}()
			waitFor(t, func() bool { return len(w.run.commands()) == 1 })
			cancel(ErrShutdown)
			shutdown := <-done
			if d := w.audit.last(t); d.NotDelivered != "shutdown" || d.Result != shutdown {
				t.Errorf("shutdown record: not delivered %q, result recorded %v", d.NotDelivered, d.Result == shutdown)
			}

			w2 := newWorld(t, hook)
			w2.audit.err = errors.New("disk full")
			audited := w2.handle(c.req(w2))

			for name, res := range map[string]*protocol.Result{"hookd stopped": shutdown, "disk full": audited} {
				if res.Mode != "parallel" || res.Revision == "" || res.DecisionID == "" || res.Event != "PreToolUse" {
					t.Errorf("%s: mode %q revision %q id %q event %q", name, res.Mode, res.Revision, res.DecisionID, res.Event)
				}
				if wantH := map[string]string{"codex": "codex", "gemini": "gemini"}[c.harness]; res.Harness != wantH {
					t.Errorf("%s: harness %q, want %q", name, res.Harness, wantH)
				}
				c.check(t, res, name)
			}
		})
	}
}

// TestHarnessOwnHooks: a harness's own hooks (compiled from its hook file) run on the
// payload as the harness sent it, their output is read in its format, and they sit beside
// Claude Code's hooks, which get the Claude-shaped payload.
func TestHarnessOwnHooks(t *testing.T) {
	w := newWorld(t, map[string]string{
		"~/.claude/settings.json": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"claude-hook"}]}]}}`,
		"~/.gemini/hookd.json":    `{"hooks":{"BeforeTool":[{"matcher":"run_shell_.*","hooks":[{"type":"command","command":"gemini-hook","name":"g"}]}]}}`,
		"./.gemini/settings.json": `{"hooksConfig":{"disabled":[]}}`,
	})
	// Gemini's own format: a top-level decision.
	w.run.out["gemini-hook"] = stdout(`{"decision":"deny","reason":"gemini says no"}`)
	res := w.handle(w.geminiBeforeTool())
	var out struct{ Decision, Reason string }
	if json.Unmarshal(res.Output, &out) != nil || out.Decision != "deny" || out.Reason != "gemini says no" {
		t.Errorf("answer %s", res.Output)
	}
	if got := string(w.run.stdin["gemini-hook"]); !strings.Contains(got, `"hook_event_name":"BeforeTool"`) || !strings.Contains(got, `"run_shell_command"`) {
		t.Errorf("gemini hook's stdin %s", got)
	}
	if got := string(w.run.stdin["claude-hook"]); !strings.Contains(got, `"hook_event_name":"PreToolUse"`) || !strings.Contains(got, `"tool_name":"Bash"`) {
		t.Errorf("claude hook's stdin %s", got)
	}
	d := w.audit.last(t)
	var ids []string
	for _, p := range d.Parts {
		ids = append(ids, p.Hook.Source)
	}
	if strings.Join(ids, " ") != "user gemini-user" {
		t.Errorf("the record's hooks come from %v", ids)
	}

	// Switched off in Gemini's project settings: the watcher's reload applies it.
	w.write("./.gemini/settings.json", `{"hooksConfig":{"disabled":["g"]}}`)
	w.engine.Store().Reload(context.Background(), "test")
	before := len(w.run.commands())
	w.handle(w.geminiBeforeTool())
	if got := w.run.commands()[before:]; strings.Join(got, " ") != "claude-hook" {
		t.Errorf("after disabling g, ran %v", got)
	}
}

// TestRecordNamesNotRunHooks: a matched hook hookd does not run (a prompt hook needs the
// harness's model) is reported in the answer and in the record, with the reason.
func TestRecordNamesNotRunHooks(t *testing.T) {
	w := newWorld(t, map[string]string{"~/.claude/settings.json": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
		{"type":"command","command":"probe"},{"type":"prompt","prompt":"is it safe?"}]}]}}`})
	var frames []string
	res, err := w.engine.Handle(context.Background(), w.codexPreToolUse(), Caller{Client: "test"}, func(f *protocol.Frame) {
		frames = append(frames, string(f.Type)+"/"+f.Kind)
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := auditRecord(w.audit.last(t))
	if len(rec.Hooks) != 2 || rec.Hooks[0].Outcome != "ok" || rec.Hooks[1].Outcome != protocol.OutcomeNotRun || rec.Hooks[1].Type != "prompt" || rec.Hooks[1].Error == "" {
		t.Errorf("recorded hooks %+v", rec.Hooks)
	}
	if len(res.Hooks) != 2 || res.Hooks[1].Outcome != protocol.OutcomeNotRun {
		t.Errorf("answer's hooks %+v", res.Hooks)
	}
	if got := strings.Join(frames, " "); !strings.Contains(got, "message/not_run") {
		t.Errorf("frames %s", got)
	}
}

// A project's own harness files are listed when the harness's directory exists as the
// project loads; a directory created later is found by the next event of that harness,
// which lists the project's files again before taking its snapshot.
func TestHarnessDirAppearsLater(t *testing.T) {
	w := newWorld(t, nil)
	w.handle(w.claudePreToolUse("ls")) // loads the project: no .codex there
	w.write("./.codex/hookd.json", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"project-codex-hook"}]}]}}`)
	w.handle(w.codexPreToolUse())
	if got := w.run.commands(); strings.Join(got, " ") != "project-codex-hook" {
		t.Errorf("ran %v", got)
	}
}

// TestAgentFileAppearsLater: a subagent file created in a directory that held none is
// listed at the next SessionStart (Claude Code reads agents when a session starts), so
// under the managed drop-in its hooks run from then on instead of running nowhere.
func TestAgentFileAppearsLater(t *testing.T) {
	w := newWorld(t, nil)
	agentHooks := func() (n int) {
		for _, h := range w.engine.store.Snapshot(w.project).HandlersFor("PreToolUse") {
			if h.Frontmatter != nil && h.Frontmatter.Name == "reviewer" {
				n++
			}
		}
		return n
	}
	w.handle(w.claudePreToolUse("ls")) // loads the project: no .claude/agents there
	w.write("./.claude/agents/rev.md", "---\nname: reviewer\ndescription: Reviews\nhooks:\n"+
		"  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: agent-guard\n---\nYou review.\n")
	w.handle(w.claudePreToolUse("ls"))
	if n := agentHooks(); n != 0 {
		t.Fatalf("before any SessionStart the new agent file is not listed yet (docs/differences.md), but has %d hooks", n)
	}
	w.handle(w.raw("SessionStart", map[string]any{"source": "startup"}))
	if n := agentHooks(); n != 1 {
		t.Errorf("after SessionStart: the new agent has %d PreToolUse hooks in the snapshot, want 1", n)
	}
}
