package install

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events/jsonobj"
)

// HarnessOptions say what `hookd install codex|gemini` changes.
//
// The harness's hook file (Codex: hooks.json in ~/.codex or <project>/.codex; Gemini CLI:
// settings.json in ~/.gemini or <project>/.gemini) gets one forwarding hook per event
// hookd answers for that harness (Events), running "<hookc> --harness <name>". The
// harness's own command hooks of those events move, verbatim and with their groups
// (matcher, sequential), into hookd.json beside the file, which the harness does not read
// and hookd runs them from — on the harness's payload, their output read in the harness's
// format. Everything else stays: other handler types, events hookd does not forward
// (Gemini's BeforeModel, AfterModel, BeforeToolSelection), every other key. The installer
// writes only keys the harness's schema has (hooks, matcher, type, command, timeout, and
// Gemini's name); its own record lives in hookd.json under "hookd".
type HarnessOptions struct {
	Harness string // "codex" or "gemini"
	// Settings is the harness file to edit.
	Settings string
	// Forwarder is the forwarding command (hookc by absolute path); " --harness <name>"
	// is appended.
	Forwarder string
	// Events are the harness's event names to forward, in order.
	Events []string
	// TimeoutUnit is the unit of "timeout" in the harness's files (Codex seconds, Gemini ms).
	TimeoutUnit  time.Duration
	HookdVersion string
	Now          time.Time
	// BackupDir: as Options.BackupDir.
	BackupDir string
}

// HarnessMeta is the "hookd" record in a harness's hookd.json.
type HarnessMeta struct {
	Version         int             `json:"version"`
	Harness         string          `json:"harness"`
	InstalledFrom   string          `json:"installed_from"`
	Forwarder       string          `json:"forwarder"`
	InstalledAt     string          `json:"installed_at"`
	HookdVersion    string          `json:"hookd_version,omitempty"`
	SettingsExisted bool            `json:"settings_existed"`
	Backup          string          `json:"backup,omitempty"`
	OriginalHooks   json.RawMessage `json:"original_hooks,omitempty"`
	// InstalledSHA256 is the harness file's digest right after the install: while it still
	// matches, uninstall puts OriginalHooks back exactly (groups as they were).
	InstalledSHA256 string `json:"installed_sha256,omitempty"`
}

// forwarderTimeout is the forwarder's timeout before moved hooks raise it: Claude Code's
// default for command hooks (600 s), since the hooks behind the forwarder — Claude Code's
// as well as the harness's — may take that long, and a harness that kills its hook on
// timeout reads that as a failed hook, which lets the action through.
const forwarderTimeout = 600 * time.Second

func harnessForwarderCommand(o HarnessOptions) string { return o.Forwarder + " --harness " + o.Harness }

// isHarnessForwarder recognises a forwarder written by this installer (any hookc path).
func isHarnessForwarder(cmd, harness string) bool {
	return strings.HasSuffix(strings.TrimSpace(cmd), " --harness "+harness) && strings.Contains(cmd, "hookc")
}

// harnessPlan starts a harness plan: the harness's settings file and the hookd.json
// beside it as they are now (nil when absent); o.Now defaults to the current time.
func harnessPlan(o *HarnessOptions) (*Plan, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	hpath := filepath.Join(filepath.Dir(o.Settings), settings.HookdFile)
	p := &Plan{Settings: o.Settings, Hookd: hpath, Backups: map[string]string{}}
	var err error
	if p.SettingsBefore, err = readOptional(o.Settings); err != nil {
		return nil, err
	}
	if p.HookdBefore, err = readOptional(hpath); err != nil {
		return nil, err
	}
	return p, nil
}

// PlanInstallHarness computes the install into a Codex or Gemini CLI hook file.
func PlanInstallHarness(o HarnessOptions) (*Plan, error) {
	p, err := harnessPlan(&o)
	if err != nil {
		return nil, err
	}
	hpath := p.Hookd
	doc := jsonobj.Object{}
	if p.SettingsBefore != nil && len(strings.TrimSpace(string(p.SettingsBefore))) > 0 {
		if doc, err = parseObject(p.SettingsBefore); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Settings, err)
		}
	}
	hookdFile := jsonobj.Object{}
	var meta HarnessMeta
	if p.HookdBefore != nil {
		if hookdFile, err = parseObject(p.HookdBefore); err != nil {
			return nil, fmt.Errorf("%s: %w", hpath, err)
		}
		if raw, ok := hookdFile.Lookup("hookd"); ok {
			_ = json.Unmarshal(raw, &meta)
		}
	}
	hooks := jsonobj.Object{}
	if raw, ok := doc.Lookup("hooks"); ok {
		if hooks, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf("%s: \"hooks\": %w", o.Settings, err)
		}
	}
	moved := jsonobj.Object{}
	if raw, ok := hookdFile.Lookup("hooks"); ok {
		if moved, err = parseObject(raw); err != nil {
			return nil, fmt.Errorf("%s: \"hooks\": %w", hpath, err)
		}
	}
	forward := map[string]bool{}
	for _, e := range o.Events {
		forward[e] = true
	}
	// Split the harness's hooks: command hooks of forwarded events move, old forwarders go.
	kept := jsonobj.Object{}
	nMoved := 0
	maxTimeout := forwarderTimeout
	for _, m := range hooks {
		groups, err := parseArray(m.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: hooks.%s: %w", o.Settings, m.Key, err)
		}
		var keepGroups, moveGroups []json.RawMessage
		for gi, g := range groups {
			gobj, err := parseObject(g)
			if err != nil {
				return nil, fmt.Errorf("%s: hooks.%s[%d]: %w", o.Settings, m.Key, gi, err)
			}
			hraw, _ := gobj.Lookup("hooks")
			hs, err := parseArray(hraw)
			if err != nil {
				return nil, fmt.Errorf("%s: hooks.%s[%d].hooks: %w", o.Settings, m.Key, gi, err)
			}
			var keepH, moveH []json.RawMessage
			for _, h := range hs {
				var hh struct {
					Type    string   `json:"type"`
					Command string   `json:"command"`
					Timeout *float64 `json:"timeout"`
				}
				_ = json.Unmarshal(h, &hh)
				switch {
				case hh.Type == "command" && isHarnessForwarder(hh.Command, o.Harness):
					// an earlier install's forwarder: replaced below
				case forward[m.Key] && hh.Type == "command":
					moveH = append(moveH, h)
					if hh.Timeout != nil && o.TimeoutUnit > 0 {
						if d := time.Duration(*hh.Timeout * float64(o.TimeoutUnit)); d+5*time.Second > maxTimeout {
							maxTimeout = d + 5*time.Second
						}
					}
				default:
					keepH = append(keepH, h)
				}
			}
			if len(keepH) > 0 {
				keepGroups = append(keepGroups, gobj.SetRaw("hooks", array(keepH)).JSON())
			}
			if len(moveH) > 0 {
				moveGroups = append(moveGroups, gobj.SetRaw("hooks", array(moveH)).JSON())
				nMoved += len(moveH)
			}
		}
		if len(keepGroups) > 0 {
			kept = kept.SetRaw(m.Key, array(keepGroups))
		}
		if len(moveGroups) > 0 {
			prev := []json.RawMessage{}
			if raw, ok := moved.Lookup(m.Key); ok {
				prev, _ = parseArray(raw)
			}
			moved = moved.SetRaw(m.Key, array(append(prev, moveGroups...)))
		}
	}
	// The forwarders: one group per forwarded event, no matcher (every tool), after the
	// hooks the harness keeps.
	fwdCmd := harnessForwarderCommand(o)
	timeout := math.Ceil(float64(maxTimeout) / float64(o.TimeoutUnit))
	for _, e := range o.Events {
		h := jsonobj.Object{}.Set("type", "command").Set("command", fwdCmd).Set("timeout", timeout)
		if o.Harness == "gemini" {
			h = h.Set("name", "hookd")
		}
		g := jsonobj.Object{}.SetRaw("hooks", array([]json.RawMessage{h.JSON()}))
		prev := []json.RawMessage{}
		if raw, ok := kept.Lookup(e); ok {
			prev, _ = parseArray(raw)
		}
		kept = kept.SetRaw(e, array(append(prev, g.JSON())))
	}

	if meta.Version == 0 { // first install: remember what to give back
		meta = HarnessMeta{Version: 1, Harness: o.Harness, InstalledFrom: o.Settings,
			SettingsExisted: p.SettingsBefore != nil}
		if raw, ok := doc.Lookup("hooks"); ok {
			meta.OriginalHooks = jsonobj.Compact(raw)
		}
		if p.SettingsBefore != nil {
			p.Backups[o.Settings] = backupName(o.BackupDir, o.Settings, o.Now)
			meta.Backup = p.Backups[o.Settings]
		}
		meta.InstalledAt = o.Now.UTC().Format(time.RFC3339)
	}
	meta.Forwarder, meta.HookdVersion = fwdCmd, o.HookdVersion

	unit := "  "
	if p.SettingsBefore != nil {
		unit = indentUnit(p.SettingsBefore)
	}
	if p.SettingsBefore != nil && doc.Has("hooks") {
		if p.SettingsAfter, err = spliceTopLevel(p.SettingsBefore, "hooks", kept.JSON()); err != nil {
			return nil, err
		}
	} else {
		p.SettingsAfter = append(indent(doc.SetRaw("hooks", kept.JSON()).JSON(), "", unit), '\n')
	}
	if p.SettingsBefore != nil && equalJSON(p.SettingsBefore, p.SettingsAfter) {
		p.SettingsAfter = p.SettingsBefore
	}
	switch {
	case meta.InstalledSHA256 == "" && meta.InstalledAt == o.Now.UTC().Format(time.RFC3339) && len(p.Backups)+boolInt(p.SettingsBefore == nil) > 0:
		meta.InstalledSHA256 = digest(p.SettingsAfter) // first install
	case meta.InstalledSHA256 != "" && digest(p.SettingsBefore) == meta.InstalledSHA256 && sameFile(p.SettingsBefore, p.SettingsAfter):
		// re-install that changes nothing: still exactly as installed
	default:
		meta.InstalledSHA256 = "" // hooks changed since: uninstall merges instead
	}
	hookdOut := jsonobj.Object{}.SetRaw("hooks", moved.JSON()).Set("hookd", meta)
	p.HookdAfter = append(indent(hookdOut.JSON(), "", "  "), '\n')
	if p.HookdBefore != nil && equalJSON(p.HookdBefore, p.HookdAfter) {
		p.HookdAfter = p.HookdBefore
	}
	p.Summary = append(p.Summary,
		fmt.Sprintf("%s: %s moved to %s", o.Settings, plural(nMoved, "hook", "hooks"), hpath),
		fmt.Sprintf("%s: forwarding %s to hookd (%s)", o.Settings, strings.Join(o.Events, ", "), fwdCmd))
	if o.Harness == "codex" {
		if toml, _ := os.ReadFile(filepath.Join(filepath.Dir(o.Settings), "config.toml")); strings.Contains(string(toml), "[hooks") {
			p.Summary = append(p.Summary, "note: config.toml has [hooks] tables; Codex keeps running those itself (move them to hooks.json and install again to route them through hookd)")
		}
		p.Summary = append(p.Summary, "note: Codex runs a non-managed hook only after it is trusted: review the forwarder once with /hooks in codex (or run codex exec with --dangerously-bypass-hook-trust); see docs/harnesses/codex.md")
	}
	p.pruning(o.BackupDir, 0, meta.Backup)
	return p, nil
}

// PlanUninstallHarness gives the harness its hooks back: the forwarders go, the moved
// hooks return to their events (after the hooks the harness kept), and hookd.json is
// removed. When the file is exactly as installed, its original "hooks" value returns.
func PlanUninstallHarness(o HarnessOptions) (*Plan, error) {
	p, err := harnessPlan(&o)
	if err != nil {
		return nil, err
	}
	hpath := p.Hookd
	if p.HookdBefore == nil {
		p.SettingsAfter = p.SettingsBefore
		p.Summary = append(p.Summary, fmt.Sprintf("%s: not installed (no %s)", o.Settings, hpath))
		return p, nil
	}
	hookdFile, err := parseObject(p.HookdBefore)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", hpath, err)
	}
	var meta HarnessMeta
	if raw, ok := hookdFile.Lookup("hookd"); ok {
		_ = json.Unmarshal(raw, &meta)
	}
	moved := jsonobj.Object{}
	if raw, ok := hookdFile.Lookup("hooks"); ok {
		moved, _ = parseObject(raw)
	}
	doc := jsonobj.Object{}
	if p.SettingsBefore != nil {
		if doc, err = parseObject(p.SettingsBefore); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Settings, err)
		}
	}
	hooks := jsonobj.Object{}
	if raw, ok := doc.Lookup("hooks"); ok {
		hooks, _ = parseObject(raw)
	}
	restored := jsonobj.Object{}
	for _, m := range hooks {
		groups, _ := parseArray(m.Value)
		var keep []json.RawMessage
		for _, g := range groups {
			gobj, err := parseObject(g)
			if err != nil {
				keep = append(keep, g)
				continue
			}
			hraw, _ := gobj.Lookup("hooks")
			hs, _ := parseArray(hraw)
			var keepH []json.RawMessage
			for _, h := range hs {
				var hh struct{ Type, Command string }
				_ = json.Unmarshal(h, &hh)
				if hh.Type == "command" && isHarnessForwarder(hh.Command, o.Harness) {
					continue
				}
				keepH = append(keepH, h)
			}
			if len(keepH) > 0 {
				keep = append(keep, gobj.SetRaw("hooks", array(keepH)).JSON())
			}
		}
		if len(keep) > 0 {
			restored = restored.SetRaw(m.Key, array(keep))
		}
	}
	for _, m := range moved {
		groups, _ := parseArray(m.Value)
		prev := []json.RawMessage{}
		if raw, ok := restored.Lookup(m.Key); ok {
			prev, _ = parseArray(raw)
		}
		restored = restored.SetRaw(m.Key, array(append(prev, groups...)))
	}
	switch {
	case len(restored) == 0 && meta.OriginalHooks == nil:
		doc = doc.Without("hooks")
		if len(doc) == 0 && !meta.SettingsExisted {
			p.SettingsAfter = nil
		} else if p.SettingsBefore != nil {
			p.SettingsAfter = append(indent(doc.JSON(), "", indentUnit(p.SettingsBefore)), '\n')
		}
	case meta.InstalledSHA256 != "" && digest(p.SettingsBefore) == meta.InstalledSHA256 && meta.OriginalHooks != nil:
		p.SettingsAfter, err = spliceTopLevel(p.SettingsBefore, "hooks", meta.OriginalHooks)
	case meta.InstalledSHA256 != "" && digest(p.SettingsBefore) == meta.InstalledSHA256 && !meta.SettingsExisted:
		p.SettingsAfter = nil
	default:
		if p.SettingsBefore == nil {
			p.SettingsAfter = append(indent(jsonobj.Object{}.SetRaw("hooks", restored.JSON()).JSON(), "", "  "), '\n')
		} else {
			p.SettingsAfter, err = spliceTopLevel(p.SettingsBefore, "hooks", restored.JSON())
		}
	}
	if err != nil {
		return nil, err
	}
	p.HookdAfter = nil
	p.Backups[hpath] = backupName(o.BackupDir, hpath, o.Now)
	if p.SettingsBefore != nil {
		p.Backups[o.Settings] = backupName(o.BackupDir, o.Settings, o.Now)
	}
	n := 0
	for _, m := range moved {
		gs, _ := parseArray(m.Value)
		for _, g := range gs {
			gobj, _ := parseObject(g)
			hraw, _ := gobj.Lookup("hooks")
			hs, _ := parseArray(hraw)
			n += len(hs)
		}
	}
	p.Summary = append(p.Summary, fmt.Sprintf("%s: forwarders removed, %s restored from %s (removed)", o.Settings, plural(n, "hook", "hooks"), hpath))
	p.pruning(o.BackupDir, 0, meta.Backup)
	return p, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
