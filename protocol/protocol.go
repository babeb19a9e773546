package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Version is the protocol version this package speaks.
const Version = 1

// DefaultMaxRequestBytes is the default limit on one event payload — what hookc reads
// from stdin, and what the daemon accepts as a request's event. Write tool inputs can
// carry whole files, so the limit is generous; a daemon may be configured lower or higher.
const DefaultMaxRequestBytes = 16 << 20

// MaxRequestLine is the longest request line that can carry a payload of maxPayload
// bytes: hookc sends the payload as a JSON string, where a character may take up to six
// bytes (\u003c), and adds its environment (1 MiB allowed). The daemon limits the line
// to this and the payload to maxPayload, so a payload hookc accepts is never refused as
// too large because of its escaping (a 9 MiB quote-heavy Write used to be).
func MaxRequestLine(maxPayload int) int { return 6*maxPayload + 1<<20 }

// Ops a request can carry.
const (
	OpEvent  = "event"
	OpPing   = "ping"
	OpStatus = "status"
	OpReload = "reload"
)

// Request is one line a client sends.
type Request struct {
	V     int             `json:"v"`
	Op    string          `json:"op,omitempty"`
	ID    string          `json:"id,omitempty"`
	Event json.RawMessage `json:"event,omitempty"`
	// EventText carries the payload as exact text, for clients that must preserve its
	// bytes (hookc: Claude Code pretty-prints payloads, and a hook may depend on the
	// layout or the trailing newline). Encoding it as a string also keeps NDJSON framing
	// intact when the payload spans lines. At most one of Event and EventText is set.
	EventText  string   `json:"event_text,omitempty"`
	Env        []string `json:"env,omitempty"`
	ProjectDir string   `json:"project_dir,omitempty"`
	// Harness names the agent that sent the event (HarnessClaudeCode, HarnessCodex,
	// HarnessGemini): it decides how the payload's event and tool names map onto hookd's
	// catalogue and in which format the answer is rendered. hookc sets it from its
	// --harness flag (the installed forwarder carries it); when empty the daemon detects
	// the harness from the payload (events/harness.Detect).
	Harness string `json:"harness,omitempty"`
	// HarnessVersion is the harness's version when the caller knows it; the daemon may
	// also find it from the payload (Codex: the transcript's session_meta).
	HarnessVersion string  `json:"harness_version,omitempty"`
	Options        Options `json:"options,omitempty"`
}

// Options are per-request knobs.
type Options struct {
	// ResultOnly asks the daemon to send only the final result (or error) frame.
	ResultOnly bool `json:"result_only,omitempty"`
	// Client names the caller for logs and the audit record, as "name/version"
	// ("hookc/0.4.1", "my-harness/1.2"): `hookd status` lists the clients it heard from
	// and flags a hookc whose version is not the daemon's. (A version travels inside this
	// field rather than in one of its own because requests are decoded strictly: an older
	// daemon would refuse an unknown field, but takes any name.)
	Client string `json:"client,omitempty"`
}

// FrameType names a frame kind.
type FrameType string

// The frame kinds: the seven result variants, then the two terminal frames.
const (
	FrameMessage             FrameType = "message"
	FramePermission          FrameType = "permission"
	FrameUpdatedInput        FrameType = "updated_input"
	FramePreventContinuation FrameType = "prevent_continuation"
	FrameStopReason          FrameType = "stop_reason"
	FrameAdditionalContext   FrameType = "additional_context"
	FrameStop                FrameType = "stop"
	FrameResult              FrameType = "result"
	FrameError               FrameType = "error"
)

// Terminal reports whether a frame of this type ends an answer.
func (t FrameType) Terminal() bool { return t == FrameResult || t == FrameError }

// Message kinds carried by "message" frames.
const (
	MsgStarted       = "started"
	MsgFinished      = "finished"
	MsgError         = "error"
	MsgTimeout       = "timeout"
	MsgCancelled     = "cancelled"
	MsgNotRun        = "not_run"
	MsgWarning       = "warning"
	MsgSystemMessage = "system_message"
)

// Frame is one line of an answer. Which fields are set depends on Type.
type Frame struct {
	Type FrameType `json:"type"`
	V    int       `json:"v,omitempty"`
	// ID echoes Request.ID on terminal frames.
	ID   string   `json:"id,omitempty"`
	Hook *HookRef `json:"hook,omitempty"`

	// message
	Kind       string   `json:"kind,omitempty"`
	Text       string   `json:"text,omitempty"`
	ExitCode   *int     `json:"exit_code,omitempty"`
	DurationMS *float64 `json:"duration_ms,omitempty"`

	// permission (also Reason for stop and stop_reason)
	Decision     string   `json:"decision,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	Source       string   `json:"source,omitempty"`
	OverriddenBy *RuleRef `json:"overridden_by,omitempty"`
	// Via (permission and stop frames) is set when the deny or block is a hook failure
	// turned into one rather than the hook's answer: "on_failure" (the handler's
	// "onFailure": "block") or "on_timeout" (hookd's on_timeout: deny). Hook names it.
	Via string `json:"via,omitempty"`

	// updated_input
	Input json.RawMessage `json:"input,omitempty"`

	// additional_context
	Context string `json:"context,omitempty"`

	// result / error
	Result *Result `json:"result,omitempty"`
	Error  *Error  `json:"error,omitempty"`
	// Data carries the answer to ops other than "event" (ping, status, reload) in a
	// result frame.
	Data json.RawMessage `json:"data,omitempty"`
}

// HookRef identifies one configured handler.
type HookRef struct {
	// ID is stable across reloads while the handler's place in its file is unchanged:
	// "<source>:<file>#<Event>[<group>].hooks[<index>]".
	ID      string `json:"id"`
	Source  string `json:"source,omitempty"` // managed | user | project | local | flag | plugin:<name>@<marketplace>
	File    string `json:"file,omitempty"`
	Event   string `json:"event,omitempty"`
	Matcher string `json:"matcher,omitempty"`
	Type    string `json:"type,omitempty"` // command | http | prompt | agent | mcp_tool
	Command string `json:"command,omitempty"`
	// Version is the version of the plugin the hook comes from (Source
	// "plugin:<name>@<marketplace>"); "" for other sources.
	Version string `json:"version,omitempty"`
}

// RuleRef names a permission rule and the settings file it came from.
type RuleRef struct {
	Rule   string `json:"rule"`
	List   string `json:"list"` // allow | ask | deny
	File   string `json:"file,omitempty"`
	Source string `json:"source,omitempty"`
}

// Permission is a permission decision with its provenance.
type Permission struct {
	Decision     string   `json:"decision"` // allow | deny | ask | defer
	Reason       string   `json:"reason,omitempty"`
	Source       string   `json:"source,omitempty"` // hook | rule
	Hook         *HookRef `json:"hook,omitempty"`
	OverriddenBy *RuleRef `json:"overridden_by,omitempty"`
	// Via is "on_failure" or "on_timeout" when the deciding hook did not answer but
	// failed, and its handler (onFailure: block) or hookd's configuration (on_timeout:
	// deny) turned the failure into this deny. Hook is that handler.
	Via string `json:"via,omitempty"`
}

// HookOutcome summarises what one handler did for this event.
type HookOutcome struct {
	Hook       HookRef `json:"hook"`
	Outcome    string  `json:"outcome"` // ok | blocked | error | timeout | cancelled | not_run
	ExitCode   *int    `json:"exit_code,omitempty"`
	DurationMS float64 `json:"duration_ms"`
	Error      string  `json:"error,omitempty"`
	// Via is "on_failure" or "on_timeout" when the hook failed (Error says how) and the
	// failure was turned into its block or deny (Outcome "blocked").
	Via string `json:"via,omitempty"`
}

// Outcome values.
const (
	OutcomeOK        = "ok"
	OutcomeBlocked   = "blocked"
	OutcomeError     = "error"
	OutcomeTimeout   = "timeout"
	OutcomeCancelled = "cancelled"
	OutcomeNotRun    = "not_run"
)

// Result is the merged answer to one event.
type Result struct {
	DecisionID string `json:"decision_id"`
	// Event is hookd's (Claude Code's) name of the event; NativeEvent the harness's own
	// name when it differs (Gemini CLI's "BeforeTool" for "PreToolUse").
	Event       string `json:"event"`
	NativeEvent string `json:"native_event,omitempty"`
	// Harness is the agent the answer is rendered for (HarnessClaudeCode when empty).
	Harness string `json:"harness,omitempty"`
	// Revision is the hash of every settings source the answer was computed from.
	Revision string `json:"revision,omitempty"`
	// Mode is "parallel" or "sequential".
	Mode string `json:"mode,omitempty"`

	// Permission is the final permission decision after permission rules (tool events
	// only); HookPermission is what the hooks alone decided.
	Permission     *Permission `json:"permission,omitempty"`
	HookPermission *Permission `json:"hook_permission,omitempty"`
	// RuleAnswer is the permission rules' own answer for the tool call. When no hook
	// decided, it is reported here but not rendered: the harness keeps the final say.
	RuleAnswer *Permission `json:"rule_answer,omitempty"`

	UpdatedInput        json.RawMessage `json:"updated_input,omitempty"`
	PreventContinuation bool            `json:"prevent_continuation,omitempty"`
	StopReason          string          `json:"stop_reason,omitempty"`
	// Block is set when a hook blocked the action this event guards.
	Block             *Block   `json:"block,omitempty"`
	AdditionalContext []string `json:"additional_context,omitempty"`
	// PlainContext marks, index for index, the AdditionalContext entries that came from a
	// hook's plain stdout rather than JSON additionalContext: Claude Code labels the two
	// differently ("hook success" vs "hook additional context"), so the renderer keeps them
	// apart. nil when none did.
	PlainContext   []bool   `json:"plain_context,omitempty"`
	SystemMessages []string `json:"system_messages,omitempty"`
	// CompactInstructions is what PreCompact hooks printed as plain text, joined with a
	// blank line in configuration order: Claude Code appends it to the compaction's
	// custom instructions. Rendered as plain stdout.
	CompactInstructions string `json:"compact_instructions,omitempty"`
	// Specific holds the other merged event-specific output fields the event honours,
	// keyed by their Claude Code name (sessionTitle, watchPaths, updatedToolOutput,
	// updatedPermissions, terminalSequence, worktreePath, ...), for rendering.
	Specific map[string]json.RawMessage `json:"specific,omitempty"`

	// Output, Stdout, Stderr and ExitCode are the Claude Code hook answer (see Render).
	Output   json.RawMessage `json:"output,omitempty"`
	Stdout   string          `json:"stdout,omitempty"`
	Stderr   string          `json:"stderr,omitempty"`
	ExitCode int             `json:"exit_code"`

	Hooks    []HookOutcome `json:"hooks,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	// Fallback is set on an answer made in-process because the client could not reach
	// the daemon (`hookd run --fallback REASON`, hookc's fallback): why.
	Fallback string `json:"fallback,omitempty"`
}

// Block is a blocking decision and its reason.
type Block struct {
	Reason string   `json:"reason"`
	Hook   *HookRef `json:"hook,omitempty"`
	// Via says how the hooks blocked: "exit2" when every block came from exit code 2,
	// "exit" for a WorktreeCreate hook failing with another non-zero code (or not
	// starting), "on_failure" when every block was a failed hook whose handler says
	// "onFailure": "block", "on_timeout" when every block was a timeout hookd's
	// on_timeout: deny turned into one, "json" otherwise (decision:"block" and friends).
	Via string `json:"via,omitempty"`
}

// Error codes carried by "error" frames.
const (
	CodeBadRequest         = "bad_request"
	CodeUnsupportedVersion = "unsupported_version"
	CodeUnknownEvent       = "unknown_event"
	CodeTooLarge           = "too_large"
	CodeForbidden          = "forbidden"
	CodeAuditFailed        = "audit_failed"
	CodeShuttingDown       = "shutting_down"
	CodeBusy               = "busy" // a resource limit (connections per uid, request bytes in flight) was reached
	CodeInternal           = "internal"
)

// Error is the body of an "error" frame. It implements error, so a client can use
// errors.As to inspect it.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Event   string `json:"event,omitempty"`
	Field   string `json:"field,omitempty"`
}

func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("hookd: %s: %s", e.Code, e.Message)
}

// Is lets errors.Is match on code: errors.Is(err, &protocol.Error{Code: protocol.CodeUnknownEvent}).
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) || t == nil {
		return false
	}
	return t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Errorf builds an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorFrame wraps an error in a terminal frame. A non-*Error becomes code "internal".
func ErrorFrame(id string, err error) Frame {
	var pe *Error
	if !errors.As(err, &pe) {
		pe = &Error{Code: CodeInternal, Message: err.Error()}
	}
	return Frame{Type: FrameError, V: Version, ID: id, Error: pe}
}

// Harness names (Request.Harness).
const (
	HarnessClaudeCode = "claude-code"
	HarnessCodex      = "codex"
	HarnessGemini     = "gemini"
)

// Ping is the answer to an OpPing request, carried in a result frame's Data.
type Ping struct {
	Versions []int  `json:"versions"`
	Daemon   string `json:"daemon"`
	PID      int    `json:"pid"`
}
