package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookd/hookd/protocol"
)

// MaxContextChars caps each additionalContext, systemMessage and plain-stdout context
// string of one hook (spec §4.7: 10,000 characters; CHANGELOG 2.1.89 says 50K, we take
// the lower). Claude Code saves the overflow to a file and gives Claude a path and a
// preview; hookd has no session directory of its own, so it cuts the string and ends it
// with a marker saying how much was cut. Characters are counted as runes.
const MaxContextChars = 10000

// Block.Via / Interpretation.BlockVia values.
const (
	ViaExit2 = "exit2" // exit code 2
	ViaExit  = "exit"  // WorktreeCreate: another non-zero exit code, or the hook did not start
	ViaJSON  = "json"  // decision:"block" (or another JSON field that blocks)
	// ViaOnFailure: the hook failed (could not start, timed out, exited with a code other
	// than 0 and 2, printed invalid JSON) and its handler says "onFailure": "block"
	// (Claude Code 2.1.295).
	ViaOnFailure = "on_failure"
	// ViaOnTimeout: the hook timed out and hookd's own configuration says
	// "on_timeout": "deny" for it.
	ViaOnTimeout = "on_timeout"
	// ViaUntrusted: the hook was not run because its managed settings file failed hookd's
	// trust check (owned by another user, or writable by group or others), and the
	// event can block, so hookd failed closed.
	ViaUntrusted = "untrusted"
)

// RawOutput is what running one handler produced (filled by the daemon's runner).
type RawOutput struct {
	Kind HandlerType // HTTP, or Command (any other kind is read as a command's output)
	// Command is the handler's command string as written (Claude Code quotes it in exit-2
	// texts: "[<command>]: <stderr>"), or the URL for http.
	Command         string
	ExitCode        int // command: process exit code; http: 0 for 2xx, else 1
	HTTPStatus      int // http only
	Stdout, Stderr  []byte
	StdoutTruncated bool
	StartErr        error // could not start (missing file, EACCES, ...)
	TimedOut        bool
	Cancelled       bool
	Duration        time.Duration
	// HookName is how Claude Code names the hook in some texts: "<Event>:<matcher value>"
	// (e.g. "PreModelSwitch:claude-sonnet-4-5"); "" when unknown (Command stands in).
	HookName string
	// FailClosed: the handler has "onFailure": "block" and Claude Code honours it here
	// (a synchronous command or http hook, not on Stop, SubagentStop, TaskCompleted or
	// TeammateIdle; settings.Handler.FailsClosed). A failure then blocks (OnFailure).
	FailClosed bool
}

// Interpretation is one hook's result variants: what this hook alone asked for, already
// filtered to what the event honours.
type Interpretation struct {
	Hook     protocol.HookRef
	Outcome  string // protocol.OutcomeOK | OutcomeBlocked | OutcomeError | OutcomeTimeout | OutcomeCancelled
	ExitCode *int   // command hooks that exited (126/127 too); nil for http, timeouts, cancellations, StartErr
	Duration time.Duration
	// Error says why the outcome is "error" (start failure, schema-invalid JSON,
	// "Failed with non-blocking status code: <stderr>", or "[<command>]: <stderr>" for an
	// exit 2 that cannot block), or describes the timeout / cancellation.
	Error string

	// Permission is "allow" | "deny" | "ask" | "defer" (PreToolUse permissionDecision or
	// the deprecated decision approve/block; exit 2 on PreToolUse is a deny), or
	// "allow" | "deny" (PermissionRequest decision.behavior).
	Permission       string
	PermissionReason string
	UpdatedInput     json.RawMessage // never set together with a deny

	// Block is a blocking error: exit 2 or decision:"block" on an event that acts on it,
	// a WorktreeCreate failure. On PreToolUse and PermissionRequest a block is a deny and
	// lives in Permission only, so one decision has one representation.
	Block       bool
	BlockReason string
	BlockVia    string // ViaExit2 | ViaExit | ViaJSON | ViaOnFailure | ViaOnTimeout
	// Via is set when this hook's block or deny is not its own answer but a failure
	// turned into one: ViaOnFailure (the handler's onFailure) or ViaOnTimeout (hookd's
	// on_timeout: deny). Error then still says what failed.
	Via string

	Continue   *bool  // continue:false prevents continuation
	StopReason string // only with continue:false

	// AdditionalContext is hookSpecificOutput.additionalContext (where honoured) or, on
	// PlainTextContext events, plain stdout of exit 0 (then PlainContext is true).
	AdditionalContext string
	PlainContext      bool
	// CompactInstructions is a PreCompact hook's plain stdout of exit 0, trimmed and cut
	// as Claude Code cuts it (precompact.go).
	CompactInstructions string
	SystemMessage       string
	// Specific holds the other honoured event-specific fields, by Claude Code name:
	// updatedToolOutput, updatedMCPToolOutput, classifierContext, sessionTitle,
	// watchPaths, initialUserMessage, reloadSkills, displayContent, action, content,
	// retry, suppressOriginalPrompt, terminalSequence, and PermissionRequest's
	// updatedPermissions and interrupt.
	Specific map[string]json.RawMessage
	// WorktreePath is WorktreeCreate's answer: the last non-empty stdout line with ANSI
	// escapes stripped (command), or hookSpecificOutput.worktreePath (http).
	WorktreePath string

	// Warnings are notices about this hook's output that change nothing on their own
	// (truncated strings, the undocumented async marker, JSON ignored on a block).
	Warnings []string

	// StdoutBytes, StderrBytes and their SHA-256 (hex) describe the output as read (after
	// the runner's cap; StdoutTruncated says the cap cut stdout): the audit log records
	// them instead of the bytes.
	StdoutBytes, StderrBytes   int
	StdoutSHA256, StderrSHA256 string
	StdoutTruncated            bool
}

// Interpret turns one handler's raw output into its result variants for event ev,
// following spec §4.1 (exit codes), §4.2 (http), §4.3–4.4 (JSON fields) as of Claude Code
// 2.1.330. It never panics on any output and never turns a hook that did not run to a
// normal end into a decision.
func Interpret(ev *Event, ref protocol.HookRef, out RawOutput) Interpretation {
	in := Interpretation{Hook: ref, Duration: out.Duration,
		StdoutBytes: len(out.Stdout), StderrBytes: len(out.Stderr), StdoutTruncated: out.StdoutTruncated,
		StdoutSHA256: sha256Hex(out.Stdout), StderrSHA256: sha256Hex(out.Stderr)}
	if out.Kind != HTTP && !out.Cancelled && !out.TimedOut && out.StartErr == nil {
		code := out.ExitCode
		in.ExitCode = &code
	}
	switch {
	case out.Cancelled:
		in.Outcome, in.Error = protocol.OutcomeCancelled, "cancelled before it finished"
	case out.TimedOut:
		// Output discarded, no decision (spec §4.1 "timeout").
		in.Outcome, in.Error = protocol.OutcomeTimeout, "timed out"
		if out.Duration > 0 {
			in.Error = "timed out after " + out.Duration.Round(time.Millisecond).String()
		}
		if ev.TimeoutRefuses && !out.FailClosed {
			// PreModelSwitch: a hook that does not answer in time refuses the switch,
			// in Claude Code 2.1.330's words.
			in.Outcome = protocol.OutcomeBlocked
			in.Permission = "deny"
			name := out.HookName
			if name == "" {
				name = out.Command
			}
			in.PermissionReason = ev.Name + " hook " + name + " did not respond before its timeout"
		}
	case out.StartErr != nil || notStarted(out):
		in.Outcome, in.Error = protocol.OutcomeError, startError(out)
	case out.Kind == HTTP:
		interpretHTTP(ev, &in, out)
	default:
		interpretCommand(ev, &in, out)
	}
	if ev.AnyNonZeroFails && in.Outcome != protocol.OutcomeOK && !in.Block && in.Outcome != protocol.OutcomeBlocked {
		// A WorktreeCreate hook that did not produce a path fails the creation whatever
		// the reason: Claude Code fails on any non-zero exit, and a hook that never
		// started or was killed has one (spec §1.1 WorktreeCreate).
		in.Block, in.BlockReason, in.BlockVia = true, in.Error, ViaExit
	}
	skillShellRefuses(ev, &in)
	if out.FailClosed {
		OnFailure(ev, &in, out)
	}
	return in
}

// OnFailure turns a failed hook into a block, as Claude Code 2.1.330 does for a handler
// with "onFailure": "block": "the failure counts as exit code 2, so the action the event
// guards (a tool call, a permission request, a prompt) is blocked". A failure is a hook
// that could not start, timed out, exited with a code other than 0 and 2 without a valid
// JSON answer, or printed JSON that is invalid or fails validation — every error or
// timeout outcome except an exit 2 on an event that cannot block (that is Claude Code's
// blocking path, not a failure). A cancelled hook (the caller went away) is not a
// failure. It applies where exit 2 blocks (PostToolUse included: observed with 2.1.330,
// e2e onfailure-posttooluse, the model reads the block next to the tool result) and on
// PermissionRequest (a deny); on events where exit 2 does not block it changes nothing
// in hookd (not observed natively).
//
// The reason is Claude Code's own text, "[<command>]: failed; blocking because onFailure
// is "block"" (or "timed out; …"), followed on the next line by the hook's stderr as
// Claude Code quotes a non-blocking error, so the model reads the same words through
// hookd as without it.
func OnFailure(ev *Event, in *Interpretation, out RawOutput) {
	if !(blocksOnExit2(ev) || ev.Name == "PermissionRequest") || ev.AnyNonZeroFails {
		return // WorktreeCreate already fails on any failure
	}
	what := ""
	switch {
	case in.Outcome == protocol.OutcomeTimeout:
		what = "timed out"
	case in.Outcome == protocol.OutcomeError && !(in.ExitCode != nil && *in.ExitCode == 2):
		what = "failed"
	default:
		return
	}
	reason := "[" + out.Command + "]: " + what + `; blocking because onFailure is "block"`
	if what == "failed" {
		detail := strings.TrimSpace(string(out.Stderr))
		if detail == "" && out.StartErr != nil {
			detail = out.StartErr.Error()
		}
		if out.Kind == HTTP || (detail == "" && in.Error != "") {
			detail = strings.TrimPrefix(in.Error, "Failed with non-blocking status code: ")
		}
		if detail != "" && detail != "No stderr output" {
			reason += "\n" + detail
		}
	}
	in.Outcome, in.Via = protocol.OutcomeBlocked, ViaOnFailure
	switch ev.Name {
	case "PreToolUse", "PermissionRequest", "PreModelSwitch", SkillShell:
		in.Permission, in.PermissionReason, in.UpdatedInput = "deny", reason, nil
	default:
		in.Block, in.BlockReason, in.BlockVia = true, reason, ViaOnFailure
		if ev.Honoured(FSuppressPrompt) {
			// Claude Code marks its onFailure block suppressOriginalPrompt: the prompt is
			// not echoed after the reason (e2e onfailure-prompt).
			setSpecific(in, "suppressOriginalPrompt", json.RawMessage("true"))
		}
	}
}

// notStarted: the shell could not find or execute the command. Claude Code calls exit 127
// a non-blocking error (spec §4.1: "a mistyped policy hook silently disables the gate");
// hookd reports it as an error outcome so it is never mistaken for a quiet success.
func notStarted(out RawOutput) bool {
	if out.Kind == HTTP {
		return false
	}
	switch out.ExitCode {
	case 126:
		return true
	case 127:
		s := string(out.Stderr)
		return strings.Contains(s, "not found") || strings.Contains(s, "No such file")
	}
	return false
}

func startError(out RawOutput) string {
	prefix := "could not start hook: "
	if out.Kind == HTTP {
		prefix = "http hook request failed: "
	}
	if out.StartErr != nil {
		return prefix + out.StartErr.Error()
	}
	if line := firstLine(out.Stderr); line != "" {
		return prefix + line
	}
	return prefix + fmt.Sprintf("exit %d", out.ExitCode)
}

// interpretHTTP is spec §4.2: 2xx + empty body = success, 2xx + JSON object = parsed like
// command stdout, 2xx + anything else = non-blocking error, non-2xx = non-blocking error.
// Status codes alone never block.
func interpretHTTP(ev *Event, in *Interpretation, out RawOutput) {
	if out.ExitCode != 0 || (out.HTTPStatus != 0 && out.HTTPStatus/100 != 2) {
		msg := firstLine(out.Stderr)
		if msg == "" {
			msg = fmt.Sprintf("HTTP %d", out.HTTPStatus)
		}
		in.Outcome, in.Error = protocol.OutcomeError, "http hook failed: "+msg
		return
	}
	if out.StdoutTruncated {
		in.Warnings = append(in.Warnings, "response body truncated at the output cap")
	}
	body := bytes.TrimSpace(out.Stdout)
	if len(body) == 0 {
		in.Outcome = protocol.OutcomeOK
		if ev.AnyNonZeroFails {
			noWorktreePath(in)
		}
		return
	}
	top, ok := decodeObject(body)
	if !ok {
		in.Outcome, in.Error = protocol.OutcomeError, "http hook returned a body that is not a JSON object"
		return
	}
	hj, err := parseHookJSON(ev, top)
	if err != nil {
		in.Outcome, in.Error = protocol.OutcomeError, err.Error()
		return
	}
	if ev.AnyNonZeroFails {
		if in.WorktreePath = str(hj.hso, "worktreePath"); in.WorktreePath == "" {
			noWorktreePath(in)
			return
		}
	}
	apply(ev, in, hj, false)
	settle(in)
}

// interpretCommand is spec §4.1 for command hooks.
func interpretCommand(ev *Event, in *Interpretation, out RawOutput) {
	stdout := out.Stdout
	async := false
	if rest, ok := asyncMarker(stdout); ok {
		// Undocumented runtime marker (spec §5, §11.1): Claude Code would background the
		// hook here. hookd has already waited for it, so it interprets the rest of the
		// output, but like an async hook it cannot decide (decisions are dropped below).
		async = true
		stdout = rest
		in.Warnings = append(in.Warnings, `printed the undocumented {"async":true} marker: hookd ran the hook to completion; its decisions are ignored as for async hooks (spec §5)`)
	}
	p := parseStdout(ev, stdout, out.StdoutTruncated)
	if out.StdoutTruncated {
		in.Warnings = append(in.Warnings, "stdout truncated at the output cap")
	}
	code := out.ExitCode
	switch {
	case ev.AnyNonZeroFails:
		worktreeCommand(in, out, stdout)
		return
	case ev.ExitCodeIgnored:
		// Notification, InstructionsLoaded, StopFailure, PermissionDenied: the exit code and
		// stderr have no effect; JSON is still read for the few fields they honour.
		fromJSONOrIgnore(ev, in, p)
	case code == 0:
		switch {
		case p.json != nil:
			apply(ev, in, p.json, false)
			settle(in)
		case p.err != nil:
			in.Outcome, in.Error = protocol.OutcomeError, p.err.Error()
		default:
			in.Outcome = protocol.OutcomeOK
			if ev.PlainTextContext && p.plain != "" {
				in.AdditionalContext, in.PlainContext = capText(in, "plain stdout", p.plain), true
			}
			if ev.Name == "PreCompact" {
				in.CompactInstructions = compactPiece(out.Command, string(stdout))
			}
		}
	case code == 2 && blocksOnExit2(ev):
		exit2Block(ev, in, out, p)
	case code == 2 && ev.Name != "PermissionRequest":
		// Exit 2 on an event that cannot block: stderr is shown to the user or Claude
		// (spec §1.1 "Exit 2 effect"), the action goes on; Claude Code records it as
		// "[<command>]: <stderr>" (FINDINGS.md, SessionStart). JSON is still read (spec
		// §4.1); plain stdout is not context (probe ss-4-exit2: SessionStart dropped it).
		if p.json != nil {
			apply(ev, in, p.json, false)
		} else if p.err != nil {
			in.Warnings = append(in.Warnings, p.err.Error())
		}
		in.Outcome, in.Error = protocol.OutcomeError, strings.TrimRight(exit2Text(out), "\r\n")
	default:
		// Other exit codes (and exit 2 on PermissionRequest, which is not honoured): a
		// schema-valid JSON object decides and the exit code is ignored; anything else is
		// a non-blocking error (spec §4.1 "other").
		switch {
		case p.json != nil:
			apply(ev, in, p.json, false)
			settle(in)
		case p.err != nil:
			in.Outcome, in.Error = protocol.OutcomeError, p.err.Error()
		default:
			// Claude Code 2.1.330 records the whole stderr, trimmed, after this prefix (and
			// displays its first line; FINDINGS.md i2).
			in.Outcome = protocol.OutcomeError
			in.Error = "Failed with non-blocking status code: " + trimmedOr(out.Stderr, "No stderr output")
		}
	}
	if async {
		dropDecisions(in)
	}
}

// blocksOnExit2 reports whether exit 2 is a blocking error on ev. PostToolUse cannot stop
// the tool (it already ran) but Claude Code 2.1.330 treats its exit 2 exactly like
// decision:"block" — "PostToolUse:Bash hook blocking error from command: ..." next to the
// tool result (probe post-3-exit2 vs post-1-block) — so it is a block there too.
// PermissionRequest ignores exit 2 (spec §4.4, docs since 2026-08-11).
func blocksOnExit2(ev *Event) bool {
	if ev.Name == "PermissionRequest" {
		return false
	}
	return ev.CanBlock || ev.Honoured(FDecision)
}

// exit2Block is exit 2 on an event that can block (spec §4.1): it blocks even when the
// JSON says allow; the message is the JSON's blocking reason if it has one, else stderr in
// Claude Code's own phrasing "[<command>]: <stderr>" (observed for PreToolUse, Stop and
// UserPromptSubmit, probes pre-c, stop-2, ups-4), so a block rendered as JSON by hookd
// reads the same to Claude as the hook's own exit 2 would have. Schema-invalid JSON
// still blocks (fixed in 2.1.214); Elicitation(Result) ignore hookSpecificOutput here.
func exit2Block(ev *Event, in *Interpretation, out RawOutput, p parsed) {
	if p.json != nil {
		apply(ev, in, p.json, strings.HasPrefix(ev.Name, "Elicitation"))
	} else if p.err != nil {
		in.Warnings = append(in.Warnings, p.err.Error()+" (exit 2 blocks anyway)")
	}
	reason := exit2Text(out)
	in.Outcome = protocol.OutcomeBlocked
	if ev.Name == "PreToolUse" || ev.Name == "PreModelSwitch" || ev.Name == SkillShell {
		if in.Permission == "deny" && in.PermissionReason != "" {
			reason = in.PermissionReason
		}
		in.Permission, in.PermissionReason, in.UpdatedInput = "deny", reason, nil
		in.Block, in.BlockReason, in.BlockVia = false, "", ""
		return
	}
	if in.Block && in.BlockReason != "" {
		reason = in.BlockReason
	}
	in.Block, in.BlockReason, in.BlockVia = true, reason, ViaExit2
}

// exit2Text is how Claude Code 2.1.330 quotes an exit-2 hook: "[<command>]: <stderr>",
// stderr verbatim (trailing newline included), "No stderr output" when empty.
func exit2Text(out RawOutput) string {
	s := string(out.Stderr)
	if strings.TrimSpace(s) == "" {
		s = "No stderr output"
	}
	if out.Command == "" {
		return s
	}
	return "[" + out.Command + "]: " + s
}

// worktreeCommand is WorktreeCreate (spec §4.4): any non-zero exit fails creation
// regardless of JSON; exit 0 prints the path as the last non-empty stdout line.
func worktreeCommand(in *Interpretation, out RawOutput, stdout []byte) {
	if out.ExitCode != 0 {
		via := ViaExit
		if out.ExitCode == 2 {
			via = ViaExit2
		}
		in.Outcome = protocol.OutcomeBlocked
		in.Block, in.BlockVia = true, via
		in.BlockReason = strings.TrimRight(string(out.Stderr), "\r\n")
		if strings.TrimSpace(in.BlockReason) == "" {
			in.BlockReason = fmt.Sprintf("WorktreeCreate hook failed with exit code %d", out.ExitCode)
		}
		return
	}
	path := lastLine(stripANSI(string(stdout)))
	if path == "" {
		noWorktreePath(in)
		return
	}
	in.Outcome, in.WorktreePath = protocol.OutcomeOK, path
}

// noWorktreePath: a WorktreeCreate hook that succeeded without a path fails creation
// with Claude Code's own message.
func noWorktreePath(in *Interpretation) {
	in.Outcome = protocol.OutcomeBlocked
	in.Block, in.BlockReason, in.BlockVia = true, "hook succeeded but returned no worktree path", ViaExit
}

func fromJSONOrIgnore(ev *Event, in *Interpretation, p parsed) {
	switch {
	case p.json != nil:
		apply(ev, in, p.json, false)
		settle(in)
	case p.err != nil:
		in.Outcome, in.Error = protocol.OutcomeError, p.err.Error()
	default:
		in.Outcome = protocol.OutcomeOK
	}
}

// settle sets the outcome of a hook whose JSON decided: blocked when it blocked or denied.
func settle(in *Interpretation) {
	in.Outcome = protocol.OutcomeOK
	if in.Block || in.Permission == "deny" {
		in.Outcome = protocol.OutcomeBlocked
	}
}

// dropDecisions keeps only what an async hook can deliver: additionalContext and
// systemMessage (spec §5).
func dropDecisions(in *Interpretation) {
	in.Permission, in.PermissionReason, in.UpdatedInput = "", "", nil
	in.Block, in.BlockReason, in.BlockVia = false, "", ""
	in.Continue, in.StopReason, in.Specific = nil, "", nil
	if in.Outcome == protocol.OutcomeBlocked {
		in.Outcome = protocol.OutcomeOK
	}
}

// apply copies the fields ev honours from a validated JSON object into in. Fields the
// event does not act on are dropped silently (spec §4.3). additionalContext counts only
// inside hookSpecificOutput.
func apply(ev *Event, in *Interpretation, hj *hookJSON, skipHSO bool) {
	top := hj.top
	if c, ok := boolean(top, "continue"); ok && ev.Honoured(FContinue) {
		in.Continue = &c
		if !c && ev.Honoured(FStopReason) {
			in.StopReason = str(top, "stopReason")
		}
	}
	if ev.Honoured(FSystemMessage) {
		if s := str(top, "systemMessage"); s != "" {
			in.SystemMessage = capText(in, "systemMessage", s)
		}
	}
	if ev.Honoured(FTerminalSequence) {
		if raw, ok := top["terminalSequence"]; ok && str(top, "terminalSequence") != "" {
			setSpecific(in, "terminalSequence", raw)
		}
	}
	decision, reason := str(top, "decision"), str(top, "reason")
	switch {
	case ev.Name == "PreToolUse" || ev.Name == SkillShell:
		// Deprecated top-level form: approve ≙ allow, block ≙ deny (spec §4.4). Still
		// honoured by 2.1.330 (probe pre-p-deprecated-block) and on PreSkillShellCommand
		// by 2.1.332 (pssc-3e, pssc-4n). permissionDecision wins.
		switch decision {
		case "approve":
			in.Permission, in.PermissionReason = "allow", reason
		case "block":
			in.Permission, in.PermissionReason = "deny", reason
		}
	case decision == "block" && ev.Honoured(FDecision):
		in.Block, in.BlockReason, in.BlockVia = true, reason, ViaJSON
	}
	if hj.hso == nil || skipHSO {
		return
	}
	h := hj.hso
	if ev.Honoured(FAdditionalContext) {
		if s := str(h, "additionalContext"); s != "" {
			in.AdditionalContext = capText(in, "additionalContext", s)
		}
	}
	switch ev.Name {
	case SkillShell:
		skillShellAnswer(in, hj)
	case "PreModelSwitch":
		if d := str(h, "permissionDecision"); d != "" {
			in.Permission, in.PermissionReason = d, str(h, "permissionDecisionReason")
		}
	case "PreToolUse":
		if d := str(h, "permissionDecision"); d != "" {
			in.Permission, in.PermissionReason = d, str(h, "permissionDecisionReason")
		}
		if raw, ok := h["updatedInput"]; ok && in.Permission != "deny" {
			in.UpdatedInput = compact(raw)
		}
		if in.Permission == "deny" {
			in.UpdatedInput = nil
		}
	case "PermissionRequest":
		var d map[string]json.RawMessage
		if raw, ok := h["decision"]; ok && json.Unmarshal(raw, &d) == nil {
			in.Permission = str(d, "behavior")
			switch in.Permission {
			case "allow":
				if raw, ok := d["updatedInput"]; ok {
					in.UpdatedInput = compact(raw)
				}
				if raw, ok := d["updatedPermissions"]; ok {
					setSpecific(in, "updatedPermissions", raw)
				}
			case "deny":
				in.PermissionReason = str(d, "message")
				if raw, ok := d["interrupt"]; ok {
					setSpecific(in, "interrupt", raw)
				}
			}
		}
	case "WorktreeCreate":
		in.WorktreePath = str(h, "worktreePath")
	}
	for i := range hsoFields {
		f := &hsoFields[i]
		switch f.name {
		case "additionalContext", "permissionDecision", "permissionDecisionReason", "updatedInput", "decision", "worktreePath":
			continue // handled above
		}
		if raw, ok := h[f.name]; ok && f.inSchema(ev) {
			if f.name == "classifierContext" {
				raw, _ = json.Marshal(capRunes(str(h, f.name), classifierContextMax))
			}
			setSpecific(in, f.name, raw)
		}
	}
}

// classifierContextMax is the classifierContext budget per tool call across all hooks
// (spec §4.7).
const classifierContextMax = 2000

func setSpecific(in *Interpretation, key string, raw json.RawMessage) {
	if in.Specific == nil {
		in.Specific = make(map[string]json.RawMessage)
	}
	in.Specific[key] = compact(raw)
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

// parsed is stdout classified per spec §4.1: a schema-valid JSON object (json), an object
// that fails validation or could not be read whole (err), or plain text (plain, trimmed).
type parsed struct {
	json  *hookJSON
	err   error
	plain string
}

// parseStdout: JSON only when the first non-space character is '{' and the whole output
// is one object; arrays and strings are plain text (spec §4.1). A "{…}" that is not valid
// JSON is an error (Claude Code 2.1.248), and so is a JSON object cut by the runner's
// output cap: its decision is unknown.
func parseStdout(ev *Event, stdout []byte, truncated bool) parsed {
	t := bytes.TrimSpace(stdout)
	if len(t) == 0 {
		return parsed{}
	}
	if t[0] == '{' {
		if top, ok := decodeObject(t); ok {
			hj, err := parseHookJSON(ev, top)
			if err != nil {
				return parsed{err: err}
			}
			return parsed{json: hj}
		}
		if truncated {
			return parsed{err: fmt.Errorf("stdout exceeded the output cap (%d bytes kept); its JSON could not be read", len(stdout))}
		}
		// Claude Code 2.1.248: "a stdout {…} object that isn't valid JSON" is a hook error
		// with the parse message. Observed with 2.1.330 (e2e brace-text-prompt): only
		// output that starts with '{' and ends with '}' counts; "{not json" and several
		// JSON documents in a row stay plain text ("Hook output is several JSON
		// documents, treating as plain text").
		if t[len(t)-1] == '}' && !severalDocuments(t) {
			var v any
			err := json.Unmarshal(t, &v)
			if err == nil {
				err = errors.New("not one JSON object")
			}
			// Claude Code's words around the parser's message (its parser is
			// JavaScriptCore's, so that part of the text differs: docs/differences.md).
			return parsed{err: fmt.Errorf("%s — %v. %s", invalidJSONLead, err, invalidJSONHint)}
		}
	}
	return parsed{plain: string(t)}
}

// Claude Code 2.1.330's text for a {…} stdout that is not valid JSON, around its parser's
// message.
const (
	invalidJSONLead = "Hook output looks like a JSON object but is not valid JSON"
	invalidJSONHint = "Emit the payload with a JSON encoder (jq, ConvertTo-Json, json.dumps) rather than string " +
		"concatenation so backslashes and quotes inside strings are escaped."
)

// severalDocuments reports whether b is two or more valid JSON values in a row.
func severalDocuments(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	n := 0
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err == io.EOF && n > 1
		}
		n++
	}
}

// decodeObject decodes b as exactly one JSON object.
func decodeObject(b []byte) (map[string]json.RawMessage, bool) {
	var top map[string]json.RawMessage
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &top) != nil || top == nil {
		return nil, false
	}
	return top, true
}

// asyncMarker detects the runtime {"async":true[,"asyncTimeout":n]} first line (spec §5)
// and returns the output after it.
func asyncMarker(stdout []byte) ([]byte, bool) {
	t := bytes.TrimLeft(stdout, " \t\r\n")
	line, rest, _ := bytes.Cut(t, []byte("\n"))
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(line), &m) != nil {
		return nil, false
	}
	if v, ok := m["async"]; !ok || string(v) != "true" {
		return nil, false
	}
	for k := range m {
		if k != "async" && k != "asyncTimeout" {
			return nil, false
		}
	}
	return rest, true
}

// capText caps s at MaxContextChars and records a warning when it had to cut.
func capText(in *Interpretation, what, s string) string {
	if utf8.RuneCountInString(s) <= MaxContextChars {
		return s
	}
	n := utf8.RuneCountInString(s)
	in.Warnings = append(in.Warnings, fmt.Sprintf("%s of %d characters truncated to %d (spec §4.7)", what, n, MaxContextChars))
	return capRunes(s, MaxContextChars)
}

// capRunes cuts s to at most max runes, the last ones being a marker saying how many
// characters were cut.
func capRunes(s string, limit int) string {
	n := utf8.RuneCountInString(s)
	if n <= limit {
		return s
	}
	var marker string
	keep := limit
	for range 3 { // the marker's length depends on the count it reports; settle it
		marker = fmt.Sprintf("\n[hookd: truncated, %d of %d characters omitted]", n-keep, n)
		keep = max(0, limit-utf8.RuneCountInString(marker))
	}
	i := 0
	for r := 0; i < len(s) && r < keep; r++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return s[:i] + marker
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

func trimmedOr(b []byte, def string) string {
	if s := strings.TrimSpace(string(b)); s != "" {
		return s
	}
	return def
}

func lastLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return l
		}
	}
	return ""
}

// ansiRE matches CSI and OSC escape sequences and other two-byte ESC sequences.
var ansiRE = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]`)

func stripANSI(s string) string { return ansiRE.ReplaceAllString(s, "") }

// Frames returns the variant frames this hook produced, in a fixed order — permission,
// updated_input, additional_context, stop, prevent_continuation, stop_reason, then
// system_message and warning messages — and finally the "message" frame that ends the
// hook (finished | error | timeout | cancelled) with exit code and duration_ms.
func (in *Interpretation) Frames() []protocol.Frame {
	ref := in.Hook
	var fs []protocol.Frame
	add := func(f protocol.Frame) {
		f.Hook = &ref
		fs = append(fs, f)
	}
	if in.Permission != "" {
		add(protocol.Frame{Type: protocol.FramePermission, Decision: in.Permission, Reason: in.PermissionReason, Source: "hook", Via: in.Via})
	}
	if len(in.UpdatedInput) > 0 {
		add(protocol.Frame{Type: protocol.FrameUpdatedInput, Input: in.UpdatedInput})
	}
	if in.AdditionalContext != "" {
		add(protocol.Frame{Type: protocol.FrameAdditionalContext, Context: in.AdditionalContext})
	}
	if in.Block {
		add(protocol.Frame{Type: protocol.FrameStop, Reason: in.BlockReason, Via: in.Via})
	}
	if in.Continue != nil && !*in.Continue {
		add(protocol.Frame{Type: protocol.FramePreventContinuation})
		if in.StopReason != "" {
			add(protocol.Frame{Type: protocol.FrameStopReason, Reason: in.StopReason})
		}
	}
	if in.SystemMessage != "" {
		add(protocol.Frame{Type: protocol.FrameMessage, Kind: protocol.MsgSystemMessage, Text: in.SystemMessage})
	}
	for _, w := range in.Warnings {
		add(protocol.Frame{Type: protocol.FrameMessage, Kind: protocol.MsgWarning, Text: w})
	}
	end := protocol.Frame{Type: protocol.FrameMessage, Kind: protocol.MsgFinished, ExitCode: in.ExitCode}
	switch in.Outcome {
	case protocol.OutcomeError:
		end.Kind, end.Text = protocol.MsgError, in.Error
	case protocol.OutcomeTimeout:
		end.Kind, end.Text = protocol.MsgTimeout, in.Error
	case protocol.OutcomeCancelled:
		end.Kind, end.Text = protocol.MsgCancelled, in.Error
	}
	ms := durationMS(in.Duration)
	end.DurationMS = &ms
	add(end)
	return fs
}

func durationMS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
