package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hookd/hookd/configs/internal/jsontree"
	"github.com/hookd/hookd/configs/settings/internal/harnessfile"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/protocol"
)

// Harness hook files: `hookd install codex|gemini` moves a harness's own command hooks
// into hookd.json beside its configuration, which the harness does not read (~/.codex,
// $CODEX_HOME, ~/.gemini and the projects' .codex and .gemini). They are sources like
// every settings file: listed by Files (Kind harness), decoded strictly (package
// internal/harnessfile: the harness's hooks schema, errors with file, field, line and
// column, unknown fields and events as warnings), reloaded by the daemon's store,
// counted in the revision, served by Snapshot.HarnessHooks. Gemini CLI skips the hooks
// its settings list in hooksConfig.disabled, so hookd reads that list from Gemini's
// settings.json (Kind harness-config, leniently: it is Gemini's file, which may hold
// comments). docs/harnesses/ says the rest.

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
	hooks, warns, err := harnessfile.Decode(d.ref.Harness, d.data, root)
	if err != nil {
		he := err.(*harnessfile.Error)
		fe := &FileError{File: d.ref.Path, Field: he.Field, Err: errors.New(he.Msg)}
		if he.Off >= 0 {
			fe.Line, fe.Col = d.pos(he.Off)
		}
		return fe
	}
	for _, w := range warns {
		d.warn(w.Field, "%s", w.Message)
	}
	for _, hk := range hooks {
		f.Handlers = append(f.Handlers, &Handler{
			ID:    fmt.Sprintf("%s:%s#%s[%d].hooks[%d]", d.ref.Source(), d.ref.Path, hk.Native, hk.Group, hk.Index),
			Event: hk.Event, Type: events.Command, Command: hk.Command, Timeout: hk.Timeout,
			Harness: d.ref.Harness, NativeEvent: hk.Native, Name: hk.Name, Sequential: hk.Sequential,
			Matcher: hk.Matcher, MatcherText: hk.MatcherText, Source: d.ref.Source(), File: d.ref.Path,
			Group: hk.Group, Index: hk.Index, Runnable: true, Key: "command\x00" + hk.Command, Raw: hk.Raw,
		})
	}
	return nil
}

// harnessConfigFile reads what hookd honours of a harness's own settings file
// (harnessfile.DecodeConfig): never an invalid file.
func (d *decoder) harnessConfigFile(hash string) *File {
	disabled, warns := harnessfile.DecodeConfig(d.data)
	for _, w := range warns {
		d.warn(w.Field, "%s", w.Message)
	}
	return &File{Ref: d.ref, Hash: hash, HarnessConfig: &HarnessConfig{Disabled: disabled}, Warnings: d.warns}
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
