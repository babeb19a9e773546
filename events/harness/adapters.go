package harness

import (
	"time"

	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

var claudeCode = &Adapter{Name: protocol.HarnessClaudeCode, TimeoutUnit: time.Second}

// codex: Codex CLI 0.171.0 (schemas unchanged since 0.169.0). Its payloads are Claude Code's shape (hook_event_name,
// tool_name "Bash" for its exec_command tool, tool_input.command, tool_use_id), so the
// maps are identities; what differs is the output (strict per-event schemas, see
// codexSchemas) and the twelfth event, Interrupt.
var codex = &Adapter{
	Name: protocol.HarnessCodex,
	Events: map[string]string{
		"SessionStart": "SessionStart", "SessionEnd": "SessionEnd", "UserPromptSubmit": "UserPromptSubmit",
		"PreToolUse": "PreToolUse", "PermissionRequest": "PermissionRequest", "PostToolUse": "PostToolUse",
		"PreCompact": "PreCompact", "PostCompact": "PostCompact", "SubagentStart": "SubagentStart",
		"SubagentStop": "SubagentStop", "Stop": "Stop",
	},
	Local: map[string]*events.Event{
		// Interrupt (interrupt.command.input/output): the user interrupted a turn. Its output
		// schema has only systemMessage: it cannot block.
		"Interrupt": {Name: "Interrupt", Types: []events.HandlerType{events.Command},
			DefaultTimeout: 600 * time.Second, ExitCodeIgnored: true,
			Honours: []events.Field{events.FSystemMessage}, Exit2: "no effect"},
	},
	Tools: map[string]Tool{},
	Forward: []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
		"PreCompact", "PostCompact", "SubagentStart", "SubagentStop", "Stop", "Interrupt", "SessionEnd"},
	TimeoutUnit: time.Second,
}

// gemini: Gemini CLI 0.61.0 (bundle: HookEventName, the *_TOOL_NAME and PARAM_* constants).
var gemini = &Adapter{
	Name: protocol.HarnessGemini,
	Events: map[string]string{
		"SessionStart": "SessionStart", "SessionEnd": "SessionEnd",
		"BeforeAgent": "UserPromptSubmit", "AfterAgent": "Stop",
		"BeforeTool": "PreToolUse", "AfterTool": "PostToolUse",
		"PreCompress": "PreCompact", "Notification": "Notification",
	},
	Tools: map[string]Tool{
		"run_shell_command": {Name: "Bash"},
		"read_file":         {Name: "Read"},
		"write_file":        {Name: "Write"},
		"replace":           {Name: "Edit"},
		"glob":              {Name: "Glob", Fields: map[string]string{"dir_path": "path"}},
		"grep_search":       {Name: "Grep", Fields: map[string]string{"dir_path": "path"}},
		"google_web_search": {Name: "WebSearch"},
	},
	Fields: map[string]map[string]string{
		// AfterAgent's prompt_response is the turn's last answer: Stop's last_assistant_message.
		"Stop": {"prompt_response": "last_assistant_message"},
	},
	Forward: []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent",
		"PreCompress", "Notification", "SessionEnd"},
	TimeoutUnit: time.Millisecond,
}
