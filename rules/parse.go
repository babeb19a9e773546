package rules

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// specKind says how a rule's specifier is matched.
type specKind int

const (
	specNone       specKind = iota // bare tool name, or Tool(*)
	specBash                       // Bash(command pattern)
	specPowerShell                 // PowerShell(command pattern)
	specPath                       // Read(path), Edit(path)
	specDomain                     // WebFetch(domain:host)
	specParam                      // Tool(param:value), deny/ask/if only
	specAgent                      // Agent(type), Task(type)
	specSkill                      // Skill(name …)
	specGeneric                    // any other Tool(specifier): glob on the primary string field
)

// family groups tools that one rule name covers (spec §8).
type family int

const (
	famNone family = iota
	famRead
	famEdit
)

var (
	// Read(…) rules cover the tools that read files; Edit(…) rules cover all
	// edit tools (spec §8).
	readTools  = []string{"Read", "Glob", "Grep", "LS", "NotebookRead"}
	editTools  = []string{"Edit", "Write", "MultiEdit", "NotebookEdit"}
	agentTools = []string{"Agent", "Task"} // Task is the pre-2.1.63 name of Agent
)

// knownParams lists the tool_input fields of built-in tools, so that
// "name:value" is read as a param rule only when name is a real field
// (plugin agent types and skills contain colons: "my-plugin:reviewer").
// The first entry is the tool's primary field: a param rule on it is an error.
var knownParams = map[string][]string{
	"Bash":         {"command", "timeout", "description", "run_in_background", "dangerouslyDisableSandbox"},
	"PowerShell":   {"command", "timeout", "description", "run_in_background"},
	"Read":         {"file_path", "offset", "limit", "pages"},
	"Edit":         {"file_path", "old_string", "new_string", "replace_all"},
	"Write":        {"file_path", "content"},
	"MultiEdit":    {"file_path", "edits"},
	"NotebookEdit": {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"},
	"NotebookRead": {"notebook_path", "cell_id"},
	"Glob":         {"path", "pattern"},
	"Grep":         {"path", "pattern", "glob", "type", "output_mode", "-i", "-n", "multiline"},
	"LS":           {"path", "ignore"},
	"WebFetch":     {"url", "prompt"},
	"WebSearch":    {"query", "allowed_domains", "blocked_domains"},
	"Agent":        {"subagent_type", "description", "prompt", "model", "run_in_background", "name", "team_name", "mode", "isolation", "resume", "cwd"},
	"Task":         {"subagent_type", "description", "prompt", "model", "run_in_background", "name", "team_name", "mode", "isolation", "resume", "cwd"},
	"Skill":        {"skill", "args"},
}

// genericFields are tried in order for Tool(specifier) on tools without a
// dedicated grammar: the first string field present is matched.
var genericFields = []string{"command", "file_path", "url", "pattern", "skill", "prompt"}

// toolMatch matches the tool-name part of a rule.
type toolMatch struct {
	any    bool      // "*"
	names  []string  // exact names (a family for Read/Edit/Agent)
	server string    // "mcp__server": that server's tools
	glob   *starGlob // tool-name glob (mcp__server__*, deny/ask "mcp__*")
}

func (t *toolMatch) match(tool string) bool {
	switch {
	case t.any:
		return true
	case t.server != "":
		return tool == t.server || (strings.HasPrefix(tool, t.server) && strings.HasPrefix(tool[len(t.server):], "__"))
	case t.glob != nil:
		return t.glob.match(tool)
	}
	for _, n := range t.names {
		if n == tool {
			return true
		}
	}
	return false
}

// Parse compiles one permission rule for list (allow, ask or deny). The
// error names the rule text and the reason; the caller (config loader) adds
// the file, list and index.
func Parse(text string, list List, origin Origin) (*Rule, error) {
	switch list {
	case Allow, Ask, Deny:
	default:
		return nil, fmt.Errorf("rules: %q: unknown list %q (want allow, ask or deny)", strings.TrimSpace(text), string(list))
	}
	return parse(text, list, origin)
}

func parse(text string, list List, origin Origin) (*Rule, error) {
	t := strings.TrimSpace(text)
	fail := func(format string, a ...any) (*Rule, error) {
		return nil, fmt.Errorf("rules: %q: %s", t, fmt.Sprintf(format, a...))
	}
	if t == "" {
		return fail("empty rule")
	}
	r := &Rule{Text: t, List: list, Origin: origin}

	name, spec, hasSpec := t, "", false
	if i := strings.IndexByte(t, '('); i >= 0 {
		if !strings.HasSuffix(t, ")") {
			if strings.IndexByte(t[i:], ')') >= 0 {
				return fail("unexpected text after the closing parenthesis")
			}
			return fail("missing closing parenthesis")
		}
		name, spec, hasSpec = t[:i], t[i+1:len(t)-1], true
	} else if strings.IndexByte(t, ')') >= 0 {
		return fail("unbalanced parentheses")
	}
	if name == "" {
		return fail("missing tool name before '('")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '*') {
			if c == ' ' || c == '\t' {
				return fail("space in tool name (write Tool(specifier) with no space before '(')")
			}
			return fail("invalid character %s in tool name %q", quoteByte(c), name)
		}
	}
	if hasSpec {
		if strings.TrimSpace(spec) == "" {
			return fail("empty specifier (write %s alone to match every call)", name)
		}
		if !balanced(spec) {
			return fail("unbalanced parentheses in specifier")
		}
		if strings.TrimSpace(spec) == "*" {
			hasSpec = false // Tool(*) is the same as Tool
		}
	}

	if err := r.compileTool(name, hasSpec, list); err != "" {
		return fail("%s", err)
	}
	if !hasSpec {
		return r, nil
	}
	if err := r.compileSpec(name, spec, list, origin); err != "" {
		if strings.HasPrefix(err, ignoredPrefix) {
			return nil, fmt.Errorf("rules: %q: %s: %w", t, strings.TrimPrefix(err, ignoredPrefix), ErrIgnored)
		}
		return fail("%s", err)
	}
	return r, nil
}

// ErrIgnored marks a rule Claude Code accepts but never consults, such as Write(…) or
// Glob(…) path rules (2.1.210 warns about them). The loader turns it into a warning
// instead of rejecting the settings file: rejecting would drop the file's hooks and
// other rules over a rule that has no effect in Claude Code either.
//
//lint:ignore ST1005 "Claude Code" is a name, not the start of a sentence.
var ErrIgnored = errors.New("Claude Code ignores this rule")

const ignoredPrefix = "\x00ignored:"

// balanced reports whether parentheses in spec balance, ignoring escaped
// ones and (when quotes are closed) quoted ones: `Bash(echo ")")` is fine.
func balanced(spec string) bool {
	depth := 0
	for i := 0; i < len(spec); i++ {
		switch c := spec[i]; c {
		case '\\':
			i++
		case '\'', '"':
			if j := strings.IndexByte(spec[i+1:], c); j >= 0 {
				i += j + 1
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// compileTool validates the tool name and fills r.tool.
func (r *Rule) compileTool(name string, hasSpec bool, list List) string {
	star := strings.Contains(name, "*")
	if name == "*" {
		if list == Allow {
			return "a bare * allow rule would allow every tool; tool-name globs in allow rules must follow a literal mcp__<server>__ (spec §8)"
		}
		if hasSpec {
			return "* takes no specifier"
		}
		r.tool.any = true
		return ""
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if hasSpec {
			return "MCP rules take no specifier: use mcp__server, mcp__server__* or mcp__server__tool (Claude Code skips MCP rules with parentheses)"
		}
		server, tool, isTool := strings.Cut(rest, "__")
		switch {
		case server == "" && !star:
			return "missing MCP server name after mcp__"
		case strings.Contains(server, "*"):
			if list == Allow {
				return "tool-name globs in allow rules must follow a literal mcp__<server>__ (Claude Code skips " + name + " in allow)"
			}
			r.tool.glob = compileStarGlob(name, false, false)
		case !isTool:
			r.tool.server = name
		case tool == "":
			return "missing MCP tool name after mcp__" + server + "__"
		case tool == "*":
			r.tool.server = "mcp__" + server
		case strings.Contains(tool, "*"):
			r.tool.glob = compileStarGlob(name, false, false)
		default:
			r.tool.names = []string{name}
		}
		return ""
	}
	if star {
		if list == Allow {
			return "tool-name globs in allow rules must follow a literal mcp__<server>__ (spec §8)"
		}
		if hasSpec {
			return "a tool-name glob takes no specifier"
		}
		r.tool.glob = compileStarGlob(name, false, false)
		return ""
	}
	switch name {
	case "Read":
		r.tool.names = readTools
	case "Edit":
		r.tool.names = editTools
	case "Agent", "Task":
		r.tool.names = agentTools
	default:
		r.tool.names = []string{name}
	}
	return ""
}

// paramRule splits "name:value" when name is a known field of tool (or any
// identifier, for tools without a known schema).
func paramRule(tool, spec string) (param, value string, ok bool) {
	name, value, found := strings.Cut(spec, ":")
	if !found || !isParamName(name) {
		return "", "", false
	}
	known, isKnown := knownParams[tool]
	if !isKnown {
		return name, value, true
	}
	return name, value, slices.Contains(known, name)
}

func isParamName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		word := c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !word && !(c == '-' && i == 0) {
			return false
		}
	}
	return true
}

// compileSpec compiles the specifier of Tool(spec).
func (r *Rule) compileSpec(tool, spec string, list List, origin Origin) string {
	// Legacy Bash prefix form "npm run:*" == "npm run *" (spec §8), checked
	// before param rules so that Bash(timeout:*) keeps its old meaning.
	if (tool == "Bash" || tool == "PowerShell") && strings.HasSuffix(spec, ":*") {
		prefix := spec[:len(spec)-2]
		if strings.TrimSpace(prefix) == "" {
			return "empty command before legacy :* suffix"
		}
		spec = prefix + " *"
	} else if param, value, ok := paramRule(tool, spec); ok {
		return r.compileParam(tool, param, value, list)
	}

	switch tool {
	case "Bash":
		r.spec = specBash
		r.glob = compileStarGlob(spec, true, false)
		r.namesMore = namesMoreThanCommand(spec)
	case "PowerShell":
		// spec §8: same shape as Bash, case-insensitive.
		r.spec = specPowerShell
		r.glob = compileStarGlob(spec, true, true)
		r.namesMore = namesMoreThanCommand(spec)
	case "Read", "Edit":
		r.spec = specPath
		r.family = famRead
		if tool == "Edit" {
			r.family = famEdit
		}
		pp, err := compilePath(spec, list, origin.Base)
		if err != "" {
			return err
		}
		r.path = pp
	case "Write", "MultiEdit", "NotebookEdit":
		return ignoredPrefix + "path rules for edit tools are written Edit(path); Claude Code never consults " + tool + "(…) path rules"
	case "Glob", "Grep", "LS", "NotebookRead":
		return ignoredPrefix + "path rules for read tools are written Read(path); Claude Code never consults " + tool + "(…) path rules"
	case "WebFetch":
		d, ok := strings.CutPrefix(spec, "domain:")
		if !ok {
			return "WebFetch rules are written WebFetch(domain:example.com)"
		}
		dp, err := compileDomain(d)
		if err != "" {
			return err
		}
		r.spec, r.domain = specDomain, dp
	case "Agent", "Task":
		r.spec = specAgent
		r.glob = compileStarGlob(spec, true, false)
	case "Skill":
		r.spec = specSkill
		r.glob = compileStarGlob(spec, true, false)
	default:
		r.spec = specGeneric
		r.glob = compileStarGlob(spec, true, false)
		r.fields = genericFields
		if f, ok := knownParams[tool]; ok {
			r.fields = f[:1] // e.g. WebSearch → query
		}
	}
	return ""
}

// compileParam compiles Tool(param:value) (spec §8, 2.1.178).
func (r *Rule) compileParam(tool, param, value string, list List) string {
	if list == Allow {
		return "param rules (" + param + ":…) are only allowed in deny and ask lists"
	}
	if known, ok := knownParams[tool]; ok && known[0] == param {
		hint := tool + "(<" + param + ">)"
		switch tool {
		case "Bash", "PowerShell":
			hint = tool + "(<command>)"
		case "WebFetch":
			hint = "WebFetch(domain:<host>)"
		case "Write", "MultiEdit", "NotebookEdit":
			hint = "Edit(<path>)"
		case "Glob", "Grep", "LS", "NotebookRead", "Read":
			hint = "Read(<path>)"
		case "Edit":
			hint = "Edit(<path>)"
		}
		return param + " is the primary field of " + tool + "; Claude Code ignores such param rules: use " + hint + " instead"
	}
	if strings.TrimSpace(value) == "" {
		return "empty value in param rule " + param + ":"
	}
	r.spec, r.param = specParam, param
	r.glob = compileStarGlob(value, false, false)
	return ""
}

// namesMoreThanCommand reports whether a command pattern names more than
// the command word (spec §2.1: `Bash(git push *)` does, `Bash(git *)` does
// not). Such `if` filters run anyway when the command has expansions.
func namesMoreThanCommand(spec string) bool {
	lit := spec
	if i := strings.IndexByte(lit, '*'); i >= 0 {
		lit = lit[:i]
	}
	return strings.ContainsAny(strings.TrimSpace(lit), " \t")
}
