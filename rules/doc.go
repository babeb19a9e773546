// Package rules implements Claude Code permission rules (spec §8) and the
// handler `if` filter that shares their grammar (spec §2.1).
//
// It is pure: standard library, doublestar and its sub-package rules/shell
// (the Bash analysis, on mvdan.cc/sh), no file system access, no per-call
// compilation. Parse compiles a rule once (the config loader wraps
// its error with file, list and index); Set.Evaluate and If.Matches only run
// compiled values and never panic on any input.
//
// # Grammar
//
// A rule is Tool or Tool(specifier). Surrounding whitespace is ignored; tool
// names are letters, digits, '_' and '-' and are case-sensitive.
//
//   - Bare tool: Bash, Read, WebFetch, Write, … matches every call of that
//     tool. Tool(*) is the same as Tool, for every tool. "*" alone matches
//     every tool (deny/ask only).
//   - Families: Read covers Read, Glob, Grep, LS and NotebookRead; Edit covers
//     Edit, Write, MultiEdit and NotebookEdit; Agent and Task (the tool's name
//     before 2.1.63) are aliases in both directions.
//   - MCP: mcp__server (every tool of the server), mcp__server__* (the same),
//     mcp__server__tool (one tool), and globs after a literal
//     mcp__server__ (mcp__db__read_*). Deny/ask lists may glob anywhere
//     (mcp__*); allow lists may not. MCP rules take no specifier.
//   - Bash(pattern): '*' matches any run of characters, spaces included; `\*`
//     is a literal star. A pattern ending in " *" has a word boundary:
//     Bash(ls *) matches "ls" and "ls -la" but not "lsof"; Bash(ls*) matches
//     "lsof". The legacy suffix ":*" means " *" (Bash(npm:*)).
//   - PowerShell(pattern): the same, compared case-insensitively.
//   - Read(path), Edit(path): gitignore-style patterns matched with doublestar
//     against the cleaned, absolute, slash-separated path from tool_input
//     (file_path; notebook_path for notebooks; path for Glob/Grep/LS, which
//     default to the cwd):
//     "//abs/path" is absolute; "~/path" is below Call.Home; "/path" is below
//     Origin.Base, the settings source's directory; "path" and "./path" are
//     below Call.Cwd (leading "../" climbs); a name without a slash (".env",
//     "*.key") matches at any depth; "**" spans directories; a pattern that
//     matches a directory also matches everything below it, and "dir/" only
//     what is below it. Single-segment "src/**" means <cwd>/src in allow
//     lists and `if` filters, but any depth in deny/ask lists (spec §8,
//     §2.1 v2.1.214).
//   - WebFetch(domain:host): case-insensitive host of tool_input.url;
//     "*.example.com" matches subdomains at any depth but not the apex; a '*'
//     elsewhere stays within one label; domain:* matches any host.
//   - Agent(type) / Task(type): glob on tool_input.subagent_type
//     (plugin types such as "my-plugin:reviewer" are fine).
//   - Skill(name *): glob on tool_input.skill, also tried as "skill args".
//   - Tool(param:value), deny and ask lists (and `if`) only: compares the
//     string form of tool_input[param] (booleans and numbers as fmt prints
//     them) with a glob. A missing param never matches. For built-in tools
//     "param:" is a param rule only when param is a real input field, so
//     Agent(my-plugin:reviewer) stays an agent type and Bash(timeout:*) stays
//     the legacy prefix form.
//   - Any other Tool(specifier): the specifier is a glob (with the word
//     boundary) on the first string field present among command, file_path,
//     url, pattern, skill and prompt (WebSearch: query). With none of them
//     present the rule does not match.
//
// Parse rejects, with a message naming the rule and the reason: empty rules
// and empty specifiers, unbalanced parentheses, invalid tool-name characters,
// param rules in allow lists, param rules on a tool's primary field
// (Bash(command:…) — "use Bash(<command>) instead"), Write(…)/Glob(…)-style
// path rules (use Edit/Read), WebFetch specifiers without domain:, "/path"
// patterns without an Origin.Base, and bad globs. A rule never silently
// matches nothing or everything.
//
// # Evaluation
//
// Set.Evaluate pools the rules of every source and checks deny, then ask,
// then allow; within a list the first match wins, whatever its specificity
// (spec §8). A Read deny rule also blocks the edit tools on that path
// (2.1.208/2.1.228).
//
// Bash commands are analysed by package [shell] (mvdan.cc/sh/v3/syntax,
// bash dialect; its documentation lists what is parsed, resolved and looked
// through): every simple command the shell would run is found — in lists,
// pipelines, substitutions, functions, behind wrappers such as sudo, env,
// timeout, xargs and find -exec, and inside literal scripts run by sh -c,
// eval or a shell reading a here-document — with its program resolved
// (quotes, $'…', brace lists, base names, variables assigned literally
// earlier in the same script). [shell.Split] lists them. Then:
//
//   - a deny or ask rule matches if it matches any view of any of those
//     commands (each wrapper layer, by path and by base name, with and
//     without redirections, as written and resolved), or the whole line;
//   - a call is allowed when every simple command is matched by some allow
//     rule (not necessarily the same one). Commands of a literal inner
//     script need not be covered: the command that runs it was. A
//     wildcard-free allow rule equal to the whole line also allows it, but
//     an allow glob is never applied to the whole line (Bash(echo *) must not
//     allow "echo x && rm -rf ~"). The Match reports the first allow rule,
//     in list order, that covered part of the command.
//
// Allow rules see a conservative view of each command: assignments are
// stripped only when harmless (PATH=, LD_*=, GIT_*=, … are kept, so
// Bash(ls *) does not allow "PATH=/tmp/x ls"), only Claude Code's wrappers
// (timeout, time, nice, nohup, stdbuf, command, builtin, noglob, bare xargs)
// are stripped and only under their exact option grammar, and redirections
// other than fd duplication and /dev/null stay part of the command
// (Bash(npm test) allows "npm test 2>&1" but not "npm test > ~/.bashrc").
// Literal output-redirection targets are checked against deny/ask Edit rules
// and deny Read rules, so Edit(.env) in deny also blocks "echo x > .env"
// (spec §8: "redirect targets checked as Edit").
//
// # Failing closed and open
//
// Package shell resolves a command only when every construct on its path
// is on the list of semantics it models exactly (docs/rules.md, "The
// contract"); anything else — a command name that is not a literal ($x,
// $(printf rm), a glob, eval$x), an inner script that is not a literal or
// does not parse, a shell reading a pipe, an option a wrapper does not
// have, text bash evaluates as code that the analysis cannot see (x='a[$(…)]';
// $((x)), ${v@P}, a name reference), an alias or hashed name the script
// defines, a start-up file, an option that changes how bash parses, a
// bound passed — is a hole that can stand for any text. A deny or ask
// Bash(…) rule matches a view with holes when some value of the holes
// would make it match; Match.FailClosed and Match.Unresolved say so,
// naming the construct ("command name is not a literal: `$x`"). The cost is
// false denies: with Bash(rm:*) in deny, "$EDITOR notes.txt" is denied, and
// with any Bash(…) deny rule, "$(which python) x.py" is. Allow rules never
// cover a command with a hole. Arguments that are not literals are matched
// as written (best effort, as in Claude Code). Scripts in files (bash x.sh,
// source x.sh) are not analysed: the package reads no files.
//
// A Bash command that cannot be parsed at all (a syntax error, over 1 MiB,
// nesting or size beyond what the parser may recurse on, a NUL byte) makes
// every deny and ask Bash(…) rule match — fail closed — while allow
// Bash(…) rules match only if they equal the whole line. Likewise a
// WebFetch URL that cannot be parsed makes deny/ask domain rules match.
// Bare rules (Bash, Bash(*)) and param rules do not depend on parsing.
//
// The `if` filter uses the same analysis but fails open, as Claude Code does
// (spec §2.1): an unparseable command or URL, or a hole that could match,
// runs the hook, and a pattern naming more than the command word
// (Bash(git push *)) runs it whenever the command contains $…, $(…) or
// backquotes. The filter is best effort, not a security boundary.
//
// # Resolve
//
// Resolve combines a merged hook decision with the rules as Claude Code does
// since 2.1.77 and 2.1.101 (spec §8 "Hooks vs rules"): a hook deny always
// wins; a deny rule beats a hook allow, ask or defer; an ask rule turns a
// hook allow into ask. With no hook decision it reports the rules' own answer
// and Claude Code keeps the final say (its mode, prompts, its own copy of the
// rules).
//
// # Deliberate differences from Claude Code
//
//   - "/path" rules from local settings are relative to the project root;
//     Claude Code says "original cwd", which a long-lived daemon cannot know.
//   - Symlinks are not resolved (the package reads no files): paths are
//     matched as given, cleaned. Claude Code's allow needs both link and
//     target, its deny matches either; a caller may canonicalize first.
//   - Harmless assignments are judged by a denylist of names that change what
//     runs (PATH, LD_*, DYLD_*, GIT_*, NODE_OPTIONS, PYTHONPATH, EDITOR, …);
//     Claude Code uses an allowlist of safe names.
//   - Redirections stay part of the command for allow rules instead of being
//     stripped and checked as Edit against allow/auto-accept; targets that
//     are not literal ("> $F") are not checked against Edit rules.
//   - Deny/ask rules see every program a command runs and fail closed on
//     what they cannot resolve, so hookd may deny or ask where Claude Code
//     would not (and denies forms Claude Code 2.1.330 lets through: coproc,
//     time { }, su -c, runuser, setpriv, script -c, trap, a shell reading a
//     here-document or here-string, eval/bash -c of a substitution). Where
//     hookd may be less strict — symlink targets, PowerShell aliases,
//     non-literal redirect targets, scripts in files — Claude Code still
//     applies its own copy of the rules to every call.
//   - Forms Claude Code skips or ignores with a warning are parse errors.
//   - A bare filename matches anywhere on disk in deny/ask rules and `if`
//     filters, and only below the cwd in allow rules.
//   - PowerShell commands are not parsed and aliases are not canonicalized:
//     deny/ask match the whole command or any piece split on ; | & and
//     newlines; allow matches only commands without those characters,
//     backquotes or $(.
//   - An unparseable command makes deny rules deny (Claude Code would at
//     most prompt for it), and so does any construct outside the contract
//     of docs/rules.md.
//   - Not here, by design: permission modes, workspace trust for project
//     allow rules, managed-only rule locks, the critical-path rm protection,
//     Windows path normalization. The caller (or Claude Code) owns those.
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package rules
