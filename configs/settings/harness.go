package settings

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/hookd/hookd/configs/internal/jsontree"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/harness"
	"github.com/hookd/hookd/matcher"
	"github.com/hookd/hookd/protocol"
)

// Harness hook files. `hookd install codex|gemini` moves a harness's own command hooks out
// of the harness's configuration (where the harness would run them itself) into
// hookd.json beside it, which the harness does not read: ~/.codex/hookd.json (in
// $CODEX_HOME when set), <project>/.codex/hookd.json, ~/.gemini/hookd.json,
// <project>/.gemini/hookd.json. They are sources like every settings file: listed by
// Sources.Files (Kind harness, FileRef.Harness naming the harness, Origin its label
// "codex-user", "gemini-project", …), decoded strictly with errors naming file, field,
// line and column, watched and reloaded by the daemon's store, compiled into the
// Snapshot (Snapshot.HarnessHooks), counted in its Revision and named in the audit
// record. Their schema is the harness's hooks schema:
//
//	{"hooks": {"<harness event>": [{"matcher": "...", "sequential": false,
//	    "hooks": [{"type": "command", "command": "...", "name": "...", "timeout": 30}]}]},
//	 "hookd": {the installer's record}}
//
// A matcher is, on tool events, a regular expression over the harness's own tool name
// ("*" or empty: every tool), elsewhere an exact value. timeout is in the harness's unit
// (Codex: seconds, Gemini CLI: milliseconds). Gemini's `sequential: true` makes the
// harness's hooks of that event run as a pipeline. Only command hooks are run (others are
// skipped with a warning, as hookd cannot run them); unknown fields and events are
// warnings.
//
// Gemini CLI skips the hooks its settings name in hooksConfig.disabled, so hookd does
// too: ~/.gemini/settings.json and <project>/.gemini/settings.json are sources of Kind
// harness-config, from which hookd reads that list and nothing else (Gemini's file, not
// hookd's: what it cannot parse is a warning, and the hooks then run).

// Kinds of a harness's own files.
const (
	// KindHarness is a harness's own hooks, moved into hookd.json beside its config.
	KindHarness Kind = "harness"
	// KindHarnessConfig is a harness's own settings file, read for what hookd must
	// honour of it (Gemini CLI's hooksConfig.disabled).
	KindHarnessConfig Kind = "harness-config"
)

// HarnessConfig is what hookd reads of a harness's own settings file.
type HarnessConfig struct {
	// Disabled are hook names (or commands) the harness skips (Gemini CLI's
	// hooksConfig.disabled).
	Disabled []string
}

// harnessFiles lists the harness files of s in configuration order: Codex's (user, then
// project), then Gemini CLI's (settings and hooks, user then project).
func (s Sources) harnessFiles() []FileRef {
	var out []FileRef
	add := func(name string, kind Kind, origin Kind, dir string) {
		if dir != "" {
			out = append(out, FileRef{Path: filepath.Join(dir, name), Kind: kind, Origin: origin, Harness: originHarness[origin]})
		}
	}
	codexHome := s.CodexHome
	if codexHome == "" && s.Home != "" {
		codexHome = filepath.Join(s.Home, ".codex")
	}
	// A project's harness files are listed only when the harness's directory exists in
	// the project: watching for one that may never appear would put a watch on every
	// project's root (the nearest existing ancestor), doubling the watches per project
	// (issue 13's bound is one). The daemon lists them again on a full reload and when
	// an event of that harness finds the directory (ProjectHarnessDir).
	projectDir := func(harnessName string) string {
		if s.ProjectDir == "" {
			return ""
		}
		d := ProjectHarnessDir(s.ProjectDir, harnessName)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return ""
		}
		return d
	}
	homeDir := func(sub string) string {
		if s.Home == "" {
			return ""
		}
		return filepath.Join(s.Home, sub)
	}
	add(HookdFile, KindHarness, "codex-user", codexHome)
	add(HookdFile, KindHarness, "codex-project", projectDir(protocol.HarnessCodex))
	add("settings.json", KindHarnessConfig, "gemini-user", homeDir(".gemini"))
	add(HookdFile, KindHarness, "gemini-user", homeDir(".gemini"))
	gp := projectDir(protocol.HarnessGemini)
	add("settings.json", KindHarnessConfig, "gemini-project", gp)
	add(HookdFile, KindHarness, "gemini-project", gp)
	return out
}

// ProjectHarnessDir is the directory of project that holds harness's own files
// (<project>/.codex, <project>/.gemini); "" for a harness without one.
func ProjectHarnessDir(project, harnessName string) string {
	switch harnessName {
	case protocol.HarnessCodex:
		return filepath.Join(project, ".codex")
	case protocol.HarnessGemini:
		return filepath.Join(project, ".gemini")
	}
	return ""
}

var originHarness = map[Kind]string{
	"codex-user": protocol.HarnessCodex, "codex-project": protocol.HarnessCodex,
	"gemini-user": protocol.HarnessGemini, "gemini-project": protocol.HarnessGemini,
}

// harnessHooks decodes a harness hook file into f.Handlers.
func (d *decoder) harnessHooks(root *jsontree.Node, f *File) error {
	if root.Kind != jsontree.Object {
		return d.fail(root, "", "a harness hook file must be a JSON object (found %s)", root.What())
	}
	ad := harness.For(d.ref.Harness)
	for i, key := range root.Keys {
		switch key {
		case "hookd": // the installer's record
		case "hooks":
			if err := d.harnessEvents(ad, root.Vals[i], f); err != nil {
				return err
			}
		default:
			d.warn(key, "unknown top-level key in a %s hook file; ignored", ad.Name)
		}
	}
	return nil
}

func (d *decoder) harnessEvents(ad *harness.Adapter, n *jsontree.Node, f *File) error {
	if n.Kind != jsontree.Object {
		return d.fail(n, "hooks", "must be an object of %s event names (found %s)", ad.Name, n.What())
	}
	for i, native := range n.Keys {
		v, field := n.Vals[i], "hooks."+native
		ev, _, ok := ad.Event(native)
		if !ok {
			d.warn(field, "unknown %s hook event; skipped", ad.Name)
			continue
		}
		if v.Kind != jsontree.Array {
			return d.fail(v, field, "must be an array of matcher groups (found %s)", v.What())
		}
		for gi, g := range v.Elems {
			hs, err := d.harnessGroup(ad, ev, native, g, fmt.Sprintf("%s[%d]", field, gi), gi)
			if err != nil {
				return err
			}
			f.Handlers = append(f.Handlers, hs...)
		}
	}
	return nil
}

func (d *decoder) harnessGroup(ad *harness.Adapter, ev *events.Event, native string, g *jsontree.Node, field string, gi int) ([]*Handler, error) {
	if g.Kind != jsontree.Object {
		return nil, d.fail(g, field, "must be an object with \"matcher\" and \"hooks\" (found %s)", g.What())
	}
	var m *matcher.Matcher
	text, sequential := "", false
	for i, k := range g.Keys {
		v, err := g.Vals[i], error(nil)
		switch k {
		case "matcher":
			if text, err = d.str(v, field+".matcher"); err == nil && ev.ToolEvent && text != "" && text != "*" {
				if m, err = matcher.Compile(text, false); err != nil {
					err = d.fail(v, field+".matcher", "%v", err)
				}
			}
		case "sequential":
			sequential, err = d.boolean(v, field+".sequential")
		case "hooks":
		default:
			d.warn(field+"."+k, "unknown field in a %s matcher group; ignored", ad.Name)
		}
		if err != nil {
			return nil, err
		}
	}
	hn := g.Get("hooks")
	if hn == nil || hn.Kind != jsontree.Array {
		return nil, d.fail(g, field+".hooks", "missing or not an array (a matcher group needs a \"hooks\" array)")
	}
	var out []*Handler
	for hi, e := range hn.Elems {
		h, err := d.harnessHandler(ad, ev, e, fmt.Sprintf("%s.hooks[%d]", field, hi))
		if err != nil {
			return nil, err
		}
		if h == nil {
			continue
		}
		h.ID = fmt.Sprintf("%s:%s#%s[%d].hooks[%d]", d.ref.Source(), d.ref.Path, native, gi, hi)
		h.NativeEvent, h.Sequential = native, sequential
		h.Matcher, h.MatcherText, h.Group, h.Index = m, text, gi, hi
		out = append(out, h)
	}
	return out, nil
}

// harnessHandler decodes one hook of a harness hook file; nil for a hook hookd does not
// run (a type other than command: skipped with a warning).
func (d *decoder) harnessHandler(ad *harness.Adapter, ev *events.Event, n *jsontree.Node, field string) (*Handler, error) {
	if n.Kind != jsontree.Object {
		return nil, d.fail(n, field, "must be an object (found %s)", n.What())
	}
	h := &Handler{Event: ev, Type: events.Command, Harness: ad.Name, Source: d.ref.Source(), File: d.ref.Path,
		Runnable: true, Raw: append([]byte(nil), d.data[n.Start:n.End]...)}
	for i, k := range n.Keys {
		v, err := n.Vals[i], error(nil)
		switch k {
		case "type":
			var t string
			if t, err = d.str(v, field+".type"); err == nil && t != "command" {
				d.warn(field+".type", "%q hooks are not run by hookd (only command hooks); skipped", t)
				return nil, nil
			}
		case "command":
			h.Command, err = d.str(v, field+".command")
		case "name":
			h.Name, err = d.str(v, field+".name")
		case "timeout":
			h.Timeout, err = d.harnessTimeout(ad, v, field+".timeout")
		default:
			d.warn(field+"."+k, "not read by hookd; ignored")
		}
		if err != nil {
			return nil, err
		}
	}
	if h.Command == "" {
		return nil, d.fail(n, field+".command", "missing (a command hook needs a command)")
	}
	h.Key = "command\x00" + h.Command
	return h, nil
}

func (d *decoder) harnessTimeout(ad *harness.Adapter, v *jsontree.Node, field string) (time.Duration, error) {
	if v.Kind != jsontree.Number {
		return 0, d.fail(v, field, "must be a number (found %s)", v.What())
	}
	x, err := v.Num.Float64()
	if err != nil || x < 0 || math.IsInf(x, 0) || x*float64(ad.TimeoutUnit) > float64(math.MaxInt64) {
		return 0, d.fail(v, field, "must be a non-negative number of %s (found %s)", unitName(ad.TimeoutUnit), v.Num)
	}
	return time.Duration(x * float64(ad.TimeoutUnit)), nil
}

func unitName(u time.Duration) string {
	if u == time.Millisecond {
		return "milliseconds"
	}
	return "seconds"
}

// harnessConfigFile reads what hookd honours of a harness's own settings file: Gemini
// CLI's hooksConfig.disabled. The file is the harness's (it may hold comments, which
// Gemini CLI allows): anything hookd cannot read there is a warning, never an invalid
// file.
func (d *decoder) harnessConfigFile(hash string) *File {
	f := &File{Ref: d.ref, Hash: hash, HarnessConfig: &HarnessConfig{}}
	root, _, err := jsontree.Parse(d.data)
	switch {
	case err != nil:
		d.warn("", "not read (%v): the hooks its hooksConfig.disabled may name are run by hookd", err)
	case root.Kind != jsontree.Object:
		d.warn("", "not a JSON object: the hooks its hooksConfig.disabled may name are run by hookd")
	default:
		d.harnessConfig(root, f)
	}
	f.Warnings = d.warns
	return f
}

func (d *decoder) harnessConfig(root *jsontree.Node, f *File) {
	hc := root.Get("hooksConfig")
	if hc == nil {
		return
	}
	dis := hc.Get("disabled")
	if dis == nil {
		return
	}
	names, err := d.strings(dis, "hooksConfig.disabled")
	if err != nil {
		d.warn("hooksConfig.disabled", "not read (%v): the hooks it names are run by hookd", err)
		return
	}
	f.HarnessConfig.Disabled = names
}

// addHarness indexes a harness file of the snapshot.
func (s *Snapshot) addHarness(f *File) {
	name := f.Ref.Harness
	if f.HarnessConfig != nil {
		if s.harnessOff == nil {
			s.harnessOff = map[string]map[string]bool{}
		}
		if s.harnessOff[name] == nil {
			s.harnessOff[name] = map[string]bool{}
		}
		for _, n := range f.HarnessConfig.Disabled {
			s.harnessOff[name][n] = true
		}
	}
	for _, h := range f.Handlers {
		if s.harness == nil {
			s.harness = map[string]map[string][]*Handler{}
		}
		if s.harness[name] == nil {
			s.harness[name] = map[string][]*Handler{}
		}
		s.harness[name][h.NativeEvent] = append(s.harness[name][h.NativeEvent], h)
	}
	s.Warnings = append(s.Warnings, f.Warnings...)
}

// HarnessHooks returns the harness's own hooks for its event native whose group matches
// value — on tool events the harness's tool name (a regular expression; "*" or empty: all),
// elsewhere the event's matcher value (exact) — in configuration order, without those the
// harness's settings disable, and whether any of them is in a sequential group (Gemini
// CLI: the whole plan then runs as a pipeline).
func (s *Snapshot) HarnessHooks(harnessName, native, value string) (hs []*Handler, sequential bool) {
	off := s.harnessOff[harnessName]
	for _, h := range s.harness[harnessName][native] {
		if !harnessMatch(h, value) || off[h.Command] || h.Name != "" && off[h.Name] {
			continue
		}
		hs = append(hs, h)
		sequential = sequential || h.Sequential
	}
	return hs, sequential
}

func harnessMatch(h *Handler, value string) bool {
	switch {
	case h.MatcherText == "" || h.MatcherText == "*":
		return true
	case h.Event.ToolEvent:
		return h.Matcher.Match(value)
	}
	return h.MatcherText == value
}
