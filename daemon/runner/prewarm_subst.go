package runner

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Lookups: the one kind of command substitution the prewarm analysis accepts.
//
// Packages installed with `npm install -g` are commonly configured as
//
//	node $(npm root -g)/@scope/pkg/dist/hook.js
//
// (sensitive-canary does). The substitution is a side-effect-free lookup of a directory
// (its one trace: npm's debug log, see "Which hooks are prewarmed by default"), so the
// command is as safe to start early as `node /usr/lib/node_modules/@scope/pkg/dist/hook.js`.
// The analysis needs the lookup's value to find the script (does it read stdin? which
// file invalidates prewarmed processes?), so it runs the lookup itself, with the hook's
// environment and directory, and caches the answer. Once the answer is known, Pool.Run
// runs the command with it in the substitution's place (lookup_memo.go) unless
// HOOKD_MEMO_LOOKUPS=off; until then, and with it off, the command runs as written and its
// shell runs the lookup, as Claude Code's would.
//
// Accepted: $(…) — not backquotes, whose body has its own escaping rules — whose body is
// exactly one of lookupCommands as plain unquoted words: no assignments, redirections,
// extra arguments, pipes, lists or nested substitutions. Anything else is rejected as
// before. The list is kept to what was verified against npm 11 (npm root reads npm's
// configuration and prints a path); pnpm and yarn are not installed here to verify.
var lookupCommands = map[string]bool{
	"npm root -g":       true,
	"npm root --global": true,
}

// lookupFunc evaluates one of lookupCommands for the analysis of a command line; nil
// makes shellWords reject every command substitution.
type lookupFunc func(cmd string) (string, bool)

// substValue is the value of a command substitution, when it is an accepted lookup.
func substValue(cs *syntax.CmdSubst, lookup lookupFunc) (string, bool) {
	if lookup == nil || cs.Backquotes || cs.TempFile || cs.ReplyVar {
		return "", false
	}
	cmd, ok := lookupText(cs)
	if !ok {
		return "", false
	}
	return lookup(cmd)
}

// lookupText is the body of cs as "word word …" when it is one of lookupCommands.
func lookupText(cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 || len(cs.Last) > 0 {
		return "", false
	}
	st := cs.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(st.Comments) > 0 || len(call.Assigns) > 0 {
		return "", false
	}
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		if len(w.Parts) != 1 {
			return "", false
		}
		lit, ok := w.Parts[0].(*syntax.Lit)
		if !ok {
			return "", false
		}
		words = append(words, lit.Value)
	}
	cmd := strings.Join(words, " ")
	return cmd, lookupCommands[cmd]
}
