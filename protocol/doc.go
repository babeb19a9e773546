// Package protocol is the wire contract between hookd and its callers: hookc, and any
// harness that talks to the daemon's Unix socket directly.
//
// It imports only the standard library (and its own sub-package lite), because hookc is on
// the hot path of every hook event. hookc links only protocol/lite: the socket trust
// check, the request encoder and a strict decoder of the answer, without encoding/json,
// reflect, net or fmt, whose start-up every hookc process would pay. protocol delegates
// those shared pieces to lite, so each has one implementation.
//
// # Framing
//
// The socket speaks newline-delimited JSON (NDJSON). A client writes one Request object
// on one line; the daemon answers with a stream of Frame objects, one per line, flushed as
// they happen, and ends the answer with exactly one frame of type "result" or "error".
// A connection may carry any number of requests one after another (the next request is
// read after the previous answer's last frame); requests on one connection are never
// interleaved.
//
// # Requests
//
//		{"v":1,"op":"event","event":{...},"env":["PATH=/usr/bin",...],"project_dir":"/p"}
//
//	  - v: the protocol version (Version). A daemon answers any other version with an
//	    "error" frame of code "unsupported_version" whose message names the versions it speaks.
//	  - op: "event" (default when empty), "ping", "status", "reload".
//	  - event: the hook payload exactly as the harness produced it. The daemon never
//	    re-encodes it: hooks receive these bytes unchanged on stdin (unknown fields and key
//	    order preserved), so a hook behind hookd sees what it would have seen from Claude Code.
//	  - env: the caller's environment. Hooks run with it (not the daemon's), so they see the
//	    PATH, virtualenv and CLAUDE_* variables they would have seen when the harness spawned
//	    them. A nil env means "use the daemon's environment".
//	  - project_dir: the project root (what Claude Code exports as CLAUDE_PROJECT_DIR). When
//	    empty the daemon derives it from env's CLAUDE_PROJECT_DIR, else from the event's cwd.
//	  - options: per-request knobs (Options): result_only, and client — the caller's
//	    "name/version" ("hookc/0.4.1"), which the audit record keeps and `hookd status`
//	    lists (a hookc of another version than the daemon's is flagged).
//
// # Frames
//
// While hooks run the daemon streams the seven result variants, each naming the hook
// (HookRef) it came from:
//
//	message               hook lifecycle and notices: kind started | finished | error |
//	                      timeout | cancelled | not_run | warning | system_message
//	permission            a permission decision: allow | deny | ask | defer, with reason;
//	                      source "hook" or "rule", overridden_by when a rule won
//	updated_input         a hook's replacement tool input
//	prevent_continuation  a hook asked to stop the agent (continue:false)
//	stop_reason           the text shown to the user when continuation is prevented
//	additional_context    context for the model
//	stop                  a blocking error: the hook blocked the action this event guards
//	                      (exit 2, or decision:"block"), with reason
//
// and then one final frame:
//
//	result                the merged decision (Result), with its decision_id
//	error                 the request failed (Error); no result follows
//
// Variant frames arrive in the order hooks finish; the result is independent of that
// order (it is merged in configuration order).
//
// # Example session
//
//	→ {"v":1,"event":{"session_id":"s1","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"}}}
//	← {"type":"message","kind":"started","hook":{"id":"project:/p/.claude/settings.json#PreToolUse[0].hooks[0]","source":"project","file":"/p/.claude/settings.json","matcher":"Bash","command":"./guard.sh"}}
//	← {"type":"permission","decision":"deny","reason":"destructive command","source":"hook","hook":{...}}
//	← {"type":"message","kind":"finished","exit_code":0,"duration_ms":4.1,"hook":{...}}
//	← {"type":"result","v":1,"result":{"decision_id":"01J...","event":"PreToolUse","permission":{"decision":"deny","reason":"destructive command","source":"hook"},"output":{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"destructive command"}},"exit_code":0,...}}
//	→ {"v":1,"event":{"hook_event_name":"NoSuchEvent","session_id":"s1","cwd":"/p"}}
//	← {"type":"error","v":1,"error":{"code":"unknown_event","message":"unknown hook event \"NoSuchEvent\"","event":"NoSuchEvent"}}
//
// # Rendering
//
// Result.Output, Result.Stdout, Result.Stderr and Result.ExitCode are a ready Claude Code
// hook answer: Render writes them the way a command hook would, which is what hookc does.
// The package is wire-only: what an answer means — the merge, the fail-closed answer
// (events.FailClosed; hookc's copy is lite.FailClosed), which harness sent a payload
// (events/harness.Detect) — belongs to package events, so this contract can stay stable
// for Go harnesses that speak it.
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package protocol
