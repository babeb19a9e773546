// Package skills keeps, per session, the skills (and slash commands) whose frontmatter
// hooks Claude Code 2.1.332 has registered: a skill's hooks are registered when it is
// invoked and stay for the rest of the session, and a hook with "once": true is removed
// after its first successful run (test/e2e/FINDINGS.md, "Frontmatter hooks"). The engine
// tells it what each event shows (Invoke, Ran, End) and asks it which skills an event
// sees (Active). With a directory (Tracker.Dir, in hookd's state dir) each session's state
// is also a small file there, so a daemon restarted mid-session still knows which skills
// the session invoked and which once hooks are gone.
package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookd/hookd/configs/settings"
)

// Tracker is the sessions' skills. The zero value is ready; it is safe for concurrent use.
type Tracker struct {
	// Dir, when set, keeps each session's state in a file there ("" : memory only).
	Dir      string
	mu       sync.Mutex
	sessions map[string]*session
}

type session struct {
	Skills []invoked `json:"skills"`
	// Removed are the once hooks (Handler.ID) that already ran successfully.
	Removed map[string]bool `json:"removed"`
}

type invoked struct {
	Name string `json:"name"`
	// HiddenFrom is the event (its decision id) that invoked the skill and does not see
	// its hooks itself ("" when it does).
	HiddenFrom string `json:"hidden_from,omitempty"`
}

// get returns session id's state, read from Dir when the daemon has not seen it yet
// (nil when there is none). Called with mu held.
func (t *Tracker) get(id string) *session {
	if s := t.sessions[id]; s != nil || t.Dir == "" {
		return s
	}
	b, err := os.ReadFile(t.file(id))
	var s session
	if err != nil || json.Unmarshal(b, &s) != nil {
		return nil
	}
	if s.Removed == nil {
		s.Removed = map[string]bool{}
	}
	t.put(id, &s)
	return &s
}

func (t *Tracker) put(id string, s *session) {
	if t.sessions == nil {
		t.sessions = map[string]*session{}
	}
	if len(t.sessions) >= maxSessions {
		for k := range t.sessions { // any one: sessions have no order here (the file stays)
			delete(t.sessions, k)
			break
		}
	}
	t.sessions[id] = s
}

// save writes session id's state to Dir (best effort: a failure leaves memory only).
// Called with mu held.
func (t *Tracker) save(id string, s *session) {
	if t.Dir == "" {
		return
	}
	if b, err := json.Marshal(s); err == nil && os.MkdirAll(t.Dir, 0o700) == nil {
		tmp := t.file(id) + ".tmp"
		if os.WriteFile(tmp, b, 0o600) == nil {
			_ = os.Rename(tmp, t.file(id))
		}
	}
}

// file is session id's state file: the id hashed, so any id is a safe file name.
func (t *Tracker) file(id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(t.Dir, hex.EncodeToString(sum[:12])+".json")
}

// maxSessions bounds the state: the oldest sessions are dropped past it (a session that
// never sent SessionEnd).
const maxSessions = 4096

// Invoked reads which skill an event invokes ("" for none) and whether the event itself
// already sees its hooks: a typed /name (UserPromptExpansion's command_name; its hooks
// start with the next event), or the Skill tool (its PostToolUse sees them), from any
// thread.
func Invoked(event, tool string, toolInput, payload json.RawMessage) (name string, visible bool) {
	var in struct {
		Skill       string `json:"skill"`
		CommandName string `json:"command_name"`
	}
	switch {
	case event == "UserPromptExpansion":
		_ = json.Unmarshal(payload, &in)
		return in.CommandName, false
	case event == "PostToolUse" && tool == "Skill":
		_ = json.Unmarshal(toolInput, &in)
		return in.Skill, true
	}
	return "", false
}

// Invoke records that event (a decision id) of session invoked skill name. visible says
// whether that event itself already sees the skill's hooks (the PostToolUse of the Skill
// tool does; the UserPromptExpansion of a typed /name does not).
func (t *Tracker) Invoke(sessionID, name, event string, visible bool) {
	if sessionID == "" || name == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.get(sessionID)
	if s == nil {
		s = &session{Removed: map[string]bool{}}
		t.put(sessionID, s)
	}
	if slices.ContainsFunc(s.Skills, func(i invoked) bool { return i.Name == name }) {
		return
	}
	hidden := event
	if visible {
		hidden = ""
	}
	s.Skills = append(s.Skills, invoked{Name: name, HiddenFrom: hidden})
	t.save(sessionID, s)
}

// Active returns the skills of session that event sees, in the order they were invoked.
func (t *Tracker) Active(sessionID, event string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.get(sessionID)
	if s == nil {
		return nil
	}
	var out []string
	for _, i := range s.Skills {
		if i.HiddenFrom != event {
			out = append(out, i.Name)
		}
	}
	return out
}

// Hooks returns the hooks of the skills session invoked that event (a decision id) sees
// and q matches, in invocation order: run are to run, notRun are reported. A hook
// identical to one of ran (Handler.Key) runs once, and a once hook that already ran
// successfully in the session is gone.
func (t *Tracker) Hooks(snap *settings.Snapshot, sessionID, event string, q settings.Query, ran []*settings.Handler) (run, notRun []*settings.Handler) {
	names := t.Active(sessionID, event)
	if len(names) == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	for _, h := range ran {
		seen[h.Key] = true
	}
	for _, name := range names {
		r, nr := snap.SkillMatch(name, q)
		notRun = append(notRun, nr...)
		for _, h := range r {
			if !seen[h.Key] && !(h.Once && t.removed(sessionID, h.ID)) {
				seen[h.Key] = true
				run = append(run, h)
			}
		}
	}
	return run, notRun
}

func (t *Tracker) removed(sessionID, id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.get(sessionID)
	return s != nil && s.Removed[id]
}

// Ran records the skill hooks hs that ran for an event whose matcher value is
// matchValue; ok(i) says whether hs[i] succeeded. Claude Code removes a once hook after a
// successful run when it finds its group again: the group's matcher is the match value
// itself (a "*", a list or a pattern never is), or the event has none (probe fm-10). A
// once hook that failed or blocked runs again.
func (t *Tracker) Ran(sessionID, matchValue string, hs []*settings.Handler, ok func(i int) bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.get(sessionID)
	if s == nil {
		return
	}
	n := len(s.Removed)
	for i, h := range hs {
		if h.Once && ok(i) && (matchValue == "" || h.MatcherText == matchValue) {
			s.Removed[h.ID] = true
		}
	}
	if len(s.Removed) != n {
		t.save(sessionID, s)
	}
}

// End forgets session (its SessionEnd: Claude Code clears session hooks before it).
func (t *Tracker) End(sessionID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.sessions, sessionID)
	if t.Dir != "" {
		_ = os.Remove(t.file(sessionID))
	}
}

// Prune removes the state files of sessions idle for longer than age (sessions that never
// sent SessionEnd: a crash, a killed terminal).
func (t *Tracker) Prune(age time.Duration) {
	ents, _ := os.ReadDir(t.Dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > age && strings.HasSuffix(e.Name(), ".json") {
			_ = os.Remove(filepath.Join(t.Dir, e.Name()))
		}
	}
}
