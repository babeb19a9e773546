package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hookd/hookd/protocol"
)

// Table tests of the stages one at a time: each case runs an event through the stages up
// to the one under test (with the scripted runner: no processes) and checks what that
// stage left in the event.

// through runs x through the stages up to and including last.
func (w *world) through(x *event, last string) *event {
	w.t.Helper()
	if x.ctx == nil {
		x.ctx = context.Background()
	}
	if x.emit == nil {
		x.emit = func(*protocol.Frame) {}
	}
	x.caller = Caller{Client: "test"}
	for _, s := range stages {
		if err := s.run(w.engine, x); err != nil {
			w.t.Fatalf("%s: %v", s.name, err)
		}
		if s.name == last {
			return x
		}
	}
	w.t.Fatalf("no stage %q", last)
	return nil
}

// withEnv returns req with more environment variables.
func withEnv(req *protocol.Request, kv ...string) *protocol.Request {
	req.Env = append(append([]string(nil), req.Env...), kv...)
	return req
}

// planSummary is a plan in one line: each batch as "mode event(commands)", the payload's
// event name saying whose shape the hooks get ("+translate": their output is read in the
// harness's format), then the async and not-run hooks and the budget.
func planSummary(t *testing.T, p hookPlan) string {
	t.Helper()
	var parts []string
	for _, b := range p.Batches {
		var cmds []string
		for _, h := range b.Handlers {
			cmds = append(cmds, h.Command)
		}
		mode := "parallel"
		if b.Sequential {
			mode = "sequential"
		}
		var payload struct {
			Event string `json:"hook_event_name"`
		}
		if err := json.Unmarshal(b.Payload, &payload); err != nil {
			t.Fatalf("batch payload %q: %v", b.Payload, err)
		}
		s := fmt.Sprintf("%s %s(%s)", mode, payload.Event, strings.Join(cmds, ","))
		if b.Translate != nil {
			s += "+translate"
		}
		parts = append(parts, s)
	}
	list := func(label string, hs []string) {
		if len(hs) > 0 {
			parts = append(parts, label+":"+strings.Join(hs, ","))
		}
	}
	var async, notRun []string
	for _, h := range p.Async {
		async = append(async, h.Command)
	}
	for _, h := range p.NotRun {
		notRun = append(notRun, string(h.Type)+" "+h.Prompt)
	}
	list("async", async)
	list("not run", notRun)
	if p.Budget > 0 {
		parts = append(parts, "budget "+p.Budget.String())
	}
	return strings.Join(parts, "; ")
}

// TestPlanStage: which hooks run, in which batches, on whose payload — decided before
// anything runs.
func TestPlanStage(t *testing.T) {
	pre := func(hooks string) string { // a PreToolUse Bash group
		return `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[` + hooks + `]}]}}`
	}
	cmd := func(c string) string { return `{"type":"command","command":"` + c + `"}` }
	gemini := `{"hooks":{"BeforeTool":[{"matcher":"run_shell_command","hooks":[{"type":"command","command":"g"}]}]}}`
	for _, c := range []struct {
		name  string
		files map[string]string
		mode  string // hookd's configured mode ("" parallel)
		req   func(*world) *protocol.Request
		want  string
	}{
		{"a raw client: every settings file's hooks, one batch",
			map[string]string{"~/.claude/settings.json": pre(cmd("a") + "," + cmd("b"))}, "",
			func(w *world) *protocol.Request { return withEnv(w.claudePreToolUse("ls"), "CLAUDECODE=0") },
			"parallel PreToolUse(a,b)"},
		{"from Claude Code: hookd runs hookd.json's hooks, not settings.json's (Claude Code does)",
			map[string]string{"~/.claude/settings.json": pre(cmd("cc-runs")),
				"~/.claude/hookd.json": `{"hookd":{"version":1},` + pre(cmd("h"))[1:]}, "",
			func(w *world) *protocol.Request { return w.claudePreToolUse("ls") },
			"parallel PreToolUse(h)"},
		{"hookd's mode sequential makes the settings batch a pipeline",
			map[string]string{"~/.claude/settings.json": pre(cmd("a") + "," + cmd("b"))}, "sequential",
			(*world).codexPreToolUse,
			"sequential PreToolUse(a,b); parallel PreToolUse()+translate"},
		{"codex: the settings batch on Claude's payload, then Codex's own on Codex's",
			map[string]string{"~/.claude/settings.json": pre(cmd("a")), "~/.codex/hookd.json": pre(cmd("x"))}, "",
			(*world).codexPreToolUse,
			"parallel PreToolUse(a); parallel PreToolUse(x)+translate"},
		{"gemini: its own hooks get BeforeTool; a sequential group makes its batch sequential",
			map[string]string{"~/.claude/settings.json": pre(cmd("a")),
				"~/.gemini/hookd.json": strings.Replace(gemini, `"hooks":[{"type"`, `"sequential":true,"hooks":[{"type"`, 1)}, "",
			(*world).geminiBeforeTool,
			"parallel PreToolUse(a); sequential BeforeTool(g)+translate"},
		{"async hooks start beside the batches; prompt hooks are reported, not run",
			map[string]string{"~/.claude/settings.json": pre(cmd("a") + `,{"type":"command","command":"bg","async":true},{"type":"prompt","prompt":"safe?"}`)}, "",
			(*world).codexPreToolUse,
			"parallel PreToolUse(a); parallel PreToolUse()+translate; async:bg; not run:prompt safe?"},
		{"SessionEnd: the shared budget, raised to the largest hook timeout",
			map[string]string{"~/.claude/settings.json": `{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"bye","timeout":7}]}]}}`}, "",
			func(w *world) *protocol.Request { return w.raw("SessionEnd", map[string]any{"reason": "exit"}) },
			"parallel SessionEnd(bye); budget 7s"},
		{"SessionEnd: the caller's CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS wins",
			map[string]string{"~/.claude/settings.json": `{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"bye","timeout":7}]}]}}`}, "",
			func(w *world) *protocol.Request {
				return withEnv(w.raw("SessionEnd", map[string]any{"reason": "exit"}), "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS=250")
			},
			"parallel SessionEnd(bye); budget 250ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.files)
			w.engine.cfg.Mode = c.mode
			x := w.through(&event{req: c.req(w)}, "plan")
			if got := planSummary(t, x.plan); got != c.want {
				t.Errorf("plan\n got %s\nwant %s", got, c.want)
			}
			if len(w.run.commands()) != 0 {
				t.Errorf("something ran before the run stage: %v", w.run.commands())
			}
		})
	}
}

// raw is an event of a raw client (hookd runs every settings file's hooks).
func (w *world) raw(name string, fields map[string]any) *protocol.Request {
	m := map[string]any{"session_id": "s1", "cwd": w.project, "hook_event_name": name}
	for k, v := range fields {
		m[k] = v
	}
	payload, _ := json.Marshal(m)
	return &protocol.Request{V: protocol.Version, Event: payload, ProjectDir: w.project, Env: []string{"PATH=/usr/bin:/bin"}}
}

// TestMergeStage: each batch is merged by its own rule, then the batches by the parallel
// rule; what did not run and the async hooks join the outcome's hooks.
func TestMergeStage(t *testing.T) {
	decide := func(d, rewrite string) string {
		s := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + d + `","permissionDecisionReason":"` + d + ` by hook"`
		if rewrite != "" {
			s += `,"updatedInput":{"command":"` + rewrite + `"}`
		}
		return s + "}}"
	}
	geminiRewrite := func(cmd string) string { // Gemini's own format
		return `{"decision":"allow","hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"` + cmd + `"}}}`
	}
	settings2 := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"a"},{"type":"command","command":"b"}]}]}}`
	gemini := func(seq bool, cmds ...string) string {
		var hs []string
		for _, c := range cmds {
			hs = append(hs, `{"type":"command","command":"`+c+`"}`)
		}
		return fmt.Sprintf(`{"hooks":{"BeforeTool":[{"matcher":"run_shell_command","sequential":%v,"hooks":[%s]}]}}`, seq, strings.Join(hs, ","))
	}
	for _, c := range []struct {
		name     string
		files    map[string]string
		out      map[string]string
		req      func(*world) *protocol.Request
		decision string // the merged hook decision
		input    string // the merged rewrite
		warning  string // a warning that must be there ("" none about updatedInput)
	}{
		{"parallel batch: the first rewrite in configuration order wins, the other is reported",
			map[string]string{"~/.claude/settings.json": settings2},
			map[string]string{"a": decide("allow", "ls -a"), "b": decide("allow", "ls -b")},
			(*world).codexPreToolUse, "allow", `{"command":"ls -a"}`, "#PreToolUse[0].hooks[1] ignored"},
		{"sequential batch alone: the last rewrite counts, no conflict",
			map[string]string{"~/.gemini/hookd.json": gemini(true, "g1", "g2")},
			map[string]string{"g1": geminiRewrite("ls -1"), "g2": geminiRewrite("ls -2")},
			(*world).geminiBeforeTool, "allow", `{"command":"ls -2"}`, ""},
		{"parallel then sequential batch: across batches the parallel rule, settings first",
			map[string]string{"~/.claude/settings.json": settings2, "~/.gemini/hookd.json": gemini(true, "g1", "g2")},
			map[string]string{"a": decide("allow", "ls -a"), "g1": geminiRewrite("ls -1"), "g2": geminiRewrite("ls -2")},
			(*world).geminiBeforeTool, "allow", `{"command":"ls -a"}`, "ignored"},
		{"a deny in either batch beats an allow in the other",
			map[string]string{"~/.claude/settings.json": settings2, "~/.gemini/hookd.json": gemini(false, "g1")},
			map[string]string{"a": decide("allow", ""), "g1": `{"decision":"deny","reason":"g1 says no"}`},
			(*world).geminiBeforeTool, "deny", "", ""},
		{"attended session: an ask beats a defer",
			map[string]string{"~/.claude/settings.json": settings2},
			map[string]string{"a": decide("ask", ""), "b": decide("defer", "")},
			(*world).codexPreToolUse, "ask", "", ""},
		{"unattended Claude Code session: the defer reaches Claude Code",
			map[string]string{"~/.claude/settings.json": settings2},
			map[string]string{"a": decide("ask", ""), "b": decide("defer", "")},
			func(w *world) *protocol.Request {
				return withEnv(w.claudePreToolUse("ls"), "CLAUDECODE=0", "CLAUDE_CODE_SESSION_ATTENDED=0")
			}, "defer", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, c.files)
			for cmd, text := range c.out {
				w.run.out[cmd] = stdout(text)
			}
			x := w.through(&event{req: c.req(w)}, "merge")
			var got string
			if x.out.HookPermission != nil {
				got = x.out.HookPermission.Decision
			}
			if got != c.decision || string(x.out.UpdatedInput) != c.input {
				t.Errorf("merged decision %q input %s, want %q %s (warnings %q)", got, x.out.UpdatedInput, c.decision, c.input, x.out.Warnings)
			}
			conflict := ""
			for _, warn := range x.out.Warnings {
				if strings.Contains(warn, "conflicting updatedInput") {
					conflict = warn
				}
			}
			if (c.warning == "") != (conflict == "") || !strings.Contains(conflict, c.warning) {
				t.Errorf("updatedInput warning %q, want one containing %q", conflict, c.warning)
			}
			if x.res != nil {
				t.Errorf("merge rendered an answer")
			}
		})
	}

	// The outcome's hooks: those that ran, in plan order (settings, then Codex's own), then
	// the ones not run, then the async ones; the plan's warnings join the outcome's.
	w := newWorld(t, map[string]string{"~/.claude/settings.json": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
		{"type":"command","command":"bg","async":true},{"type":"prompt","prompt":"p"},{"type":"command","command":"a"}]}]}}`,
		"~/.codex/hookd.json": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x"}]}]}}`})
	x := w.through(&event{req: withEnv(w.codexPreToolUse(), "CODEX_HOME=/elsewhere")}, "merge")
	var hooks []string
	for _, h := range x.out.Hooks {
		hooks = append(hooks, h.Hook.Type+":"+h.Hook.Command+"="+h.Outcome)
	}
	if got := strings.Join(hooks, " "); got != "command:a=ok command:x=ok prompt:=not_run command:bg=async" {
		t.Errorf("outcome's hooks %s", got)
	}
	if len(x.out.Warnings) != 1 || !strings.Contains(x.out.Warnings[0], "CODEX_HOME /elsewhere is not hookd's") {
		t.Errorf("warnings %q, want the plan's CODEX_HOME warning", x.out.Warnings)
	}
}

// TestResolveStage: permission rules judge the tool call after the merge — a hook allow
// never bypasses a deny or ask rule; for harnesses that do not read Claude Code's rules
// their deny or ask is the answer, unless hookd's configuration opts that harness out
// (moved down from test/harnesses_test.go's TestHarnessRulesOptOut; the configuration
// key itself is configs' test).
func TestResolveStage(t *testing.T) {
	files := map[string]string{"~/.claude/settings.json": `{"permissions":{"deny":["Bash(rm *)"],"ask":["Bash(git push *)"]},
		"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"guard"}]}],
		"PermissionRequest":[{"matcher":"Bash","hooks":[{"type":"command","command":"guard"}]}]}}`}
	allow := func(rewrite string) string {
		s := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"`
		if rewrite != "" {
			s += `,"updatedInput":{"command":"` + rewrite + `"}`
		}
		return s + "}}"
	}
	codex := func(cmd string) func(*world) *protocol.Request {
		return func(w *world) *protocol.Request {
			r := w.codexPreToolUse()
			r.Event = []byte(strings.Replace(string(r.Event), `"command":"ls"`, `"command":"`+cmd+`"`, 1))
			return r
		}
	}
	gemini := func(cmd string) func(*world) *protocol.Request {
		return func(w *world) *protocol.Request {
			r := w.geminiBeforeTool()
			r.Event = []byte(strings.Replace(string(r.Event), `"command":"ls"`, `"command":"`+cmd+`"`, 1))
			return r
		}
	}
	claude := func(cmd string) func(*world) *protocol.Request {
		return func(w *world) *protocol.Request { return withEnv(w.claudePreToolUse(cmd), "CLAUDECODE=0") }
	}
	permissionRequest := func(w *world) *protocol.Request {
		return w.raw("PermissionRequest", map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf x"}})
	}
	for _, c := range []struct {
		name   string
		req    func(*world) *protocol.Request
		hook   string // the guard's output
		optOut bool   // hookd's configuration: codex's permission_rules false
		final  string // the outcome's permission ("" none)
		rule   string // the rules' own answer ("" none)
		byRule bool   // the final answer names the rule that decided it
	}{
		{"claude: a hook allow of rm is overridden by the deny rule", claude("rm -rf x"), allow(""), false, "deny", "deny", true},
		{"claude: the rewrite is judged, not the original", claude("ls"), allow("rm -rf x"), false, "deny", "deny", true},
		{"claude: no hook decision — the rule's answer is reported, Claude Code enforces it", claude("rm -rf x"), "", false, "", "deny", false},
		{"claude: an ask rule turns a hook allow into ask", claude("git push origin"), allow(""), false, "ask", "ask", true},
		{"claude: no rule, the hook's allow stands", claude("ls"), allow(""), false, "allow", "", false},
		{"codex: no hook decision — the deny rule is the answer", codex("rm -rf x"), "", false, "deny", "deny", true},
		{"codex: the ask rule is the answer", codex("git push origin"), "", false, "ask", "ask", true},
		{"codex opted out of the rules: nothing judged", codex("rm -rf x"), allow(""), true, "allow", "", false},
		{"gemini: codex's opt-out is codex's only — the deny rule is the answer", gemini("rm -rf x"), "", true, "deny", "deny", true},
		{"PermissionRequest: a plain allow answers the prompt, not rechecked", permissionRequest,
			`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`, false, "allow", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, files)
			if c.optOut {
				off := false
				w.engine.cfg.Harnesses.Codex.PermissionRules = &off
			}
			if c.hook != "" {
				w.run.out["guard"] = stdout(c.hook)
			}
			x := w.through(&event{req: c.req(w)}, "resolve")
			final, rule := "", ""
			if x.out.Permission != nil {
				final = x.out.Permission.Decision
			}
			if x.out.RuleAnswer != nil {
				rule = x.out.RuleAnswer.Decision
			}
			if final != c.final || rule != c.rule {
				t.Errorf("final %q rule answer %q, want %q %q (%+v)", final, rule, c.final, c.rule, x.out.Permission)
			}
			if got := final != "" && x.out.Permission.OverriddenBy != nil && x.out.Permission.Source == "rule"; got != c.byRule {
				t.Errorf("decided by a rule: %v, want %v (%+v)", got, c.byRule, x.out.Permission)
			}
			if c.byRule && c.hook != "" && (x.d.Resolution == nil || x.out.HookPermission.Decision != "allow") {
				t.Errorf("the record lacks the resolution or the hook's own allow: %+v %+v", x.d.Resolution, x.out.HookPermission)
			}
		})
	}
}

// TestFinishStage: finish makes the one answer — the rendered outcome, or the fail-closed
// answer when the event can block and its hooks were cut short — stamped with the
// decision's ids, and says in the record why an answer was not delivered.
func TestFinishStage(t *testing.T) {
	files := map[string]string{"~/.claude/settings.json": `{"hooks":{
		"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"h"}]}],
		"Notification":[{"hooks":[{"type":"command","command":"h"}]}]}}`}
	notification := func(w *world) *protocol.Request {
		return w.raw("Notification", map[string]any{"message": "hi", "notification_type": "idle_prompt"})
	}
	pre := func(w *world) *protocol.Request { return withEnv(w.claudePreToolUse("ls"), "CLAUDECODE=0") }
	for _, c := range []struct {
		name        string
		req         func(*world) *protocol.Request
		cause       error // the request's context ends with it after the hooks ran (nil: it does not)
		exit        int
		stderr      string
		notDelivery string
	}{
		{"answered", pre, nil, 0, "", ""},
		{"caller gone: fails closed, recorded as not delivered", pre, ErrCallerGone, 2, "hookd: the caller disconnected", "caller_disconnected"},
		{"shutdown: fails closed", pre, ErrShutdown, 2, "hookd: hookd stopped before the hooks finished", "shutdown"},
		{"shutdown on an event that cannot block: rendered, recorded as not delivered", notification, ErrShutdown, 0, "", "shutdown"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, files)
			w.run.out["h"] = stdout(`{"systemMessage":"from h"}`)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			x := w.through(&event{ctx: ctx, req: c.req(w)}, "resolve")
			if c.cause != nil {
				cancel(c.cause)
			}
			if err := w.engine.finish(x); err != nil {
				t.Fatal(err)
			}
			res := x.res
			if res.ExitCode != c.exit || !strings.HasPrefix(res.Stderr, c.stderr) || x.d.NotDelivered != c.notDelivery {
				t.Errorf("exit %d stderr %q not delivered %q; want %d %q… %q", res.ExitCode, res.Stderr, x.d.NotDelivered, c.exit, c.stderr, c.notDelivery)
			}
			if res.DecisionID != x.d.ID || res.Revision != x.snap.Revision || res.Revision == "" || res.Mode != "parallel" || x.d.Result != res {
				t.Errorf("answer not stamped with the decision: id %q revision %q mode %q recorded %v", res.DecisionID, res.Revision, res.Mode, x.d.Result == res)
			}
			if len(res.Hooks) != 1 || res.Hooks[0].Hook.Command != "h" {
				t.Errorf("answer's hooks %+v: the hook that ran must be reported, answered or not", res.Hooks)
			}
			if c.cause == nil && strings.Join(res.SystemMessages, "") != "from h" {
				t.Errorf("rendered answer lost the hook's systemMessage: %+v", res)
			}
		})
	}
}

// TestRecordStage: every decision is recorded; one that cannot be recorded is not
// allowed where the event can block (it fails closed, through finish), and is answered
// as rendered where it cannot.
func TestRecordStage(t *testing.T) {
	files := map[string]string{"~/.claude/settings.json": `{"hooks":{
		"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"h"}]}],
		"UserPromptSubmit":[{"hooks":[{"type":"command","command":"h"}]}],
		"Notification":[{"hooks":[{"type":"command","command":"h"}]}]}}`}
	allow := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`
	for _, c := range []struct {
		name   string
		req    func(*world) *protocol.Request
		fail   bool
		exit   int
		denied bool
	}{
		{"recorded: the hook's allow stands", func(w *world) *protocol.Request { return withEnv(w.claudePreToolUse("ls"), "CLAUDECODE=0") }, false, 0, false},
		{"not recorded, PreToolUse: denied", func(w *world) *protocol.Request { return withEnv(w.claudePreToolUse("ls"), "CLAUDECODE=0") }, true, 2, true},
		{"not recorded, UserPromptSubmit: blocked", func(w *world) *protocol.Request {
			return w.raw("UserPromptSubmit", map[string]any{"prompt": "hi"})
		}, true, 2, false},
		{"not recorded, Notification cannot block: answered", func(w *world) *protocol.Request {
			return w.raw("Notification", map[string]any{"message": "hi", "notification_type": "idle_prompt"})
		}, true, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, files)
			w.run.out["h"] = stdout(allow)
			if c.fail {
				w.audit.err = errors.New("disk full")
			}
			x := w.through(&event{req: c.req(w)}, "record")
			if x.res.ExitCode != c.exit || (c.exit == 2) != strings.Contains(x.res.Stderr, "could not be recorded in the audit log: disk full") {
				t.Errorf("exit %d stderr %q, want exit %d", x.res.ExitCode, x.res.Stderr, c.exit)
			}
			if denied := x.res.Permission != nil && x.res.Permission.Decision == "deny"; denied != c.denied {
				t.Errorf("permission %+v, denied %v want %v", x.res.Permission, denied, c.denied)
			}
			if got := w.engine.counters.auditFailures.Load(); (got == 1) != c.fail {
				t.Errorf("audit failures counted %d", got)
			}
			if !c.fail && w.audit.last(t).Result != x.res {
				t.Errorf("the record's answer is not the one returned")
			}
		})
	}
}

// TestSeams: the observers watch every event that reaches its hooks, in order, before
// the plan, and never an event refused before them; contributors add to the outcome
// before the rules and the render. (Session-scoped features plug in here: issue 23.)
func TestSeams(t *testing.T) {
	w := newWorld(t, map[string]string{"~/.claude/settings.json": `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"h"}]}]}}`})
	w.run.out["h"] = stdout(`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"from h"}}`)
	var seen []string
	w.engine.observers = append(w.engine.observers,
		func(_ *engine, x *event) { seen = append(seen, "first:"+x.ev.Name+":"+fmt.Sprint(len(x.plan.Batches))) },
		func(_ *engine, x *event) { seen = append(seen, "second:"+x.h.SessionID) })
	w.engine.contributors = append(w.engine.contributors, func(_ *engine, x *event) {
		if x.res != nil || x.out == nil {
			t.Errorf("contributor called after the render or before the merge")
		}
		x.out.AddContext([]string{"contributed"})
	})
	res := w.handle(w.raw("UserPromptSubmit", map[string]any{"prompt": "hi"}))
	if got := strings.Join(seen, " "); got != "first:UserPromptSubmit:0 second:s1" {
		t.Errorf("observers saw %q", got)
	}
	if got := strings.Join(res.AdditionalContext, "|"); got != "contributed|from h" {
		t.Errorf("answer's context %q", got)
	}

	// Refused before its hooks (decode set a failure): observed by nobody, nothing planned.
	seen = nil
	x := &event{req: w.raw("UserPromptSubmit", map[string]any{"prompt": "hi"})}
	w.through(x, "locate")
	x.failure = "refused"
	for _, s := range stages[2:] {
		if err := s.run(w.engine, x); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 0 || len(x.plan.Batches) != 0 || x.res.ExitCode != 2 {
		t.Errorf("refused event: observed %q, batches %d, exit %d", seen, len(x.plan.Batches), x.res.ExitCode)
	}
}
