// Package lookup runs and remembers the lookups hookd's prewarm analysis accepts as a
// command substitution ($(npm root -g): daemon/runner/prewarm_subst.go) and the runner
// puts in a hook's command once known (daemon/runner/lookup_memo.go): each is run with
// the hook's environment and directory, as the hook's shell would, and its answer is
// kept for TTL, keyed by what the answer depends on.
package lookup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookd/hookd/daemon/runner/osproc"
)

const (
	timeout   = 10 * time.Second // one run of a lookup
	TTL       = 10 * time.Minute // how long an answer is reused
	cacheMax  = 64               // answers kept
	maxOutput = 4096             // a path; more is not a lookup's answer
)

// cache keeps lookup answers (and failures: a lookup that times out must not stall
// every new session's first event) for TTL. Analysis runs once per prewarm key,
// and keys are per session, so without it every session would pay a lookup (npm root -g
// costs ~200 ms of CPU).
var cache = struct {
	sync.Mutex
	m        map[string]entry
	inflight map[string]chan struct{} // closed when that lookup's answer is stored
}{m: map[string]entry{}, inflight: map[string]chan struct{}{}}

type entry struct {
	val string
	err error
	at  time.Time
}

// ErrPending is a lookup whose answer is not known yet, for a caller that may not
// wait (an event: Pool.key): the lookup runs in the background, and the event runs cold.
var ErrPending = errors.New("not known yet (npm is being asked)")

// Cached is runLookup through cache: one run at a time per key, which
// other callers wait for — or, with wait false, do not: they get ErrPending and the
// lookup is started in the background if it is not under way.
func Cached(cmd string, env []string, dir string, wait bool) (string, error) {
	key := Key(cmd, env, dir)
	for {
		cache.Lock()
		e, ok := cache.m[key]
		if ok && time.Since(e.at) < TTL {
			cache.Unlock()
			return e.val, e.err
		}
		ch, running := cache.inflight[key]
		if !running {
			ch = make(chan struct{})
			cache.inflight[key] = ch
		}
		cache.Unlock()
		run := func() {
			val, err := ask(cmd, env, dir)
			store(key, entry{val: val, err: err, at: time.Now()})
			cache.Lock()
			delete(cache.inflight, key)
			cache.Unlock()
			close(ch)
		}
		switch {
		case !wait:
			if !running {
				go run()
			}
			return "", ErrPending
		case !running:
			run()
		default:
			<-ch
		}
	}
}

// store adds e to cache, first dropping expired answers and, if it is still
// full, the oldest.
func store(key string, e entry) {
	now := e.at
	cache.Lock()
	defer cache.Unlock()
	if len(cache.m) >= cacheMax {
		oldest := ""
		for k, e := range cache.m {
			if now.Sub(e.at) >= TTL {
				delete(cache.m, k)
			} else if oldest == "" || e.at.Before(cache.m[oldest].at) {
				oldest = k
			}
		}
		if len(cache.m) >= cacheMax {
			delete(cache.m, oldest)
		}
	}
	cache.m[key] = e
}

// Key identifies what npm's answer can depend on: the command, the directory (a
// project's .npmrc), and the variables npm's configuration reads — PATH (which npm and
// node), HOME (~/.npmrc), PREFIX, NODE, NODE_OPTIONS and every npm_config_* in any case.
// Not the whole environment: it holds per-session variables (CLAUDE_CODE_SESSION_ID,
// CLAUDE_ENV_FILE) that would make every session miss. An answer stale for up to
// TTL (a global prefix changed in ~/.npmrc) only misleads the analysis: the
// prewarmed process computes its own.
func Key(cmd string, env []string, dir string) string {
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
// watched: an answer can be stale for TTL after it changes.
func npmrcStamps(env []string, dir string) []string {
	files := []string{filepath.Join(osproc.Getenv(env, "HOME"), ".npmrc")}
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
		out = append(out, f+":"+osproc.StatFP(f).String())
	}
	return out
}

// errOutput ends a lookup that prints more than a path.
var errOutput = errors.New("printed more than 4096 bytes")

// ask runs one of the accepted lookups with env in dir, as the hook's shell would, and
// returns its output without the trailing newlines (as $(…) does). A failure, an empty
// answer, or an answer of more than one line is an error. npm_config_logs_max=0 keeps
// the analysis's own run from leaving a debug log in ~/.npm/_logs; it does not change
// what npm root prints.
func ask(cmd string, env []string, dir string) (string, error) {
	argv := strings.Fields(cmd)
	path, err := osproc.LookPath(argv[0], env)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, path, argv[1:]...)
	if env == nil {
		env = os.Environ()
	}
	c.Env = append(slices.Clip(env), "npm_config_logs_max=0")
	c.Dir = dir
	out := &capWriter{max: maxOutput}
	c.Stdout = out
	c.WaitDelay = time.Second // a child left holding stdout does not hold the analysis
	if err := c.Run(); err != nil {
		if ctx.Err() != nil {
			return "", errors.New("timed out after " + timeout.String())
		}
		if out.over {
			return "", errOutput
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
		return 0, errOutput
	}
	w.b = append(w.b, p...)
	return len(p), nil
}

// Seed stores val as the answer of cmd for env and dir, valid for ttl from now (tests:
// an analysis that already ran).
func Seed(cmd string, env []string, dir, val string, ttl time.Duration) {
	store(Key(cmd, env, dir), entry{val: val, at: time.Now().Add(ttl - TTL)})
}

// Running reports whether cmd's lookup for env and dir is under way.
func Running(cmd string, env []string, dir string) bool {
	cache.Lock()
	defer cache.Unlock()
	_, ok := cache.inflight[Key(cmd, env, dir)]
	return ok
}
