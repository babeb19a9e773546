// Package tools is the catalogue of the tool names Claude Code knows — its binary's own
// list and map of older names (test/conformance checks them against the pinned binary) —
// and the check the settings linter applies to a tool name in a permission rule, an
// `if` filter or a matcher (Problem).
package tools

import (
	"slices"
	"strings"

	"github.com/hookd/hookd/configs/suggest"
)

// ClaudeCode are the tool names Claude Code knows, as its binary lists them (2.1.332;
// 2.1.330's list is the same). `make conformance` extracts the list from the pinned binary
// and fails when it differs from this one (test/conformance), so a tool added by a new
// release is a test failure, not a false "unknown tool" finding.
var ClaudeCode = []string{
	"Agent", "Artifact", "AskUserQuestion", "Bash", "ClaudeDesign", "CronCreate", "CronDelete", "CronList",
	"Edit", "EndConversation", "EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep",
	"ListAgents", "ListMcpResourcesTool", "LSP", "Monitor", "NotebookEdit", "OfferChromeSetup", "PowerShell",
	"Projects", "propose_skills", "PushNotification", "Read", "ReadMcpResourceDirTool", "ReadMcpResourceTool",
	"ReadNotifications", "RemoteTrigger", "ReportFindings", "ScheduleWakeup", "SendFeedback", "SendMessage",
	"SendUserFile", "SendUserMessage", "SetGoal", "ShareOnboardingGuide", "ShowOnboardingRolePicker", "Skill",
	"SubagentHandback", "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "TodoWrite", "ToolSearch",
	"WaitForMcpServers", "WebFetch", "WebSearch", "Workflow", "Write",
}

// Aliases are older tool names Claude Code still accepts, and the tool each
// now is (the map beside the list in its binary).
var Aliases = map[string]string{
	"Task": "Agent", "KillShell": "TaskStop", "KillBash": "TaskStop", "ListPeers": "ListAgents",
	"Brief": "SendUserMessage", "ListMcpResources": "ListMcpResourcesTool", "ReadMcpResource": "ReadMcpResourceTool",
	"ReadMcpResourceDir": "ReadMcpResourceDirTool", "ProposeGoal": "SetGoal",
}

// olderTools are names permission rules and matchers still use for tools of earlier
// releases or of other builds (rule families, spec §8: Read(…) covers NotebookRead and LS,
// Edit(…) covers MultiEdit; the binary's BUILTIN_TOOL_NAMES has REPL and JavaScript).
var olderTools = []string{"MultiEdit", "NotebookRead", "LS", "BashOutput", "REPL", "JavaScript", "Cd"}

// knownTool reports whether name is a tool name Claude Code knows or accepts.
func knownTool(name string) bool {
	_, alias := Aliases[name]
	return alias || slices.Contains(ClaudeCode, name) || slices.Contains(olderTools, name)
}

func allToolNames() []string {
	names := append(append([]string(nil), ClaudeCode...), olderTools...)
	for a := range Aliases {
		names = append(names, a)
	}
	slices.Sort(names)
	return names
}

// Problem checks one tool name as a permission rule, an `if` filter or an exact
// matcher writes it. It returns "" for a name Claude Code knows (or an MCP tool name of
// the right shape); otherwise what is wrong, and whether it is surely a mistake (error:
// a near miss of a known name, wrong case, a malformed MCP name) or only unknown
// (warning: a tool of a newer Claude Code, or of a build hookd has not seen).
func Problem(name string) (msg string, isError bool) {
	switch {
	case name == "" || name == "*" || knownTool(name):
		return "", false
	case strings.HasPrefix(name, "mcp__"):
		server, _, _ := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
		if server == "" || server == "*" && name != "mcp__*" {
			return "an MCP tool is mcp__<server> or mcp__<server>__<tool>; this names no server, so it matches nothing", true
		}
		return "", false
	case len(name) >= 5 && strings.EqualFold(name[:5], "mcp__"):
		return `MCP tool names start with "mcp__" in lower case (did you mean "mcp__` + name[5:] + `"?); as written it matches nothing`, true
	case strings.HasPrefix(strings.ToLower(name), "mcp_") || strings.HasPrefix(strings.ToLower(name), "mcp-"):
		return `MCP tool names start with "mcp__", two underscores (did you mean "mcp__` + strings.TrimLeft(name[4:], "_-") + `"?); as written it matches nothing`, true
	}
	if s := suggest.Closest(name, allToolNames()); s != "" {
		if strings.EqualFold(s, name) {
			return "tool names are case-sensitive: did you mean " + s + "? As written it matches no tool", true
		}
		return "unknown tool; did you mean " + s + "? As written it matches no tool", true
	}
	return "no tool of Claude Code 2.1.332 is called " + name + " (an MCP tool is mcp__<server>__<tool>); as written it matches nothing", false
}

// RuleTool is the tool-name part of a permission rule or `if` filter: "Bash" of
// "Bash(git *)", the whole text when it has no specifier.
func RuleTool(text string) string {
	t := strings.TrimSpace(text)
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}
