// Package settings is hookd's model of Claude Code settings: where the files are, strict
// decoding and validation with messages that name file, field and position, the merge of
// all files, and compilation into an immutable Snapshot the daemon matches events against.
// hookd's own configuration (DaemonConfig) is package configs, above this one.
//
// The package reads files when asked (LoadFile, Sources.Files lists managed-settings.d)
// but never watches them and holds no locks: the daemon's store (package daemon/store)
// watches, reloads, and swaps snapshots. "spec §N" in this package means docs/spec/claude-code-hooks-spec.md §N.
//
// # Sources and configuration order
//
// Sources.Files lists the candidate files in configuration order:
//
//  1. managed: <ManagedDir>/managed-settings.json (default /etc/claude-code), then
//     <ManagedDir>/managed-settings.d/*.json in alphabetical order (hidden files skipped)
//  2. user: ~/.claude/settings.json, then ~/.claude/hookd.json
//  3. project: <project>/.claude/settings.json, then <project>/.claude/hookd.json
//  4. local: <project>/.claude/settings.local.json, then <project>/.claude/hookd.local.json
//  5. extras, in the order given: --settings files (KindFlag) and hookd-owned files
//
// The hookd.json files (KindHookd, FileRef.Origin = the Claude Code file beside them)
// hold the hooks `hookd install claude-code` moved out of that file (package install).
// They keep the original file's label in status and audit, its precedence and its base
// for "/x" patterns in `if`; they may carry a top-level "hookd" record, which a Claude
// Code file must never have. While such a record says the file is an installation, the
// handlers still in the Claude Code file beside it (the hookc forwarder, prompt/agent/
// mcp_tool handlers, hooks added there later) are Claude Code's to run, not hookd's —
// its permission rules and other keys still count. A handler that runs hookc is never
// run by hookd anywhere (IsForwarder): it would forward the event to itself.
//
// Missing files are listed too so the daemon can watch for them; LoadFile reports them
// with an error wrapping os.ErrNotExist.
//
// # Project directory
//
// When the caller does not send CLAUDE_PROJECT_DIR, ProjectDirFor derives the project
// from the event's cwd: walking up from cwd (cwd included), the first directory that has
// .claude/settings.json or .claude/settings.local.json; failing that, the first that has
// .git; failing that, cwd itself. $HOME and / are never chosen (~/.claude/settings.json is
// the user file, and a dotfiles repository at $HOME must not make every directory one
// project).
//
// # Merge and precedence (spec §7, §8)
//
//   - hooks are additive: every file's handlers run, in configuration order; no file can
//     remove another's.
//   - permission rules are pooled from every file (deny → ask → allow is the rules
//     package's business). When a managed file sets allowManagedPermissionRulesOnly, only
//     managed rules are kept.
//   - allowedHttpHookUrls and httpHookAllowedEnvVars are arrays: they merge across files
//     (managed included). When allowedHttpHookUrls is set anywhere, an HTTP hook whose URL
//     matches none of the patterns ("*" is a wildcard; an empty list blocks all) is
//     reported as not run.
//   - scalars such as disableAllHooks and env values are resolved by precedence:
//     managed > flag (--settings, hookd-owned files by their origin) > local > project >
//     user; among files of the same rank the later one wins. A resolved disableAllHooks
//     true turns off every non-managed hook; if the winning value comes from managed
//     settings, managed hooks stop too. So a project's false overrides the user's true.
//   - allowManagedHooksOnly (honoured only in managed files; a mistyped value reads as
//     true) lets only managed hooks run — except when set by hookd's own routing drop-in
//     (a managed file with a hookc forwarder; `hookd install claude-code --scope managed`):
//     there it keeps Claude Code from running the user, project and local hooks, which
//     hookd then runs itself, and leaves the other managed hooks to Claude Code
//     (Snapshot.RoutedBy).
//
// # Matching and dedup
//
// Snapshot.Match takes an event, the value of its matcher field and, for tool events,
// the tool call. A group matcher is tested against the value (the base name for
// FileChanged; not at all for events without a matcher field, where Claude Code ignores
// it). A handler with `if` runs only on tool events and only when its rule matches.
// Identical handlers (same Handler.Key: command string + args + shell, or HTTP URL) run
// once, the first in configuration order kept — across files, and across groups of one
// file, as observed in Claude Code 2.1.330 (spec §12). prompt, agent and mcp_tool
// handlers are valid but need the harness's model or MCP connections; Match returns them
// as notRun.
//
// # Where hookd deliberately differs from Claude Code
//
//   - An invalid file (bad JSON, a wrong type, a bad matcher regex, a bad permission or
//     `if` rule, a handler type the event does not accept, a missing required field, a
//     negative timeout) is rejected as a whole, and the error names file, field path,
//     line and column. Claude Code skips the bad entry and keeps the rest; hookd's daemon
//     instead keeps the last good version of the file, so a broken edit never silently
//     drops a guard that was working a moment ago.
//   - An unknown top-level key is a warning: Claude Code 2.1.330 ignores the entire file
//     (spec §12), hookd loads it and says that Claude Code would not.
//   - Regex matchers are compiled with Go's RE2 when it accepts them, and JavaScript-only
//     syntax (lookaround, backreferences) with regexp2's ECMAScript mode, so they match
//     as in Claude Code (see package matcher); a pattern valid in neither is an error.
//   - An empty file is an error, not an empty object: editors that truncate before
//     writing produce one for a moment, and the last good version should stand meanwhile.
//   - A handler with `if` on a tool event runs when the caller supplies no tool call to
//     evaluate it against: a guard that cannot be evaluated is not skipped.
//
// Unknown event names, unknown fields in groups and handlers, `once` outside skill
// frontmatter and matchers on events without a matcher field are warnings, as in Claude
// Code (spec §1.1, §3.1, §3.2).
package settings
