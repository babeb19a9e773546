package runner

import (
	"os"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hookd/hookd/daemon/runner/lookup"
)

// Memoised lookups (issue 26). A hook written `node $(npm root -g)/pkg/hook.js` runs npm
// on every event only to learn a directory: ~190 ms of CPU, 60 % of sensitive-canary's
// hook. Where the prewarm analysis accepts the command (one simple command whose only
// substitution is a lookup of lookupCommands: prewarm_subst.go) and the lookup's answer is
// known (package lookup: asked by hookd with the hook's environment and directory, at most
// lookup.TTL ago, keyed by what npm's answer depends on), Pool.Run runs the command with the
// answer in the substitution's place, quoted — `node '/usr/lib/node_modules'/pkg/hook.js`
// — through the same shell, environment and directory. The hook gets the same path, input
// and environment; what no longer happens at the event is npm itself, whose one trace is
// its debug log in ~/.npm/_logs. Until the answer is known (a lookup failed, or is under
// way) the command runs as written. HOOKD_MEMO_LOOKUPS=off turns this off.

// MemoLookups reports whether Pool.Run memoises lookups: unless HOOKD_MEMO_LOOKUPS=off.
func MemoLookups() bool { return os.Getenv("HOOKD_MEMO_LOOKUPS") != "off" }

// memoLookups returns spec with its lookup substitutions replaced by their known answers,
// or spec unchanged. With wait, it waits for a lookup under way or runs it (Pool.Warm);
// without, an answer not known yet leaves spec as written (Pool.Run: an event never waits).
func memoLookups(spec ProcSpec, wait bool) ProcSpec {
	if spec.Args != nil || !strings.Contains(spec.Command, "$(") {
		return spec
	}
	call, ok := simpleCall(spec.Command)
	if !ok {
		return spec
	}
	answers := map[string]string{}
	lookup := func(cmd string) (string, bool) {
		v, err := lookup.Cached(cmd, spec.Env, spec.Dir, wait)
		if err != nil {
			return "", false
		}
		answers[cmd] = v
		return v, true
	}
	// The analysis's words accept the command only if every substitution in it is a lookup
	// whose answer is now in answers.
	if _, ok := callWords(call, spec.Env, lookup); !ok {
		return spec
	}
	type edit struct {
		from, to int
		text     string
	}
	var edits []edit
	syntax.Walk(call, func(n syntax.Node) bool {
		var parts []syntax.WordPart
		quoted := false
		switch n := n.(type) {
		case *syntax.Word:
			parts = n.Parts
		case *syntax.DblQuoted:
			parts, quoted = n.Parts, true
		default:
			return ok
		}
		for _, p := range parts {
			cs, isSubst := p.(*syntax.CmdSubst)
			if !isSubst {
				continue
			}
			cmd, _ := lookupText(cs)
			v, known := answers[cmd]
			text, safe := quoteFor(v, quoted)
			if !known || !safe {
				ok = false
				return false
			}
			edits = append(edits, edit{int(cs.Pos().Offset()), int(cs.End().Offset()), text})
		}
		return ok
	})
	if !ok || len(edits) == 0 {
		return spec
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].from > edits[j].from })
	cmd := spec.Command
	for _, e := range edits {
		cmd = cmd[:e.from] + e.text + cmd[e.to:]
	}
	spec.Command = cmd
	return spec
}

// quoteFor is v as shell text that sh reads back as exactly v: single-quoted outside
// double quotes, backslash-escaped inside them. A value sh could not read back so (a
// single quote outside double quotes) is refused.
func quoteFor(v string, inDouble bool) (string, bool) {
	if inDouble {
		r := strings.NewReplacer(`\`, `\\`, `$`, `\$`, "`", "\\`", `"`, `\"`)
		return r.Replace(v), true
	}
	if strings.ContainsRune(v, '\'') {
		return "", false
	}
	return "'" + v + "'", true
}
