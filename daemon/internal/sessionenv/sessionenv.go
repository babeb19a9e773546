// Package sessionenv keeps each Claude Code session's environment, as hookc sends it, for
// the session's events that arrive over the HTTP forwarder (docs/http-forwarder.md).
// Internal to the daemon: its engine stores and reads them.
//
// An http hook's request carries no environment, but the hooks hookd runs for it need the
// one Claude Code gives its hooks (CLAUDE_PROJECT_DIR, PATH, CLAUDE_CODE_SESSION_ID, a
// virtualenv, ...). SessionStart stays a hookc command hook (Claude Code allows only
// command and mcp_tool handlers there), and hookc sends its environment: the engine keeps
// it per session_id, in memory and in <state>/session-env/<sha256(session_id)>.json (0600
// in a 0700 directory), so that a restarted daemon still serves the session. Every later
// Claude Code event that arrives through hookc refreshes it. An http event of a session
// with no stored environment is never run with hookd's own environment (the engine's
// HandleHTTP).
package sessionenv

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/atomicfile"
)

// maxAge is how long a stored environment survives without being refreshed;
// older files are removed when the daemon starts (a session resumed later sends a new
// SessionStart, which stores it again).
const maxAge = 14 * 24 * time.Hour

// Env is one session's stored environment.
type Env struct {
	SessionID  string    `json:"session_id"`
	ProjectDir string    `json:"project_dir,omitempty"`
	Env        []string  `json:"env"`
	Saved      time.Time `json:"saved"`
}

// Store holds the sessions' environments: in memory, and in a directory when one is
// given.
type Store struct {
	dir string // "": memory only
	log *zap.Logger
	mu  sync.Mutex
	m   map[string]*Env
	// stored is closed (and replaced) whenever Put stores an environment: Wait's wake-up.
	stored chan struct{}
	// unannounced are sessions whose wait ran out: later events of theirs do not wait.
	unannounced map[string]bool
}

// Wait bounds how long an http event of a session with no stored environment waits for
// one. The SessionStart forwarder of an install whose SessionStart runs no hook is async
// (install.forwarders: it only carries the environment, so Claude Code need not wait for
// it), and the session's first http event can arrive before its hookc has.
const Wait = 10 * time.Second

// New returns a store keeping its files in <stateDir>/session-env ("": memory only);
// files older than the maximum age are removed now.
func New(stateDir string, log *zap.Logger) *Store {
	s := &Store{log: log, m: map[string]*Env{}, stored: make(chan struct{}), unannounced: map[string]bool{}}
	if stateDir != "" {
		s.dir = filepath.Join(stateDir, "session-env")
		s.prune(time.Now())
	}
	return s
}

func (s *Store) file(session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(s.dir, hex.EncodeToString(sum[:16])+".json")
}

// Put stores env (without CLAUDE_ENV_FILE, which Claude Code sets per event) for session;
// it writes the file only when the environment changed.
func (s *Store) Put(session, project string, env []string) {
	if session == "" {
		return
	}
	clean := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CLAUDE_ENV_FILE=") {
			clean = append(clean, kv)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.m[session]; ok && cur.ProjectDir == project && slices.Equal(cur.Env, clean) {
		return
	}
	e := &Env{SessionID: session, ProjectDir: project, Env: clean, Saved: time.Now().UTC()}
	s.m[session] = e
	delete(s.unannounced, session)
	close(s.stored)
	s.stored = make(chan struct{})
	if s.dir == "" {
		return
	}
	data, _ := json.Marshal(e)
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		s.log.Warn("cannot keep the session's environment for its http events", zap.Error(err))
		return
	}
	// Not fsynced: losing it in a crash means the session's http events fail closed until
	// its next hookc event, never that they run with a wrong environment.
	if err := atomicfile.Write(s.file(session), data, 0o600, false); err != nil {
		s.log.Warn("cannot keep the session's environment for its http events", zap.Error(err))
	}
}

// Get returns the session's stored environment: from memory, else from its file when
// that is a regular file of ours that nobody else can read or write.
func (s *Store) Get(session string) (*Env, bool) {
	if session == "" {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.m[session]; ok {
		return e, true
	}
	if s.dir == "" {
		return nil, false
	}
	path := s.file(session)
	data, err := readPrivate(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("stored session environment not used", zap.String("file", path), zap.Error(err))
		}
		return nil, false
	}
	var e Env
	if json.Unmarshal(data, &e) != nil || e.SessionID != session || e.Env == nil {
		s.log.Warn("stored session environment not used: damaged or for another session", zap.String("file", path))
		return nil, false
	}
	s.m[session] = &e
	return &e, true
}

// Wait is Get, waiting up to d (or ctx) for the session's environment to be stored when
// none is yet. A session that once ran out of the wait does not wait again (it was never
// announced to this daemon: its events fail closed at once until its next hookc event).
func (s *Store) Wait(ctx context.Context, session string, d time.Duration) (*Env, bool) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		if e, ok := s.Get(session); ok || session == "" {
			return e, ok
		}
		s.mu.Lock()
		stored, gaveUp := s.stored, s.unannounced[session]
		s.mu.Unlock()
		if gaveUp {
			return nil, false
		}
		select {
		case <-stored:
		case <-ctx.Done():
			return nil, false
		case <-timer.C:
			s.mu.Lock()
			s.unannounced[session] = true
			s.mu.Unlock()
			return s.Get(session)
		}
	}
}

// readPrivate reads a file only if it is a regular file owned by this uid with no group or
// other permissions: a file someone else could have written is not an environment to run
// hooks with.
func readPrivate(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || !ok || int(st.Uid) != os.Geteuid() {
		return nil, errors.New("not a private regular file of this user (want mode 0600, owned by the daemon's uid)")
	}
	var b bytes.Buffer
	_, err = b.ReadFrom(f)
	return b.Bytes(), err
}

// prune removes stored environments not refreshed for maxAge.
func (s *Store) prune(now time.Time) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, de := range ents {
		if !strings.HasSuffix(de.Name(), ".json") {
			continue
		}
		if fi, err := de.Info(); err == nil && now.Sub(fi.ModTime()) > maxAge {
			_ = os.Remove(filepath.Join(s.dir, de.Name()))
		}
	}
}
