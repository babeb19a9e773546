package daemon

import (
	"os"
	"sync/atomic"
	"time"

	"github.com/hookd/hookd/daemon/audit"
	"github.com/hookd/hookd/protocol"
)

// Status reports the engine's state: settings sources, watcher, projects and counters.
// Daemon.Status adds the parts the engine does not own.
func (e *engine) Status() protocol.Status {
	files, projects := e.store.Status()
	mode := e.cfg.Mode
	if mode == "" {
		mode = "parallel"
	}
	st := protocol.Status{
		Version: Version, PID: os.Getpid(), StartedAt: e.start, Uptime: time.Since(e.start).Round(time.Second).String(),
		Generation: e.store.Generation(), Mode: mode, Sources: files, Projects: projects,
		Counters: protocol.Counters{
			Events: e.counters.events.Load(), Errors: e.counters.errors.Load(),
			HooksRun: e.counters.hooksRun.Load(), HookErrors: e.counters.hookErrors.Load(),
			Timeouts: e.counters.timeouts.Load(), RuleOverrides: e.counters.overrides.Load(),
			AuditFailures: e.counters.auditFailures.Load(),
		},
		PerEvent: map[string]uint64{},
		Watcher:  e.store.WatcherStatus(), LastReload: e.store.LastReload(),
	}
	st.Clients = e.clients.List(Version)
	max, idle := e.store.ProjectLimits()
	st.ProjectCache = &protocol.ProjectCacheStatus{Live: len(projects), Max: max, IdleTimeout: idle.String(), Evicted: e.store.Evictions()}
	for _, f := range files {
		if f.Error != "" {
			st.PendingErrors = append(st.PendingErrors, f.Error)
		}
		if f.Refused != nil {
			st.Refused = append(st.Refused, f.Path+": "+f.Refused.Reason)
		}
	}
	e.counters.perEvent.Range(func(k, v any) bool {
		st.PerEvent[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return st
}

// Status is the answer to `hookd status`: the engine's Status plus the runner pool
// (prewarmed processes, persistent workers) and the decision log.
func (d *Daemon) Status() protocol.Status {
	st := d.engine.Status()
	ps := d.pool.Stats()
	prewarm, workers := protocol.PrewarmStatus(ps.Prewarm), protocol.WorkerStatus(ps.Workers)
	zyg := protocol.ZygoteStatus(ps.Zygote)
	st.Prewarm, st.Workers, st.Zygote = &prewarm, &workers, &zyg
	if d.audit != nil {
		a := auditStatus(d.audit.Status())
		for _, e := range d.audit.Exporters() {
			a.Exporters = append(a.Exporters, protocol.ExporterStatus(e))
		}
		st.Audit = &a
	}
	switch {
	case d.http != nil:
		st.HTTP = &protocol.HTTPForwarderStatus{Listen: d.http.Addr()}
	case d.httpErr != "":
		st.HTTP = &protocol.HTTPForwarderStatus{Error: d.httpErr}
	}
	return st
}

// auditStatus converts the log's status (field for field: the wire type also lists the
// exporters).
func auditStatus(s audit.Status) protocol.AuditStatus {
	return protocol.AuditStatus{Path: s.Path, Fsync: s.Fsync, Seq: s.Seq, Records: s.Records, Batches: s.Batches,
		Repairs: s.Repairs, Rotations: s.Rotations, Failures: s.Failures, LastError: s.LastError,
		LastErrorAt: s.LastErrorAt, Healthy: s.Healthy, Checkpoints: s.Checkpoints}
}
