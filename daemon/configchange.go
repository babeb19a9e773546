package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/hookd/hookd/daemon/store"
	"github.com/hookd/hookd/protocol"
)

// configChangeClient names the synthesized ConfigChange events in logs and audit records.
const configChangeClient = "hookd-reload"

// vetoConfigChange is the Store's VetoFunc: before a detected settings change is applied,
// it runs the ConfigChange event (spec §1.1, §4.4) in every loaded project that reads
// the file, through the normal engine path and on that project's current — old —
// snapshot, as Claude Code runs the hooks of the session whose settings changed. If any
// project's hooks block (exit 2 or decision:"block"), the change is refused: the file's
// previous version stays in force. The store ignores refusals of policy_settings changes
// (Claude Code cannot refuse those either) but the hooks still run.
//
// The payload is the one Claude Code sends (spec §1.3): session_id is the last session
// seen in the project ("" when none), transcript_path is "" (hookd has no transcript),
// cwd is the project directory.
func (e *engine) vetoConfigChange(ctx context.Context, changes []store.SettingsChange) map[string]protocol.Refusal {
	type job struct {
		c       store.SettingsChange
		project string
	}
	var jobs []job
	for _, c := range changes {
		for _, p := range c.Projects {
			// Most projects have no ConfigChange hook: skip the event (and its audit
			// record) entirely then.
			if len(e.store.Snapshot(p).HandlersFor("ConfigChange")) == 0 {
				continue
			}
			jobs = append(jobs, job{c, p})
		}
	}
	if len(jobs) == 0 {
		return nil
	}
	var mu sync.Mutex
	out := map[string]protocol.Refusal{}
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			blocked, reason := e.runConfigChange(ctx, j.c, j.project)
			if !blocked {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if _, done := out[j.c.Ref.Path]; !done || j.project < out[j.c.Ref.Path].Project {
				out[j.c.Ref.Path] = protocol.Refusal{Reason: reason, Project: j.project}
			}
		}()
	}
	wg.Wait()
	return out
}

// runConfigChange sends one synthesized ConfigChange event through Handle and reports
// whether the hooks blocked it.
func (e *engine) runConfigChange(ctx context.Context, c store.SettingsChange, project string) (blocked bool, reason string) {
	session, _ := e.sessions.Load(project)
	sid, _ := session.(string)
	payload, _ := json.Marshal(map[string]string{
		"session_id": sid, "transcript_path": "", "cwd": project,
		"hook_event_name": "ConfigChange", "source": c.Source, "file_path": c.Ref.Path,
	})
	req := &protocol.Request{V: protocol.Version, Event: payload, ProjectDir: project,
		Options: protocol.Options{Client: configChangeClient, ResultOnly: true}}
	log := e.log.With(zap.String("project", project), zap.String("file", c.Ref.Path), zap.String("source", c.Source))
	res, err := e.Handle(ctx, req, Caller{Client: configChangeClient}, nil)
	if err != nil {
		// Handle refuses only malformed requests; ours is well formed. Not a veto.
		log.Error("ConfigChange event failed", zap.Error(err))
		return false, ""
	}
	if res.Block == nil {
		return false, ""
	}
	reason = strings.TrimSpace(res.Block.Reason)
	if reason == "" {
		reason = "blocked by a ConfigChange hook"
	}
	if !c.Vetoable() {
		log.Warn("ConfigChange hook blocked a policy_settings change; managed policy cannot be refused",
			zap.String("reason", reason), zap.String("decision_id", res.DecisionID))
	} else {
		log.Warn("ConfigChange hook refused a settings change",
			zap.String("reason", reason), zap.String("decision_id", res.DecisionID))
	}
	return true, reason
}

// noteSession is an observer: it remembers the last session seen in a project, for the
// session_id of the ConfigChange events hookd synthesizes. The common case (same session
// again) is a lock-free read.
func noteSession(e *engine, x *event) {
	project, session := x.project, x.h.SessionID
	if session == "" {
		return
	}
	if v, ok := e.sessions.Load(project); ok && v.(string) == session {
		return
	}
	e.sessions.Store(project, session)
}
