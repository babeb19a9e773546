// Package runner runs hook processes: one command (shell form through `sh -c`, or exec
// form resolved on the hook's PATH) in its own process group, with its timeout, its
// output caps and a kill of the whole group when it ends; the prewarm pool that starts
// safe-by-construction hooks before their event arrives; the command-line analysis that
// decides which hooks are safe to prewarm; and persistent workers that answer many
// events over a line protocol.
//
// The seams are ProcSpec (what to run), ProcResult (what happened) and the Runner
// interface (ExecRunner runs every hook cold; Pool prewarms and keeps workers).
//
// What differs between operating systems — how a process group is named so that a recycled
// pid is never signalled, how an exit is awaited without reaping, process start times and
// the boot's identity, close-on-exec socket pairs — lives in package osproc, the one place
// with per-OS files (docs/reliability.md, "What hookd kills, reaps and trusts").
//
// runner imports no hookd package. It does not know about settings files, hook events,
// permission rules or the wire protocol: the caller turns a configured handler into a
// ProcSpec and interprets the ProcResult.
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package runner
