//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// differences are the documented ways a run through hookd differs from the same hooks
// run natively by Claude Code 2.1.330 (docs/differences.md, "Differences you will see").
// Each turns what the model saw natively into what it sees through hookd; a scenario
// that declares one fails if applying it changes nothing (Claude Code changed) or does
// not explain the difference.
var differences = map[string]struct {
	doc   string
	apply func(string, *scenario) string
}{
	// Claude Code names the hook's command in the texts of PostToolUse and Stop blocks;
	// with hookd the hook that ran is the forwarder.
	"hookc-command": {
		doc: `PostToolUse/Stop block texts name the command of the hook that ran: hookc's`,
		apply: func(s string, _ *scenario) string {
			s = fromCommand.ReplaceAllString(s, `from command: "$$HOOKC"`)
			return feedback.ReplaceAllString(s, "Stop hook feedback:\n[$$HOOKC]:")
		},
	},
	// Several hooks' additionalContext: Claude Code joins them in the order the hooks
	// finished; hookd in configuration order (deterministic). The scenarios using this
	// configure their hooks in alphabetical order of their texts.
	"context-order": {
		doc: `additionalContext of several hooks: configuration order, not finish order`,
		apply: func(s string, _ *scenario) string {
			return contextBlock.ReplaceAllStringFunc(s, func(m string) string {
				sub := contextBlock.FindStringSubmatch(m)
				lines := strings.Split(sub[2], "\n")
				sort.Strings(lines)
				return sub[1] + strings.Join(lines, "\n")
			})
		},
	},
	// A hook allow overridden by a deny rule: Claude Code denies on its own ("Permission
	// to use Bash with command … has been denied.", decided by config); hookd resolves
	// the rule itself and answers with a deny that names the rule and its file, so the
	// model and the audit say which rule won (a choice of the rules design, which also
	// keeps hookd's stricter deny-side analysis in force).
	"rule-override-reason": {
		doc: `hook allow overridden by a deny rule: hookd's deny names the rule and its file`,
		apply: func(s string, sc *scenario) string {
			if len(sc.Deny) == 0 {
				return s
			}
			// The reason also names the simple command the rule matched.
			s = ruleDenied.ReplaceAllStringFunc(s, func(m string) string {
				cmd := ruleDenied.FindStringSubmatch(m)[1]
				return fmt.Sprintf("PreToolUse:Bash hook error: hook decision \"allow\" overridden: permission rule deny(%s) in $ROOT/proj/.claude/settings.json denies this call (matched `%s`)", sc.Deny[0], cmd)
			})
			return strings.ReplaceAll(s, "reject/config/subcommandResults", "reject/hook/hook")
		},
	},
	// A {…} stdout that is not valid JSON (2.1.248): Claude Code quotes its JavaScript
	// parser's message (JavaScriptCore: `JSON Parse error: Unexpected identifier "oops"`),
	// hookd quotes Go's encoding/json (`invalid character 'o' looking for beginning of
	// value`); the words around it, the outcome and everything else are the same.
	"json-parse-message": {
		doc: `invalid {…} hook output: the parser's own message is Go's, not JavaScriptCore's`,
		apply: func(s string, sc *scenario) string {
			var goMsg string
			for _, h := range sc.Hooks {
				if m := emittedStdout.FindStringSubmatch(h.Body); m != nil {
					var v any
					if err := json.Unmarshal([]byte(m[1]), &v); err != nil {
						goMsg = err.Error()
						break
					}
				}
			}
			return jscParseError.ReplaceAllLiteralString(s, goMsg+".")
		},
	},
}

var (
	jscParseError = regexp.MustCompile(`JSON Parse error: [^\n]*?\.`)
	emittedStdout = regexp.MustCompile(`(?s)cat <<'EOF_OUT'\n(.*?)\nEOF_OUT`)
	ruleDenied    = regexp.MustCompile(`Permission to use Bash with command (.*) has been denied\.`)
	fromCommand   = regexp.MustCompile(`from command: "\$ROOT/h/[A-Za-z0-9_-]+\.sh"`)
	feedback      = regexp.MustCompile(`Stop hook feedback:\n\[\$ROOT/h/[A-Za-z0-9_-]+\.sh\]:`)
	contextBlock  = regexp.MustCompile(`(?s)^(\[system\] [A-Za-z]+(?::[A-Za-z_]+)? hook additional context: )(.*)$`)
)
