// Package events is hookd's knowledge of Claude Code hook events: the catalogue of all 34
// events (name, matcher field, whether it can block, handler types, default timeout, which
// output fields it honours), the interpretation of one hook's (exit code, stdout, stderr)
// as result variants, the merge of those variants into one answer per event, and the
// rendering of that answer as one Claude Code hook output.
//
// Everything here follows docs/spec/claude-code-hooks-spec.md (cited as "spec §N") and,
// where the docs are silent, what Claude Code 2.1.330 was seen doing (spec §12 and the
// probes in test/e2e, cited as "probe <name>"). The catalogue is spec §1.1, §3.2 and §3.4.
// The package never spawns processes; it imports only the standard library and protocol.
//
// # Interpretation (Interpret)
//
// One hook's output is read as Claude Code reads it (spec §4.1, §4.2):
//
//   - A hook that could not start (StartErr; exit 126; exit 127 with "not found"), timed
//     out or was cancelled is an error, timeout or cancelled outcome with no decision. It is
//     never an allow: Claude Code calls a missing script a non-blocking error, which lets a
//     mistyped guard silently disable itself; hookd at least reports it as an error.
//   - Exit 0: stdout is JSON when its first non-space character is '{' and it is one
//     object; otherwise plain text, which is context only on SessionStart,
//     UserPromptSubmit and UserPromptExpansion.
//   - Exit 2 on an event that can block (and on PostToolUse, where Claude Code treats it as
//     decision:"block") blocks, even if the JSON says allow; the reason is the JSON's own
//     blocking reason, else "[<command>]: <stderr>" — Claude Code's phrasing — so a block
//     that hookd re-renders as JSON reads the same to Claude. On PreToolUse the block is a
//     deny. PermissionRequest ignores exit 2. On events that cannot block, exit 2 is an
//     error outcome whose Error is the "[<command>]: <stderr>" Claude Code would have shown.
//   - Other exit codes: a schema-valid JSON object decides and the exit code is ignored;
//     otherwise an error outcome "Failed with non-blocking status code: <stderr>".
//   - WorktreeCreate fails on any non-zero exit; its path is the last non-empty stdout
//     line with ANSI escapes removed. Notification, InstructionsLoaded, StopFailure and
//     PermissionDenied ignore exit codes.
//
// JSON is validated before anything in it counts: the universal fields and the event's
// hookSpecificOutput members must have the right types (null included: the fields are
// optional, not nullable), and hookSpecificOutput.hookEventName must name the event;
// otherwise the whole object is ignored and the outcome is an error, as in Claude Code.
// Unknown members are ignored; members the event does not act on are dropped silently
// (spec §4.3). additionalContext counts only inside hookSpecificOutput. additionalContext,
// systemMessage and plain-stdout context are each capped at MaxContextChars.
//
// # Merge
//
// Merge takes the interpretations in configuration order — managed, user, project, local,
// extra files; within a file, group and hook order — never in finish order, so the same
// hooks give the same answer byte for byte however the race between them went:
//
//   - Permission: deny > ask > defer > allow — the spec's order (§3.5) except that an ask
//     beats a defer, because Claude Code lets the ask decide whenever it cannot honour the
//     defer (2.1.321) and hookd cannot always tell when that is (see permissionRank;
//     HonourDefer restores the spec's order for unattended sessions). The reason
//     is every reason given with the winning decision, joined with "\n".
//   - updatedInput: Claude Code applies the last rewrite to finish (issue #15897). hookd
//     takes the first rewrite in configuration order — the most authoritative source —
//     from hooks that did not deny; a different later rewrite is ignored with a warning
//     "conflicting updatedInput from <hook> ignored"; identical rewrites agree. A winning
//     deny leaves no rewrite.
//   - additionalContext and systemMessage: all kept, in configuration order, rendered
//     joined with "\n" (Claude Code 2.1.330 delivers two hooks' contexts as one block
//     "ctx-A\nctx-B", spec §12).
//   - continue:false from any hook wins over every event decision; the stop reason is the
//     first one given.
//   - Blocks: reasons joined with "\n"; Via is "exit2" only if every block was an exit 2.
//   - Other event-specific fields: the first value wins (a different later one is
//     reported), except watchPaths (union) and classifierContext (joined, 2,000 chars).
//   - Batches (MergeBatches): hooks that ran apart — Claude Code's hooks and a harness's
//     own, or a sequential pipeline — are merged per batch by their own rule (a
//     pipeline's rewrite is its last hook's), then across batches by the rules above.
//
// # Rendering (Render)
//
// Merge returns an Outcome, hookd's decision as a domain value; the daemon adds the
// permission rules' verdict and other contributions to it and renders it once, at the
// edge (Render), so no decision can change after its bytes were written. The merged
// answer becomes one hook output: a JSON object on stdout with exit 0 wherever
// JSON can say it (decision:"block", permissionDecision deny, PermissionRequest decision),
// exit 2 with the reasons on stderr where only an exit code can (TeammateIdle,
// TaskCompleted, Elicitation, ElicitationResult blocks), and WorktreeCreate's plain path.
// See finalize for each family; FailClosed is the answer when there is no decision.
package events
