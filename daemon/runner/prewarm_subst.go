package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

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

const (
	lookupTimeout   = 10 * time.Second // one run of a lookup
	lookupTTL       = 10 * time.Minute // how long an answer is reused
	lookupCacheMax  = 64               // answers kept
	lookupMaxOutput = 4096             // a path; more is not a lookup's answer
)

// lookupCache keeps lookup answers (and failures: a lookup that times out must not stall
// every new session's first event) for lookupTTL. Analysis runs once per prewarm key,
// and keys are per session, so without it every session would pay a lookup (npm root -g
// costs ~200 ms of CPU).
var lookupCache = struct {
	sync.Mutex
	m        map[string]lookupEntry
	inflight map[string]chan struct{} // closed when that lookup's answer is stored
}{m: map[string]lookupEntry{}, inflight: map[string]chan struct{}{}}

type lookupEntry struct {
	val string
	err error
	at  time.Time
}

// errLookupPending is a lookup whose answer is not known yet, for a caller that may not
// wait (an event: Pool.key): the lookup runs in the background, and the event runs cold.
var errLookupPending = errors.New("not known yet (npm is being asked)")

// runLookupCached is runLookup through lookupCache: one run at a time per key, which
// other callers wait for — or, with wait false, do not: they get errLookupPending and the
// lookup is started in the background if it is not under way.
func runLookupCached(cmd string, env []string, dir string, wait bool) (string, error) {
	key := lookupKey(cmd, env, dir)
	for {
		lookupCache.Lock()
		e, ok := lookupCache.m[key]
		if ok && time.Since(e.at) < lookupTTL {
			lookupCache.Unlock()
			return e.val, e.err
		}
		ch, running := lookupCache.inflight[key]
		if !running {
			ch = make(chan struct{})
			lookupCache.inflight[key] = ch
		}
		lookupCache.Unlock()
		run := func() {
			val, err := runLookup(cmd, env, dir)
			storeLookup(key, lookupEntry{val: val, err: err, at: time.Now()})
			lookupCache.Lock()
			delete(lookupCache.inflight, key)
			lookupCache.Unlock()
			close(ch)
		}
		switch {
		case !wait:
			if !running {
				go run()
			}
			return "", errLookupPending
		case !running:
			run()
		default:
			<-ch
		}
	}
}

// storeLookup adds e to lookupCache, first dropping expired answers and, if it is still
// full, the oldest.
func storeLookup(key string, e lookupEntry) {
	now := e.at
	lookupCache.Lock()
	defer lookupCache.Unlock()
	if len(lookupCache.m) >= lookupCacheMax {
		oldest := ""
		for k, e := range lookupCache.m {
			if now.Sub(e.at) >= lookupTTL {
				delete(lookupCache.m, k)
			} else if oldest == "" || e.at.Before(lookupCache.m[oldest].at) {
				oldest = k
			}
		}
		if len(lookupCache.m) >= lookupCacheMax {
			delete(lookupCache.m, oldest)
		}
	}
	lookupCache.m[key] = e
}

// lookupKey identifies what npm's answer can depend on: the command, the directory (a
// project's .npmrc), and the variables npm's configuration reads — PATH (which npm and
// node), HOME (~/.npmrc), PREFIX, NODE, NODE_OPTIONS and every npm_config_* in any case.
// Not the whole environment: it holds per-session variables (CLAUDE_CODE_SESSION_ID,
// CLAUDE_ENV_FILE) that would make every session miss. An answer stale for up to
// lookupTTL (a global prefix changed in ~/.npmrc) only misleads the analysis: the
// prewarmed process computes its own.
func lookupKey(cmd string, env []string, dir string) string {
	if env == nil {
		env = os.Environ()
	}
	parts := []string{cmd, dir}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "PATH", name == "HOME", name == "PREFIX", name == "NODE", name == "NODE_OPTIONS",
			strings.HasPrefix(strings.ToLower(name), "npm_config_"):
			parts = append(parts, kv)
		}
	}
	slices.Sort(parts[2:])
	return strings.Join(append(parts, npmrcStamps(env, dir)...), "\x00")
}

// npmrcStamps identify the versions of the npm configuration files that can change the
// answer: the user's (~/.npmrc, or npm_config_userconfig's) and a project's .npmrc in dir
// or above it. An edit of one (a new prefix) is a new key, so a memoised answer
// (lookup_memo.go) is not reused across it. The global npmrc under npm's prefix is not
// watched: an answer can be stale for lookupTTL after it changes.
func npmrcStamps(env []string, dir string) []string {
	files := []string{filepath.Join(LookupEnv(env, "HOME"), ".npmrc")}
	for _, kv := range env {
		if name, v, _ := strings.Cut(kv, "="); strings.EqualFold(name, "npm_config_userconfig") {
			files = append(files, v)
		}
	}
	for d := dir; d != "" && filepath.IsAbs(d); d = filepath.Dir(d) {
		files = append(files, filepath.Join(d, ".npmrc"))
		if d == filepath.Dir(d) {
			break
		}
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		fp := statFP(f)
		out = append(out, fmt.Sprintf("%s:%v:%d:%d:%d:%d", f, fp.missing, fp.ino, fp.size, fp.mtime, fp.ctime))
	}
	return out
}

// errLookupOutput ends a lookup that prints more than a path.
var errLookupOutput = errors.New("printed more than 4096 bytes")

// runLookup runs one of lookupCommands with env in dir, as the hook's shell would, and
// returns its output without the trailing newlines (as $(…) does). A failure, an empty
// answer, or an answer of more than one line is an error. npm_config_logs_max=0 keeps
// the analysis's own run from leaving a debug log in ~/.npm/_logs; it does not change
// what npm root prints.
func runLookup(cmd string, env []string, dir string) (string, error) {
	argv := strings.Fields(cmd)
	path, err := lookPath(argv[0], env)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, path, argv[1:]...)
	if env == nil {
		env = os.Environ()
	}
	c.Env = append(slices.Clip(env), "npm_config_logs_max=0")
	c.Dir = dir
	out := &capWriter{max: lookupMaxOutput}
	c.Stdout = out
	c.WaitDelay = time.Second // a child left holding stdout does not hold the analysis
	if err := c.Run(); err != nil {
		if ctx.Err() != nil {
			return "", errors.New("timed out after " + lookupTimeout.String())
		}
		if out.over {
			return "", errLookupOutput
		}
		return "", err
	}
	v := strings.TrimRight(string(out.b), "\n")
	switch {
	case v == "":
		return "", errors.New("printed nothing")
	case strings.ContainsAny(v, "\n\x00"):
		return "", errors.New("printed more than one line")
	}
	return v, nil
}

// capWriter keeps at most max bytes and fails the write that would exceed them.
type capWriter struct {
	b    []byte
	max  int
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if len(w.b)+len(p) > w.max {
		w.over = true
		return 0, errLookupOutput
	}
	w.b = append(w.b, p...)
	return len(p), nil
}
