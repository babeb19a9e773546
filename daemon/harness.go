package daemon

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/harness"
	"github.com/hookd/hookd/matcher"
	"github.com/hookd/hookd/protocol"
)

// harnessReq is what the engine knows about the agent that sent one event.
type harnessReq struct {
	ad      *harness.Adapter
	version string
	// native is the harness's event name, nativeTool/nativeInput the tool call as sent.
	native      string
	nativeTool  string
	nativeInput json.RawMessage
	// local: a harness-only event (Codex Interrupt) with no catalogue counterpart.
	local    bool
	localEv  *events.Event
	canon    []byte // the payload in Claude Code's shape
	original []byte // the payload as the harness sent it
}

// harnessOf identifies the harness (Request.Harness, else harness.Detect) and
// puts the payload into Claude Code's shape.
func (e *Engine) harnessOf(req *protocol.Request) (*harnessReq, error) {
	name := req.Harness
	if name == "" {
		name = harness.Detect(req.Event)
	}
	if !harness.Valid(name) {
		return nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "harness",
			Message: fmt.Sprintf("unknown harness %q (hookd knows %s)", name, strings.Join(harness.Names(), ", "))}
	}
	hr := &harnessReq{ad: harness.For(name), version: req.HarnessVersion, canon: req.Event, original: req.Event}
	if hr.version == "" && name != protocol.HarnessGemini { // Gemini's transcript names no version
		hr.version = e.transcriptVersion(name, req.Event)
	}
	if hr.ad.Native() {
		return hr, nil
	}
	var top struct {
		Event     string          `json:"hook_event_name"`
		Tool      string          `json:"tool_name"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(req.Event, &top); err != nil {
		return hr, nil // ParseHeader reports it
	}
	hr.native, hr.nativeTool, hr.nativeInput = top.Event, top.Tool, top.ToolInput
	ev, local, ok := hr.ad.Event(top.Event)
	if !ok {
		return nil, &protocol.Error{Code: protocol.CodeUnknownEvent, Event: top.Event, Field: "event.hook_event_name",
			Message: fmt.Sprintf("unknown %s hook event %q", name, top.Event)}
	}
	if local {
		hr.local, hr.localEv = true, ev
		return hr, nil
	}
	canon, err := hr.ad.Canonical(req.Event)
	if err != nil {
		return nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "event", Message: "event payload: " + err.Error()}
	}
	hr.canon = canon
	return hr, nil
}

// localHeader reads the header of a harness-only event (no catalogue lookup).
func localHeader(hr *harnessReq) (Header, *events.Event, error) {
	var top struct {
		SessionID string `json:"session_id"`
		Cwd       string `json:"cwd"`
	}
	if err := json.Unmarshal(hr.original, &top); err != nil {
		return Header{}, nil, &protocol.Error{Code: protocol.CodeBadRequest, Field: "event", Message: "event payload is not a JSON object: " + err.Error()}
	}
	return Header{Event: hr.native, SessionID: top.SessionID, Cwd: top.Cwd}, hr.localEv, nil
}

// transcriptVersion reads the harness's version from the session's transcript, once per
// transcript, since neither Codex nor Claude Code passes one in the payload or the hook's
// environment: Codex's first line is session_meta with payload.cli_version; Claude Code's
// message lines carry "version". Only the first 64 KiB are read, and only a found version
// is cached (at SessionStart the transcript may not exist yet).
func (e *Engine) transcriptVersion(harnessName string, payload []byte) string {
	var p struct {
		Transcript string `json:"transcript_path"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Transcript == "" || !filepath.IsAbs(p.Transcript) {
		return ""
	}
	key := harnessName + "\x00" + p.Transcript
	if v, ok := e.versions.get(key); ok {
		return v
	}
	f, err := os.Open(p.Transcript)
	if err != nil {
		return ""
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: 64 << 10}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 16<<10), 64<<10)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Version string `json:"version"`
			Payload struct {
				CLIVersion string `json:"cli_version"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		v := line.Version
		if harnessName == protocol.HarnessCodex {
			v = line.Payload.CLIVersion
		}
		if v != "" && len(v) < 64 {
			e.versions.put(key, v)
			return v
		}
	}
	if lr.N == 0 { // the whole window was read without a version: later reads won't find one
		e.versions.put(key, "")
	}
	return ""
}

// versionCache maps transcript paths to versions, bounded: it is emptied when full.
type versionCache struct {
	mu sync.Mutex
	m  map[string]string
}

const versionCacheMax = 4096

func (c *versionCache) get(k string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *versionCache) put(k, v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= versionCacheMax {
		c.m = make(map[string]string)
	}
	c.m[k] = v
}

// nativeHookFile is a harness's own hooks, moved by `hookd install codex|gemini` out of
// the harness's settings into a hookd-owned file beside them (so the harness no longer
// runs them itself): the harness's hooks schema, event → [{matcher, sequential, hooks}].
type nativeHookFile struct {
	Hooks map[string][]struct {
		Matcher    string `json:"matcher"`
		Sequential bool   `json:"sequential"`
		Hooks      []struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Name    string   `json:"name"`
			Timeout *float64 `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// NativeHookFiles returns the hookd-owned files holding harness's own hooks, for home,
// project and (Codex) CODEX_HOME, with the source label each carries.
func NativeHookFiles(harnessName, home, codexHome, project string) []settings.FileRef {
	var dirs []settings.FileRef
	switch harnessName {
	case protocol.HarnessCodex:
		if codexHome == "" && home != "" {
			codexHome = filepath.Join(home, ".codex")
		}
		if codexHome != "" {
			dirs = append(dirs, settings.FileRef{Path: filepath.Join(codexHome, settings.HookdFile), Kind: settings.KindHookd, Origin: "codex-user"})
		}
		if project != "" {
			dirs = append(dirs, settings.FileRef{Path: filepath.Join(project, ".codex", settings.HookdFile), Kind: settings.KindHookd, Origin: "codex-project"})
		}
	case protocol.HarnessGemini:
		if home != "" {
			dirs = append(dirs, settings.FileRef{Path: filepath.Join(home, ".gemini", settings.HookdFile), Kind: settings.KindHookd, Origin: "gemini-user"})
		}
		if project != "" {
			dirs = append(dirs, settings.FileRef{Path: filepath.Join(project, ".gemini", settings.HookdFile), Kind: settings.KindHookd, Origin: "gemini-project"})
		}
	}
	return dirs
}

type cachedNative struct {
	mod  time.Time
	size int64
	file *nativeHookFile
	err  error
}

// loadNative reads one native hooks file, cached by modification time and size.
func (e *Engine) loadNative(path string) (*nativeHookFile, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil // absent: no hooks
	}
	if c, ok := e.nativeCache.Load(path); ok {
		c := c.(*cachedNative)
		if c.mod.Equal(fi.ModTime()) && c.size == fi.Size() {
			return c.file, c.err
		}
	}
	data, err := os.ReadFile(path)
	c := &cachedNative{mod: fi.ModTime(), size: fi.Size()}
	if err == nil {
		var f nativeHookFile
		if err = json.Unmarshal(data, &f); err == nil {
			c.file = &f
		}
	}
	if err != nil {
		c.err = fmt.Errorf("%s: %w", path, err)
	}
	e.nativeCache.Store(path, c)
	return c.file, c.err
}

// geminiDisabled is the set of hook names hooksConfig.disabled lists in the Gemini
// settings files (user and project): Gemini skips those hooks, so hookd does too.
func geminiDisabled(home, project string) map[string]bool {
	out := map[string]bool{}
	for _, p := range []string{filepath.Join(home, ".gemini", "settings.json"), filepath.Join(project, ".gemini", "settings.json")} {
		if home == "" && strings.HasPrefix(p, ".gemini") || project == "" && p == filepath.Join(".gemini", "settings.json") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var s struct {
			HooksConfig struct {
				Disabled []string `json:"disabled"`
			} `json:"hooksConfig"`
		}
		if json.Unmarshal(data, &s) == nil {
			for _, n := range s.HooksConfig.Disabled {
				out[n] = true
			}
		}
	}
	return out
}

// nativeHandlers returns the harness's own hooks for this event whose matcher matches,
// as handlers the runner can run, and whether any matching group asks for sequential
// execution (Gemini's `sequential: true` makes the whole plan sequential). Files that
// cannot be read are reported as warnings; their hooks do not run, which fails closed only
// through the other hooks and rules — the same as the harness would do with a broken file.
func (e *Engine) nativeHandlers(hr *harnessReq, ev *events.Event, env []string, project, matchValue string) (hs []*settings.Handler, sequential bool, warnings []string) {
	files := NativeHookFiles(hr.ad.Name, e.home, runner.LookupEnv(env, "CODEX_HOME"), project)
	var disabled map[string]bool
	if hr.ad.Name == protocol.HarnessGemini {
		disabled = geminiDisabled(e.home, project)
	}
	for _, ref := range files {
		f, err := e.loadNative(ref.Path)
		if err != nil {
			warnings = append(warnings, "harness hooks not loaded: "+err.Error())
			continue
		}
		if f == nil {
			continue
		}
		for gi, g := range f.Hooks[hr.native] {
			if !nativeMatch(g.Matcher, matchValue, ev.ToolEvent) {
				continue
			}
			if g.Sequential {
				sequential = true
			}
			for hi, nh := range g.Hooks {
				if nh.Type != "" && nh.Type != "command" || nh.Command == "" {
					continue
				}
				if nh.Name != "" && disabled[nh.Name] || disabled[nh.Command] {
					continue
				}
				var timeout time.Duration
				if nh.Timeout != nil && *nh.Timeout > 0 {
					timeout = time.Duration(*nh.Timeout * float64(hr.ad.TimeoutUnit))
				}
				raw, _ := json.Marshal(nh)
				hs = append(hs, &settings.Handler{
					ID:    fmt.Sprintf("%s:%s#%s[%d].hooks[%d]", ref.Origin, ref.Path, hr.native, gi, hi),
					Event: ev, Type: events.Command, Command: nh.Command, Timeout: timeout,
					MatcherText: g.Matcher, Source: ref.Origin, File: ref.Path, Group: gi, Index: hi,
					Runnable: true, Key: "command\x00" + nh.Command, Raw: raw,
				})
			}
		}
	}
	return hs, sequential, warnings
}

var nativeMatchers sync.Map // matcher text → *matcher.Matcher

// nativeMatch applies a Codex or Gemini matcher: on tool events a regular expression over
// the harness's tool name ("*" or empty: all); on other events an exact value or "*".
// Claude Code's matcher grammar (exact names and | lists, else a regex) agrees on every
// matcher these harnesses document, so it is used for both.
func nativeMatch(m, value string, toolEvent bool) bool {
	if m == "" || m == "*" {
		return true
	}
	if !toolEvent {
		return m == value
	}
	c, ok := nativeMatchers.Load(m)
	if !ok {
		cm, err := matcher.Compile(m, false)
		if err != nil {
			return false // an invalid matcher matches nothing, as in the harnesses
		}
		c, _ = nativeMatchers.LoadOrStore(m, cm)
	}
	return c.(*matcher.Matcher).Match(value)
}
