package events

import (
	"regexp"
	"sort"
	"strings"
	"time"
)

// HandlerType is a hook handler's "type".
type HandlerType string

// Handler types (spec §3.2).
const (
	Command HandlerType = "command"
	HTTP    HandlerType = "http"
	MCPTool HandlerType = "mcp_tool"
	Prompt  HandlerType = "prompt"
	Agent   HandlerType = "agent"
)

// Runnable reports whether the daemon itself can run handlers of this type. prompt and
// agent need the harness's model, mcp_tool its MCP connections.
func (t HandlerType) Runnable() bool { return t == Command || t == HTTP }

// Valid reports whether t is one of the five handler types.
func (t HandlerType) Valid() bool {
	switch t {
	case Command, HTTP, MCPTool, Prompt, Agent:
		return true
	}
	return false
}

// Field is an output field an event honours (spec §4.3, §4.4).
type Field string

// Output fields.
const (
	FContinue           Field = "continue"
	FStopReason         Field = "stopReason"
	FSystemMessage      Field = "systemMessage"
	FDecision           Field = "decision" // top-level decision:"block" + reason
	FAdditionalContext  Field = "additionalContext"
	FPermissionDecision Field = "permissionDecision"
	FUpdatedInput       Field = "updatedInput"
	FPermissionRequest  Field = "decision.behavior" // PermissionRequest hookSpecificOutput.decision
	FUpdatedToolOutput  Field = "updatedToolOutput"
	FRetry              Field = "retry"
	FSessionTitle       Field = "sessionTitle"
	FWatchPaths         Field = "watchPaths"
	FInitialUserMessage Field = "initialUserMessage"
	FReloadSkills       Field = "reloadSkills"
	FDisplayContent     Field = "displayContent"
	FWorktreePath       Field = "worktreePath"
	FElicitationAction  Field = "action"
	FTerminalSequence   Field = "terminalSequence"
	FSuppressPrompt     Field = "suppressOriginalPrompt"
	FClassifierContext  Field = "classifierContext"
)

// Event describes one hook event.
type Event struct {
	Name string
	// MatcherField is the input field a group's matcher is tested against; "" means the
	// event has no matcher support and a matcher is ignored (spec §1.1).
	MatcherField string
	// NarrowMatcher: FileChanged and StopFailure use the narrower exact-match set
	// (letters, digits, _ and | only; spec §2).
	NarrowMatcher bool
	// MatchBasename: the matcher is tested against the base name of the field's value
	// (FileChanged matches the changed file's basename).
	MatchBasename bool
	// CanBlock: the event can stop the underlying action (exit 2 or a decision).
	CanBlock bool
	// Types are the handler types the event accepts (spec §3.4).
	Types []HandlerType
	// DefaultTimeout applies to command/http/mcp_tool handlers without "timeout".
	DefaultTimeout time.Duration
	// ToolEvent: the event concerns one tool call, so a handler's `if` filter is evaluated
	// (on other events a handler with `if` never runs; spec §2.1).
	ToolEvent bool
	// EnvFile: hooks get CLAUDE_ENV_FILE (spec §6).
	EnvFile bool
	// PlainTextContext: plain stdout on exit 0 becomes context for the model (spec §4.1).
	PlainTextContext bool
	// ExitCodeIgnored: exit codes and stderr have no effect (Notification,
	// InstructionsLoaded, StopFailure, PermissionDenied).
	ExitCodeIgnored bool
	// AnyNonZeroFails: any non-zero exit is a failure of the action (WorktreeCreate).
	AnyNonZeroFails bool
	// Honours lists the output fields the event acts on.
	Honours []Field
	// Exit2 describes what exit 2 does, for documentation and status.
	Exit2 string
	// TimeoutRefuses: a hook that does not answer in time refuses the action instead of
	// being no decision (PreModelSwitch, Claude Code 2.1.251: "A hook that does not
	// answer in time refuses the switch").
	TimeoutRefuses bool
	// ModelMatch: the matcher field is a model id; Claude Code strips a context-window
	// suffix ("[1m]", "[2m]") from the value and from the group's matcher before matching
	// (PreModelSwitch, PostModelSwitch). See ModelMatchValue, ModelMatcherText.
	ModelMatch bool
}

// contextSuffix is the context-window marker Claude Code 2.1.330 strips from model ids
// and model matchers (its ogr: /\[[12]m\](?=\s*(?:[|,]|$))/gi).
var contextSuffix = regexp.MustCompile(`(?i)\[[12]m\](\s*(?:[|,]|$))`)

// ModelMatchValue is a model id as a model-switch matcher sees it: "claude-opus-4-6[1m]"
// → "claude-opus-4-6".
func ModelMatchValue(s string) string {
	if t := strings.TrimSpace(contextSuffix.ReplaceAllString(s, "$1")); t != "" {
		return t
	}
	return s
}

// ModelMatcherText is a model-switch group matcher with the context-window suffixes
// removed, as Claude Code does before compiling it (a matcher that would become empty
// stays as written).
func ModelMatcherText(s string) string {
	if t := contextSuffix.ReplaceAllString(s, "$1"); strings.TrimSpace(t) != "" {
		return t
	}
	return s
}

// Honoured reports whether the event acts on output field f.
func (e *Event) Honoured(f Field) bool {
	for _, h := range e.Honours {
		if h == f {
			return true
		}
	}
	return false
}

// Accepts reports whether the event accepts handlers of type t.
func (e *Event) Accepts(t HandlerType) bool {
	for _, x := range e.Types {
		if x == t {
			return true
		}
	}
	return false
}

const (
	defaultTimeout = 600 * time.Second
	// SessionEndBudget is the shared budget of SessionEnd hooks (spec §3.2: 1.5 s, raised
	// to the largest per-hook timeout in settings files up to 60 s).
	SessionEndBudget    = 1500 * time.Millisecond
	SessionEndBudgetMax = 60 * time.Second
)

var (
	all5      = []HandlerType{Command, HTTP, MCPTool, Prompt, Agent}
	chm       = []HandlerType{Command, HTTP, MCPTool}
	cmOnly    = []HandlerType{Command, MCPTool}
	universal = []Field{FContinue, FStopReason, FSystemMessage, FTerminalSequence}
)

func fields(extra ...Field) []Field {
	return append(append([]Field(nil), universal...), extra...)
}

// catalogue is spec §1.1 (31 events) plus the two model-switch events of Claude Code
// 2.1.251 and PreSkillShellCommand of 2.1.332 (34, the 2.1.332 binary's list; `make
// conformance` checks it), with §3.4 handler types and §4.4 decision control.
var catalogue = []*Event{
	{Name: "SessionStart", MatcherField: "source", Types: cmOnly, EnvFile: true, PlainTextContext: true,
		Honours: fields(FAdditionalContext, FInitialUserMessage, FSessionTitle, FWatchPaths, FReloadSkills),
		Exit2:   "stderr shown to user; Claude doesn't see it"},
	{Name: "Setup", MatcherField: "trigger", Types: cmOnly, EnvFile: true,
		Honours: fields(FAdditionalContext), Exit2: "stderr shown to user"},
	{Name: "InstructionsLoaded", MatcherField: "load_reason", Types: chm, ExitCodeIgnored: true,
		Honours: []Field{FTerminalSequence}, Exit2: "exit code ignored"},
	{Name: "UserPromptSubmit", CanBlock: true, Types: all5, PlainTextContext: true, DefaultTimeout: 30 * time.Second,
		Honours: fields(FDecision, FAdditionalContext, FSessionTitle, FSuppressPrompt),
		Exit2:   "prompt blocked and erased; stderr shown to user"},
	{Name: "UserPromptExpansion", MatcherField: "command_name", CanBlock: true, Types: all5, PlainTextContext: true,
		Honours: fields(FDecision, FAdditionalContext), Exit2: "expansion blocked; stderr shown to user"},
	{Name: "MessageDisplay", Types: chm, DefaultTimeout: 10 * time.Second,
		Honours: []Field{FContinue, FStopReason, FTerminalSequence, FDisplayContent}, Exit2: "original text displayed"},
	{Name: "PreToolUse", MatcherField: "tool_name", CanBlock: true, Types: all5, ToolEvent: true,
		Honours: fields(FPermissionDecision, FUpdatedInput, FAdditionalContext, FDecision),
		Exit2:   "tool call blocked; stderr given to Claude"},
	// Claude Code 2.1.332: before a shell command embedded in a skill or slash command
	// (a !`…` line) runs, after Claude Code's own permission check passed it. Its answer
	// can only keep the command from running: allow adds nothing, deny, ask and defer all
	// block ("a skill can't wait for" approval), updatedInput blocks, a PermissionRequest-
	// shaped answer is read too (updatedPermissions blocks). Verified with the binary:
	// test/e2e/FINDINGS.md, "PreSkillShellCommand". prompt and agent handlers are accepted
	// in settings and block at run time. `if` is evaluated on it.
	{Name: "PreSkillShellCommand", MatcherField: "tool_name", CanBlock: true, Types: all5, ToolEvent: true,
		Honours: fields(FPermissionDecision, FUpdatedInput, FPermissionRequest, FDecision),
		Exit2:   "the command does not run; stderr is the reason"},
	{Name: "PermissionRequest", MatcherField: "tool_name", CanBlock: true, Types: all5, ToolEvent: true,
		Honours: fields(FPermissionRequest, FUpdatedInput), Exit2: "not honoured"},
	{Name: "PermissionDenied", MatcherField: "tool_name", Types: all5, ToolEvent: true, ExitCodeIgnored: true,
		Honours: fields(FRetry), Exit2: "ignored"},
	{Name: "PostToolUse", MatcherField: "tool_name", Types: all5, ToolEvent: true,
		Honours: fields(FDecision, FAdditionalContext, FUpdatedToolOutput, FClassifierContext),
		Exit2:   "stderr shown to Claude (tool already ran)"},
	{Name: "PostToolUseFailure", MatcherField: "tool_name", Types: all5, ToolEvent: true,
		Honours: fields(FAdditionalContext), Exit2: "stderr shown to Claude"},
	{Name: "PostToolBatch", CanBlock: true, Types: all5,
		Honours: fields(FDecision, FAdditionalContext), Exit2: "agentic loop stops before next model call"},
	{Name: "Notification", MatcherField: "notification_type", Types: chm, ExitCodeIgnored: true,
		Honours: []Field{FTerminalSequence}, Exit2: "exit code and stderr ignored"},
	{Name: "SubagentStart", MatcherField: "agent_type", Types: chm,
		Honours: fields(FAdditionalContext), Exit2: "stderr shown in the subagent's transcript"},
	{Name: "SubagentStop", MatcherField: "agent_type", CanBlock: true, Types: all5,
		Honours: fields(FDecision, FAdditionalContext), Exit2: "subagent kept running; stderr is its next instruction"},
	{Name: "TaskCreated", CanBlock: true, Types: all5,
		Honours: []Field{FSystemMessage, FDecision, FTerminalSequence}, Exit2: "task rolled back; stderr returned to Claude"},
	{Name: "TaskCompleted", CanBlock: true, Types: all5,
		Honours: fields(), Exit2: "task not completed; stderr fed back to the model"},
	{Name: "Stop", CanBlock: true, Types: all5,
		Honours: fields(FDecision, FAdditionalContext), Exit2: "Claude continues; stderr is the reason"},
	{Name: "StopFailure", MatcherField: "error", NarrowMatcher: true, Types: chm, ExitCodeIgnored: true,
		Honours: []Field{FTerminalSequence}, Exit2: "output and exit code ignored"},
	{Name: "TeammateIdle", CanBlock: true, Types: all5,
		Honours: fields(), Exit2: "teammate keeps working with stderr as feedback"},
	{Name: "ConfigChange", MatcherField: "source", CanBlock: true, Types: chm,
		Honours: []Field{FContinue, FStopReason, FDecision, FTerminalSequence}, Exit2: "change not applied (not for policy_settings)"},
	{Name: "CwdChanged", Types: chm, EnvFile: true,
		Honours: fields(FWatchPaths), Exit2: "stderr shown to user"},
	{Name: "DirectoryAdded", MatcherField: "source", Types: chm,
		Honours: fields(), Exit2: "stderr to debug log only"},
	{Name: "FileChanged", MatcherField: "file_path", NarrowMatcher: true, MatchBasename: true, Types: chm, EnvFile: true,
		Honours: fields(FWatchPaths), Exit2: "stderr shown to user"},
	{Name: "WorktreeCreate", CanBlock: true, Types: chm, AnyNonZeroFails: true,
		Honours: []Field{FWorktreePath, FTerminalSequence}, Exit2: "any non-zero exit fails creation"},
	{Name: "WorktreeRemove", Types: chm,
		Honours: []Field{FTerminalSequence}, Exit2: "failures logged in debug only"},
	{Name: "PreCompact", MatcherField: "trigger", CanBlock: true, Types: chm,
		Honours: []Field{FContinue, FStopReason, FDecision, FTerminalSequence}, Exit2: "compaction blocked"},
	// Claude Code 2.1.251 (delta "New events"): before and after the session's model
	// changes. PreModelSwitch answers like PreToolUse (allow / deny / ask + reason; no
	// defer, no updatedInput); exit 2 refuses the switch; a timeout refuses it.
	{Name: "PreModelSwitch", MatcherField: "to_model", ModelMatch: true, CanBlock: true, Types: chm, TimeoutRefuses: true,
		Honours: fields(FPermissionDecision), Exit2: "model switch refused; stderr is the reason"},
	{Name: "PostModelSwitch", MatcherField: "to_model", ModelMatch: true, Types: chm,
		Honours: fields(FAdditionalContext), Exit2: "stderr shown to user"},
	{Name: "PostCompact", MatcherField: "trigger", Types: chm,
		Honours: []Field{FContinue, FStopReason, FTerminalSequence}, Exit2: "stderr shown to user"},
	// decision:"block" is honoured on both since Claude Code 2.1.284 (it declines, as exit
	// 2 does).
	{Name: "Elicitation", MatcherField: "mcp_server_name", CanBlock: true, Types: chm,
		Honours: []Field{FContinue, FStopReason, FDecision, FElicitationAction, FTerminalSequence}, Exit2: "elicitation denied"},
	{Name: "ElicitationResult", MatcherField: "mcp_server_name", CanBlock: true, Types: chm,
		Honours: []Field{FContinue, FStopReason, FDecision, FElicitationAction, FTerminalSequence}, Exit2: "action becomes decline"},
	{Name: "SessionEnd", MatcherField: "reason", Types: chm, DefaultTimeout: SessionEndBudget,
		Honours: []Field{FTerminalSequence}, Exit2: "stderr shown to user"},
}

var byName = func() map[string]*Event {
	m := make(map[string]*Event, len(catalogue))
	for _, e := range catalogue {
		if e.DefaultTimeout == 0 {
			e.DefaultTimeout = defaultTimeout
		}
		m[e.Name] = e
	}
	return m
}()

// Lookup returns the event named name (case-sensitive, as Claude Code is).
func Lookup(name string) (*Event, bool) {
	e, ok := byName[name]
	return e, ok
}

// All returns every event, sorted by name.
func All() []*Event {
	out := append([]*Event(nil), catalogue...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names returns every event name, sorted.
func Names() []string {
	out := make([]string, 0, len(catalogue))
	for _, e := range All() {
		out = append(out, e.Name)
	}
	return out
}
