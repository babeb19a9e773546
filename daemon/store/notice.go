package store

import (
	"context"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/settings"
)

// Notice lists a project's files again (a full reload) before an event takes its snapshot
// when files the project reads have appeared since it was listed and no watch would have
// said so:
//   - a harness's own directory (.codex, .gemini) created since: checked on every event of
//     that harness, one stat (Sources.Files lists its files only when it exists);
//   - a subagent, skill or slash-command file that is new in a directory that held none:
//     checked at SessionStart, one directory walk per session. Claude Code reads those
//     files when a session starts; under the managed drop-in hookd runs their hooks, so a
//     file hookd has not listed would be a hook that runs nowhere.
//
// A project the store has not loaded yet is left alone: its first snapshot lists it.
func (s *Store) Notice(ctx context.Context, project, harness, event string) {
	if project == "" {
		return
	}
	if dir := settings.ProjectHarnessDir(project, harness); dir != "" {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() && !s.Lists(project, filepath.Join(dir, settings.HookdFile)) {
			s.log.Info("harness directory appeared in a project; listing its files again", zap.String("dir", dir))
			s.Reload(ctx, "harness directory appeared")
			return
		}
	}
	if event != "SessionStart" || s.base.NoFrontmatter {
		return
	}
	for _, r := range s.sourcesFor(project).FrontmatterFiles() {
		if !s.Lists(project, r.Path) {
			s.log.Info("agent or skill file appeared; listing the project's files again", zap.String("file", r.Path))
			s.Reload(ctx, "agent or skill file appeared")
			return
		}
	}
}
