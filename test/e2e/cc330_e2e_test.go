//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/test/claudeapi"
)

// viaSocket checks the raw-socket path against the same daemon: every payload hookc
// forwarded for event in the hookd run is sent again straight to hookd's socket (the
// protocol, no hookc), and the result must say what the run showed: a deny or block made
// by the failed hook's onFailure (via "on_failure", naming it), or no block at all.
func viaSocket(event string, wantBlock bool) func(t *testing.T, native, hookd *obs) {
	return func(t *testing.T, _, hookd *obs) {
		files, _ := filepath.Glob(filepath.Join(hookd.root, "payloads", event+"-*.json"))
		if len(files) == 0 {
			t.Fatalf("raw socket: no %s payload reached hookc in the hookd run", event)
		}
		for _, f := range files {
			payload, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			c, err := protocol.Dial(ctx, filepath.Join(hookd.root, "s.sock"))
			if err != nil {
				cancel()
				t.Fatalf("raw socket: %v", err)
			}
			final, err := c.Do(ctx, &protocol.Request{Event: payload, ProjectDir: filepath.Join(hookd.root, "proj")}, nil)
			c.Close()
			cancel()
			if err != nil || final.Result == nil {
				t.Fatalf("raw socket %s: %v %+v", event, err, final)
			}
			res := final.Result
			via, hookID, reason := "", "", ""
			switch {
			case res.Permission != nil && res.Permission.Decision == "deny":
				via, reason = res.Permission.Via, res.Permission.Reason
				if res.Permission.Hook != nil {
					hookID = res.Permission.Hook.ID
				}
			case res.Block != nil:
				via, reason = res.Block.Via, res.Block.Reason
				if res.Block.Hook != nil {
					hookID = res.Block.Hook.ID
				}
			}
			blocked := via != "" || reason != ""
			if blocked != wantBlock {
				t.Fatalf("raw socket %s: blocked=%v (reason %q), want %v", event, blocked, reason, wantBlock)
			}
			if wantBlock && (via != "on_failure" || hookID == "" || !strings.Contains(reason, `blocking because onFailure is "block"`)) {
				t.Fatalf("raw socket %s: via %q hook %q reason %q: want an onFailure block naming the hook", event, via, hookID, reason)
			}
		}
	}
}

func monitor(cmd string) claudeapi.Turn {
	return claudeapi.Turn{ToolName: "Monitor", ToolInput: map[string]any{"command": cmd, "description": "watch"}}
}

// Scenarios for what changed between Claude Code 2.1.241 and 2.1.330 (docs/differences.md,
// "Claude Code 2.1.241 – 2.1.330"): each runs natively and through hookd and must agree.
func init() {
	block := func(h hook) hook { h.OnFailure = "block"; return h }
	scenarios = append(scenarios,
		// onFailure (2.1.295): a failed guard blocks where the event can block.
		&scenario{Name: "onfailure-missing-script", Doc: "onFailure block: a PreToolUse hook that cannot start refuses the call",
			Hooks:  []hook{block(hook{Name: "missing", Event: "PreToolUse", Matcher: "Bash", Command: "/nonexistent/guard.sh"})},
			Script: []claudeapi.Turn{bash("touch made-by-tool"), say("finished")},
			Allow:  []string{"Bash(touch *)"},
			Check:  viaSocket("PreToolUse", true)},
		&scenario{Name: "onfailure-timeout", Doc: "onFailure block: a PreToolUse hook that times out refuses the call",
			Hooks:  []hook{block(hook{Name: "a", Event: "PreToolUse", Matcher: "Bash", Timeout: 1, Body: "sleep 4\n" + emit(decide("allow", "late"), "", 0)})},
			Script: []claudeapi.Turn{bash("echo hi"), say("finished")},
			Counts: map[string]int{"a": 1},
			Check:  viaSocket("PreToolUse", true)},
		&scenario{Name: "onfailure-exit1", Doc: "onFailure block: a PreToolUse hook that exits 1 refuses the call; its stderr is quoted",
			Hooks:  []hook{block(preHook("a", emit("", "guard broke", 1)))},
			Script: []claudeapi.Turn{bash("echo hi"), say("finished")},
			Counts: map[string]int{"a": 1},
			Check:  viaSocket("PreToolUse", true)},
		&scenario{Name: "onfailure-absent-exit1", Doc: "without onFailure the same exit 1 lets the call run",
			Hooks:  []hook{preHook("a", emit("", "guard broke", 1))},
			Script: []claudeapi.Turn{bash("echo hi"), say("finished")},
			Counts: map[string]int{"a": 1},
			Check:  viaSocket("PreToolUse", false)},
		&scenario{Name: "onfailure-invalid-json", Doc: "onFailure block: a {…} stdout that is not valid JSON refuses the call (2.1.248 + 2.1.295)",
			Hooks:  []hook{block(preHook("a", emit(`{"decision": oops}`, "", 0)))},
			Script: []claudeapi.Turn{bash("echo hi"), say("finished")},
			Counts: map[string]int{"a": 1},
			Diffs:  []string{"json-parse-message"},
			Check:  viaSocket("PreToolUse", true)},
		&scenario{Name: "onfailure-prompt", Doc: "onFailure block: a UserPromptSubmit hook that exits 1 blocks the prompt",
			Hooks:  []hook{block(hook{Name: "a", Event: "UserPromptSubmit", Body: emit("", "ups broke", 1)})},
			Script: []claudeapi.Turn{say("finished")},
			Counts: map[string]int{"a": 1},
			Check:  viaSocket("UserPromptSubmit", true)},
		&scenario{Name: "onfailure-posttooluse", Doc: "onFailure block on PostToolUse: the tool already ran; the model reads the block as for exit 2",
			Hooks:  []hook{block(hook{Name: "a", Event: "PostToolUse", Matcher: "Bash", Body: emit("", "post broke", 1)})},
			Script: []claudeapi.Turn{bash("echo hi"), say("finished")},
			Counts: map[string]int{"a": 1},
			Diffs:  []string{"hookc-command"},
			Check:  viaSocket("PostToolUse", true)},
		&scenario{Name: "onfailure-stop", Doc: "onFailure block is ignored on Stop: the session ends",
			Hooks:  []hook{block(hook{Name: "a", Event: "Stop", Body: emit("", "stop broke", 1)})},
			Script: []claudeapi.Turn{say("finished")},
			Counts: map[string]int{"a": 1},
			Check:  viaSocket("Stop", false)},
		// 2.1.248: a {…} stdout that is not valid JSON is a hook error, no longer plain
		// text (on UserPromptSubmit plain text is context for the model); text that only
		// starts with '{' is still plain text.
		&scenario{Name: "invalid-object-prompt", Doc: "UserPromptSubmit stdout '{not: json}' is a hook error, not context",
			Hooks:  []hook{{Name: "a", Event: "UserPromptSubmit", Body: emit("{not: json}", "", 0)}},
			Script: []claudeapi.Turn{say("finished")},
			Counts: map[string]int{"a": 1}},
		&scenario{Name: "brace-text-prompt", Doc: "UserPromptSubmit stdout '{not json' is still plain-text context",
			Hooks:  []hook{{Name: "a", Event: "UserPromptSubmit", Body: emit("{not json", "", 0)}},
			Script: []claudeapi.Turn{say("finished")},
			Counts: map[string]int{"a": 1}},
		// 2.1.314: hooks matching Bash run on the Monitor tool's shell command (block/ask
		// only), and Monitor(…) in `if` matches it. The model calls Monitor; hookc receives
		// tool_name "Monitor", and hookd must still run the Bash guards.
		// 2.1.321: Claude Code keeps an ask beside a defer and lets it decide where it
		// cannot honour the defer (interactive sessions). In -p it honours the defer —
		// even for a message with two tool calls — and so does hookd: the hook
		// environment says the session is unattended (CLAUDE_CODE_SESSION_ATTENDED=0),
		// and only then does hookd let a defer beat an ask.
		&scenario{Name: "ask-beside-defer-print", Doc: "-p, two calls in one message, one hook asks and one defers: deferred",
			Hooks: []hook{preHook("a", emit(decide("ask", "check this"), "", 0)), preHook("d", emit(decide("defer", ""), "", 0))},
			Script: []claudeapi.Turn{{ToolName: "Bash", ToolInput: map[string]any{"command": "echo one", "description": "run"},
				Also: []claudeapi.Turn{bash("echo two")}}, say("finished")},
			Counts: map[string]int{"a": 2, "d": 2}},
		&scenario{Name: "monitor-bash-hook-deny", Doc: "a Bash hook denies a command the model starts through Monitor",
			Hooks:  []hook{preHook("a", emit(decide("deny", "no watching"), "", 0))},
			Script: []claudeapi.Turn{monitor("touch made-by-monitor"), say("finished")},
			Counts: map[string]int{"a": 1}},
		&scenario{Name: "monitor-bash-hook-allow-ignored", Doc: "a Bash hook's allow does not approve a Monitor command (in -p: refused for approval)",
			Hooks:  []hook{preHook("a", emit(decide("allow", "fine"), "", 0))},
			Script: []claudeapi.Turn{monitor("touch made-by-monitor"), say("finished")},
			Counts: map[string]int{"a": 1}},
		&scenario{Name: "monitor-if", Doc: "if: Monitor(touch *) fits the Monitor command; a Bash-matched hook whose if names Monitor is skipped",
			Hooks: []hook{{Name: "m", Event: "PreToolUse", Matcher: "Monitor", If: "Monitor(touch *)", Body: emit(decide("ask", "watch this?"), "", 0)},
				{Name: "skipped", Event: "PreToolUse", Matcher: "Bash", If: "Monitor(touch *)", Body: emit(decide("deny", "never"), "", 0)}},
			Script: []claudeapi.Turn{monitor("touch made-by-monitor"), say("finished")},
			Counts: map[string]int{"m": 1}},
	)
}
