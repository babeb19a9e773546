package install

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
	"github.com/hookd/hookd/events/jsonobj"
)

// DropInName is the file name of hookd's managed drop-in (`hookd install claude-code
// --scope managed`) in <managed-dir>/managed-settings.d/. Claude Code merges drop-ins in
// alphabetical order after managed-settings.json (spec §7): hooks add up across them and
// a later file's scalars win, so "50-" leaves room for an admin's files on either side.
const DropInName = "50-hookd.json"

// The managed scope (Options.Scope == settings.KindManaged) writes one drop-in and touches
// no other file:
//
//	{"allowManagedHooksOnly": true, "hooks": {<every forwardable event>: [hookc forwarder]}}
//
// allowManagedHooksOnly makes Claude Code run managed hooks only — the forwarders and the
// admin's own — so a hook a developer adds to a user or project file runs nowhere but in
// hookd, which reads those files as they are (settings.Snapshot.RoutedBy: hookd does not
// apply the drop-in's own flag to the hooks it routes). Every event is forwarded, not
// only the hooked ones as in the other scopes: the drop-in cannot follow the developer's
// files (an MDM delivers it; it is root's), and a hook can appear in them at any time.
// The drop-in holds no key of hookd's: Claude Code 2.1.330 ignores a settings file with
// an unknown top-level key (spec §12), and an unparseable managed file stops it from
// starting (2.1.259). hookd recognises the file as its own by its content: nothing but
// hookc forwarders and allowManagedHooksOnly.

// ManagedForwarding says whether the managed drop-in forwards event, and why not. Three
// events are not forwarded although hooks for them in user or project files then run
// nowhere (docs/fleet.md): a WorktreeCreate/WorktreeRemove hook replaces Claude Code's own
// worktree handling, so a forwarder with nothing behind it would break worktrees; and
// FileChanged's matchers are the list of files Claude Code watches, which a drop-in
// written once for every project cannot know.
func ManagedForwarding(event string) (bool, string) {
	switch event {
	case "WorktreeCreate", "WorktreeRemove", "FileChanged":
		_, why := Forwarding(event, false)
		return false, why
	}
	return true, ""
}

// managedDropIn is the drop-in's content for forwarder fwd.
func managedDropIn(fwd hookcCmd) []byte {
	// One placeholder command hook per forwarded event, with no matcher and no timeout,
	// through the same forwarders() the other scopes use: matcher "*" where the event has
	// a matcher field, the default forwarder timeout, SessionEnd's shared budget left alone.
	handler := jsonobj.Object{}.Set("type", "command").Set("command", "placeholder")
	group := jsonobj.Object{}.SetRaw("hooks", array([]json.RawMessage{handler.JSON()}))
	all := jsonobj.Object{}
	for _, name := range events.Names() {
		if ok, _ := ManagedForwarding(name); ok {
			all = append(all, jsonobj.Member{Key: name, Value: array([]json.RawMessage{group.JSON()})})
		}
	}
	top := jsonobj.Object{}.SetRaw("allowManagedHooksOnly", json.RawMessage("true")).SetRaw("hooks", forwarders(all, fwd, nil, false).JSON())
	return append(indent(top.JSON(), "", "  "), '\n')
}

// isOurDropIn reports whether data is a drop-in hookd could have written: only the keys
// "allowManagedHooksOnly" and "hooks", and every handler a hookc forwarder.
func isOurDropIn(data []byte) bool {
	top, err := parseObject(data)
	if err != nil || !top.Has("hooks") {
		return false
	}
	for _, m := range top {
		if m.Key != "hooks" && m.Key != "allowManagedHooksOnly" {
			return false
		}
	}
	hooks, err := parseObject(mustRaw(top, "hooks"))
	if err != nil {
		return false
	}
	ours := true
	eachHandler(hooks, func(_ string, _ *string, hi handlerInfo) {
		if hi.Type != "command" || !settings.IsForwarder(hi.Command, hi.Args) {
			ours = false
		}
	})
	return ours
}

func planInstallManaged(o Options) (*Plan, error) {
	before, err := readOptional(o.Settings)
	if err != nil {
		return nil, err
	}
	if before != nil && !isOurDropIn(before) {
		return nil, fmt.Errorf("%s exists and holds more than hookd's forwarders; hookd will not overwrite a managed policy file (remove it, or install hookd's drop-in under another managed dir)", o.Settings)
	}
	after := managedDropIn(forwarderOf(o.Forwarder, o.Form))
	p := &Plan{Settings: o.Settings, SettingsBefore: before, SettingsAfter: after, Backups: map[string]string{}}
	if before != nil && bytes.Equal(before, after) {
		p.Summary = append(p.Summary, fmt.Sprintf("already installed: %s forwards every event to hookd (%s)", o.Settings, o.Forwarder))
		return p, nil
	}
	n := 0
	for _, name := range events.Names() {
		if ok, _ := ManagedForwarding(name); ok {
			n++
		}
	}
	verb := "wrote"
	if before != nil {
		verb = "rewrote"
	}
	p.Summary = append(p.Summary,
		fmt.Sprintf("%s %s: allowManagedHooksOnly, and forwarders to %s for %d events (all but FileChanged, WorktreeCreate, WorktreeRemove)", verb, o.Settings, o.Forwarder, n),
		"Claude Code now runs managed hooks only; hookd runs the hooks of the user, project and local files (which stay as they are)")
	return p, nil
}

func planUninstallManaged(o Options) (*Plan, error) {
	before, err := readOptional(o.Settings)
	if err != nil {
		return nil, err
	}
	if before == nil {
		return nil, fmt.Errorf("not installed: no %s", o.Settings)
	}
	if !isOurDropIn(before) {
		return nil, fmt.Errorf("%s holds more than hookd's forwarders; not removing a managed policy file hookd did not write", o.Settings)
	}
	return &Plan{Settings: o.Settings, SettingsBefore: before, Backups: map[string]string{},
		Summary: []string{"removed " + o.Settings + ": Claude Code runs every file's hooks itself again"}}, nil
}
