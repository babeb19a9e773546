package harness

import (
	"encoding/json"

	"github.com/hookd/hookd/protocol"
)

// geminiOnly are Gemini CLI event names no other harness uses.
var geminiOnly = map[string]bool{"BeforeTool": true, "AfterTool": true, "BeforeAgent": true, "AfterAgent": true,
	"BeforeModel": true, "AfterModel": true, "BeforeToolSelection": true, "PreCompress": true}

// codexEvents are the events Codex CLI 0.171.0 sends (as 0.169.0 did).
var codexEvents = map[string]bool{"SessionStart": true, "SessionEnd": true, "UserPromptSubmit": true,
	"PreToolUse": true, "PermissionRequest": true, "PostToolUse": true, "PreCompact": true, "PostCompact": true,
	"SubagentStart": true, "SubagentStop": true, "Stop": true, "Interrupt": true}

// Detect names the harness that produced payload when the request does not say
// (Request.Harness empty). The rules, in order, use facts each harness's payloads carry
// and the others' do not (captured from Claude Code 2.1.330, Codex 0.169.0, Gemini CLI
// 0.61.0):
//
//  1. a transcript_path under a ".claude" directory → claude-code;
//  2. a Gemini CLI event name (BeforeTool, AfterAgent, ...), or a top-level "timestamp"
//     with a transcript_path under a ".gemini" directory → gemini;
//  3. the event "Interrupt", a transcript_path under ".codex", or a Codex event carrying
//     turn_id, model and permission_mode together (Codex's turn-scoped payloads; Claude
//     Code sends turn_id only on MessageDisplay, which Codex lacks) → codex;
//  4. anything else → claude-code.
//
// Detection is a convenience for callers that speak the protocol themselves; installed
// forwarders pass --harness explicitly, which always wins.
func Detect(payload []byte) string {
	var top struct {
		Event      string           `json:"hook_event_name"`
		Timestamp  *json.RawMessage `json:"timestamp"`
		TurnID     *json.RawMessage `json:"turn_id"`
		Model      *json.RawMessage `json:"model"`
		Mode       *json.RawMessage `json:"permission_mode"`
		Transcript *string          `json:"transcript_path"`
	}
	if json.Unmarshal(payload, &top) != nil {
		return protocol.HarnessClaudeCode
	}
	transcript := ""
	if top.Transcript != nil {
		transcript = *top.Transcript
	}
	switch {
	case containsPathPart(transcript, ".claude"):
		return protocol.HarnessClaudeCode
	case geminiOnly[top.Event], top.Timestamp != nil && containsPathPart(transcript, ".gemini"):
		return protocol.HarnessGemini
	case top.Event == "Interrupt", containsPathPart(transcript, ".codex"),
		codexEvents[top.Event] && top.TurnID != nil && top.Model != nil && top.Mode != nil:
		return protocol.HarnessCodex
	}
	return protocol.HarnessClaudeCode
}

func containsPathPart(p, part string) bool {
	for len(p) > 0 {
		i := 0
		for i < len(p) && p[i] != '/' {
			i++
		}
		if p[:i] == part {
			return true
		}
		if i == len(p) {
			break
		}
		p = p[i+1:]
	}
	return false
}
