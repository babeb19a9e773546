package daemon

import (
	"errors"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/install"
	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/protocol"
)

// Forwarders follow hookd's files. `hookd install claude-code` forwards only events that
// have hooks behind them (issue 14, item 3), so when a hookd-owned file (hookd.json,
// hookd.local.json) changes — a hook added, one removed — the running daemon recomputes
// that scope's forwarders (install.PlanResync) and rewrites only the forwarders in the
// Claude Code file beside it. No other key or hook of that file changes, and Claude Code,
// which reloads hooks when its settings files change, picks the new forwarders up
// mid-session. Only a serving daemon does this (engineOptions.SyncForwarders, set by New
// with a socket); `hookd run` writes nothing.

// forwardersFollow is the store's OnReload with engineOptions.SyncForwarders: it follows
// the hookd-owned files beside Claude Code's (not the harnesses' hook files, which have
// no forwarders to follow them: `hookd install codex|gemini` forwards every event).
func (e *engine) forwardersFollow(sum protocol.ReloadSummary) {
	if len(sum.Changed) == 0 {
		return
	}
	claude := map[string]bool{}
	for _, r := range e.store.KnownFiles() {
		claude[r.Path] = r.Kind == settings.KindHookd
	}
	for _, p := range sum.Changed {
		if claude[p] {
			e.resyncForwarders(p)
		}
	}
}

// SyncForwarders checks the user scope's forwarders once: hookd's files may have changed
// while no daemon ran. A project's are checked on its next change, or by running
// `hookd install` there again. New calls it once the socket is its own.
func (e *engine) SyncForwarders() {
	e.resyncForwarders(filepath.Join(e.store.Base().UserDir, settings.HookdFile))
}

// resyncAttempts bounds how often a resync re-plans when the user keeps editing Claude
// Code's file under it; afterwards it gives up with a warning (the next change of
// hookd's file tries again). Nothing of the user's is lost either way.
const resyncAttempts = 5

// beforeResyncApply, when set (tests), runs between planning and applying a resync.
var beforeResyncApply func(settings string)

func (e *engine) resyncForwarders(hookdPath string) {
	base := filepath.Base(hookdPath)
	if base != settings.HookdFile && base != settings.HookdLocalFile {
		return
	}
	// Compare-and-swap: Apply writes Claude Code's file only if it still holds what the
	// plan was made from; when the user saved it in between, plan again from their version.
	for range resyncAttempts {
		p, err := install.PlanResyncFile(hookdPath, e.httpEP, StartsWarm)
		if err != nil {
			e.log.Warn("cannot keep forwarders in step with hookd's file", zap.String("file", hookdPath), zap.Error(err))
			return
		}
		if p == nil || !p.Changed() {
			return
		}
		if beforeResyncApply != nil {
			beforeResyncApply(p.Settings)
		}
		err = p.Apply()
		if errors.Is(err, install.ErrChangedSinceRead) {
			e.log.Info("settings file changed while forwarders were being rewritten; planning again", zap.String("file", p.Settings))
			continue
		}
		if err != nil {
			e.log.Warn("cannot rewrite forwarders", zap.String("file", p.Settings), zap.Error(err))
			return
		}
		e.log.Info("forwarders follow hookd's file", zap.String("hookd_file", hookdPath), zap.String("settings", p.Settings), zap.Strings("summary", p.Summary))
		return
	}
	e.log.Warn("forwarders not rewritten: the settings file kept changing", zap.String("hookd_file", hookdPath), zap.Int("attempts", resyncAttempts))
}
