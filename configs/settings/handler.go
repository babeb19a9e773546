package settings

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookd/hookd/configs/settings/cmdcheck"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/matcher"
	"github.com/hookd/hookd/protocol"
	"github.com/hookd/hookd/rules"
)

// Handler is one compiled hook handler. It is immutable once its Snapshot is built;
// callers must not modify it.
type Handler struct {
	// ID is "<source>:<file>#<Event>[<group>].hooks[<index>]": stable across reloads
	// while the handler's place in its file is unchanged.
	ID    string
	Event *events.Event
	Type  events.HandlerType

	// command handlers. Exec form (no shell; spec §3.2, 2.1.139) iff Args != nil.
	Command string
	Args    []string
	Shell   string // as written; "" means the default (bash family; sh -c on Linux/macOS)

	// If is the compiled `if` filter (nil when absent); IfText is it as written.
	If     *rules.If
	IfText string

	// Timeout is the explicit "timeout"; 0 means the event default (EffectiveTimeout).
	Timeout       time.Duration
	Async         bool // also true when AsyncRewake is (it implies async)
	AsyncRewake   bool
	StatusMessage string
	// OnFailure is "block" when a failure of the hook (it could not start, timed out,
	// exited with a code other than 0 and 2, or printed invalid JSON) must block the
	// action, as Claude Code 2.1.295+ does; "" or "continue" otherwise. See FailsClosed.
	OnFailure string

	// http handlers.
	URL            string
	Headers        map[string]string
	AllowedEnvVars []string

	// mcp_tool handlers.
	Server, Tool string
	Input        json.RawMessage

	// prompt and agent handlers.
	Prompt, Model   string
	ContinueOnBlock bool

	// Matcher is the group's compiled matcher; nil (match everything) for events without a
	// matcher field, where Claude Code ignores it. MatcherText is the group matcher as written.
	Matcher     *matcher.Matcher
	MatcherText string

	// A harness's own hook (harness.go): Harness names the harness, NativeEvent the
	// event under which the harness's file lists it, Sequential its group's flag, Name
	// its name there. "" and false for every other hook.
	Harness, NativeEvent, Name string
	Sequential                 bool

	Source Kind // the file's label: FileRef.Origin, or its Kind
	// Plugin is the plugin the hook comes from (KindPlugin files, and a plugin's
	// skills); nil otherwise.
	Plugin *Plugin
	// Frontmatter is the subagent or skill whose frontmatter holds the hook (KindAgent,
	// KindSkill files); nil otherwise. A subagent's hooks run only for its own events
	// (Query.AgentType); a skill's only once the session invoked it (Snapshot.SkillMatch).
	Frontmatter *Frontmatter
	// Once: a skill's hook with "once": true, removed from the session after its first
	// successful run (OnceRemoves says when Claude Code 2.1.332 manages to).
	Once bool

	File  string // the settings file's path
	Group int    // index of the matcher group in the event's array
	Index int    // index of the handler in the group's "hooks"

	// Refused says why hookd must not run this handler at all: its managed file failed
	// CheckManaged. An event it matches fails closed where the event can block. "" for
	// every handler of a trusted file.
	Refused string
	// Runnable: hookd runs the handler itself (command and http). prompt, agent and
	// mcp_tool handlers need the harness's model or MCP connections; they are reported as
	// not run.
	Runnable bool
	// Key identifies identical handlers for dedup: type, command, args and shell for
	// command handlers; the URL for http; type plus the defining fields for the others.
	Key string
	// Raw is the handler's JSON as written in the file.
	Raw json.RawMessage
}

// Ref returns the handler's identity for frames, results and audit records.
func (h *Handler) Ref() protocol.HookRef {
	ref := protocol.HookRef{
		ID:      h.ID,
		Source:  h.Label(),
		File:    h.File,
		Matcher: h.MatcherText,
		Type:    string(h.Type),
	}
	if h.Event != nil {
		ref.Event = h.Event.Name
	}
	if h.Plugin != nil {
		ref.Version = h.Plugin.Version
	}
	switch h.Type {
	case events.Command:
		ref.Command = h.CommandLine()
	case events.HTTP:
		ref.Command = h.URL
	case events.MCPTool:
		ref.Command = h.Server + "/" + h.Tool
	}
	return ref
}

// Label is the hook's source name: "agent:<type>", "skill:<name>" or
// "plugin:<name>@<marketplace>/skill:<name>" for a frontmatter hook,
// "plugin:<name>@<marketplace>" for a plugin's hook, else its file's label (managed,
// user, project, local, flag).
func (h *Handler) Label() string {
	if h.Frontmatter != nil {
		return h.Frontmatter.Label()
	}
	if h.Plugin != nil {
		return h.Plugin.Label()
	}
	return string(h.Source)
}

// CommandLine is the command as a person would read it: the shell string, or for the exec
// form the executable and its arguments, each quoted when needed.
func (h *Handler) CommandLine() string {
	if h.Args == nil {
		return h.Command
	}
	var b strings.Builder
	b.WriteString(quoteArg(h.Command))
	for _, a := range h.Args {
		b.WriteByte(' ')
		b.WriteString(quoteArg(a))
	}
	return b.String()
}

func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>()*?[]{}~#!") {
		return s
	}
	return strconv.Quote(s)
}

// onFailure values (Claude Code 2.1.295).
const (
	OnFailureContinue = "continue"
	OnFailureBlock    = "block"
)

// OnFailureIgnoredOn reports whether Claude Code ignores onFailure on event: Stop,
// SubagentStop, TaskCompleted and TeammateIdle (the 2.1.330 binary's own set; a failure
// there would keep the agent running forever).
func OnFailureIgnoredOn(event string) bool {
	switch event {
	case "Stop", "SubagentStop", "TaskCompleted", "TeammateIdle":
		return true
	}
	return false
}

// FailsClosed reports whether a failure of this handler blocks the action: onFailure
// "block" on a synchronous command or http handler, on an event where Claude Code honours
// it (Claude Code 2.1.330: `onFailure==="block" && !async && !asyncRewake`, not on the
// OnFailureIgnoredOn events).
func (h *Handler) FailsClosed() bool {
	if h.OnFailure != OnFailureBlock || h.Async || (h.Type != events.Command && h.Type != events.HTTP) {
		return false
	}
	return h.Event == nil || !OnFailureIgnoredOn(h.Event.Name)
}

// EffectiveTimeout is the explicit timeout, or the event's default (spec §3.2: 600 s for
// command/http/mcp_tool, lowered for UserPromptSubmit and MessageDisplay; 30 s for
// prompt; 60 s for agent).
func (h *Handler) EffectiveTimeout() time.Duration {
	if h.Timeout > 0 {
		return h.Timeout
	}
	switch h.Type {
	case events.Prompt:
		return 30 * time.Second
	case events.Agent:
		return 60 * time.Second
	}
	if h.Event != nil && h.Event.DefaultTimeout > 0 {
		return h.Event.DefaultTimeout
	}
	return 600 * time.Second
}

// handlerKey builds the dedup key (see Handler.Key). Claude Code deduplicates command
// hooks by command string and args and HTTP hooks by URL (spec §3.5); for the types hookd
// does not run, the defining fields stand in.
//
// A fail-closed handler (onFailure "block") never folds into one without it: whichever
// copy Claude Code keeps, hookd would rather run the command twice than drop the copy
// that blocks on failure.
func handlerKey(h *Handler) string {
	if h.OnFailure == OnFailureBlock {
		h2 := *h
		h2.OnFailure = ""
		return handlerKey(&h2) + "\x00onFailure=block"
	}
	switch h.Type {
	case events.Command:
		if h.Args != nil {
			b, _ := json.Marshal(append([]string{h.Command}, h.Args...))
			return "command\x00exec\x00" + string(b)
		}
		shell := h.Shell
		if shell == "" {
			shell = "bash"
		}
		return "command\x00" + shell + "\x00" + h.Command
	case events.HTTP:
		return "http\x00" + h.URL
	case events.MCPTool:
		return "mcp_tool\x00" + canonicalJSON(map[string]any{"server": h.Server, "tool": h.Tool, "input": rawAny(h.Input)})
	default:
		return string(h.Type) + "\x00" + canonicalJSON(map[string]any{"prompt": h.Prompt, "model": h.Model})
	}
}

func rawAny(r json.RawMessage) any {
	if len(r) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(r, &v) != nil {
		return string(r)
	}
	return v
}

// canonicalJSON marshals v with sorted object keys (encoding/json sorts map keys).
func canonicalJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// IsForwarder reports whether a command handler runs hookc, the forwarder to hookd: its
// program (the first word of a shell-form command after any VAR=value assignments, or
// the command itself in exec form) is named hookc. hookd never runs such a handler — it
// would forward the event to itself — and `hookd install claude-code` treats it as its
// own forwarder.
func IsForwarder(command string, args []string) bool {
	return filepath.Base(cmdcheck.Program(command, args)) == "hookc"
}
