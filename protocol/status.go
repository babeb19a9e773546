package protocol

import "time"

// The answers to the "status" and "reload" requests, carried in a result frame's Data.
// They are part of the wire contract like every other frame: `hookd status --json`
// prints Status as it arrives, and tools may read it. Fields are added, never renamed.

// Status is the answer to an OpStatus request: what the daemon is running and how it
// is doing.
type Status struct {
	Version    string    `json:"version"`
	PID        int       `json:"pid"`
	Uptime     string    `json:"uptime"`
	StartedAt  time.Time `json:"started_at"`
	Generation uint64    `json:"generation"` // bumped by every snapshot swap
	Mode       string    `json:"mode"`       // how handlers of one event run: parallel | sequential
	// Sources are the settings files hookd reads, each with its state.
	Sources []SourceStatus `json:"sources"`
	// PendingErrors are the settings files that are invalid on disk now (their last good
	// version stays in force), as "path:line:col: field: message".
	PendingErrors []string `json:"pending_errors,omitempty"`
	// Refused are changes a ConfigChange hook refused, as "path: reason".
	Refused []string `json:"refused,omitempty"`
	// Watcher is how settings files are followed; nil when no watcher runs.
	Watcher    *WatcherStatus  `json:"watcher,omitempty"`
	LastReload *ReloadSummary  `json:"last_reload,omitempty"` // nil before the first reload
	Projects   []ProjectStatus `json:"projects"`
	// ProjectCache summarises the live-project cache (Projects lists its members).
	ProjectCache *ProjectCacheStatus `json:"project_cache,omitempty"`
	Counters     Counters            `json:"counters"`
	// PerEvent counts the events answered, by hook event name.
	PerEvent map[string]uint64 `json:"per_event,omitempty"`
	// Prewarm and Workers describe the process pool; nil when hooks run without one.
	Prewarm *PrewarmStatus `json:"prewarm,omitempty"`
	Workers *WorkerStatus  `json:"workers,omitempty"`
	// Zygote describes the Python zygotes (docs/zygote.md); nil without a pool.
	Zygote *ZygoteStatus `json:"zygote,omitempty"`
	// Audit is the decision log's state; nil when auditing is off.
	Audit *AuditStatus `json:"audit,omitempty"`
	// HTTP is the http forwarder (docs/http-forwarder.md); nil when none is configured.
	HTTP *HTTPForwarderStatus `json:"http,omitempty"`
	// Clients are the clients that sent requests since the daemon started, by name and
	// version (Options.Client), most recent first.
	Clients []ClientStatus `json:"clients,omitempty"`
}

// ClientStatus is one client name and version the daemon has heard from.
type ClientStatus struct {
	Client string `json:"client"` // "hookc", or what another client calls itself
	// Version is what the client said after the '/' in Options.Client; "" when it did not
	// say (a hookc older than the convention sends only "hookc").
	Version   string    `json:"version,omitempty"`
	Requests  uint64    `json:"requests"`
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
	// Skew: a hookc whose version is not the daemon's (or unknown). Binaries of one
	// release belong together: a skew usually means the binaries were upgraded and the
	// daemon was not restarted, or a forwarder runs another installation's hookc.
	Skew bool `json:"skew,omitempty"`
}

// HTTPForwarderStatus says where the http forwarder listens, or why it does not.
type HTTPForwarderStatus struct {
	Listen string `json:"listen,omitempty"` // the address served; "" when Error is set
	Error  string `json:"error,omitempty"`  // why the configured forwarder is not served
}

// Counters are the daemon's totals since it started.
type Counters struct {
	Events        uint64 `json:"events"`         // events answered
	Errors        uint64 `json:"errors"`         // requests refused (unknown event, malformed payload)
	HooksRun      uint64 `json:"hooks_run"`      // hook processes and requests run
	HookErrors    uint64 `json:"hook_errors"`    // hooks that failed to start, crashed or broke their output contract
	Timeouts      uint64 `json:"timeouts"`       // hooks killed at their timeout
	RuleOverrides uint64 `json:"rule_overrides"` // hook decisions a permission rule overrode
	AuditFailures uint64 `json:"audit_failures"` // decisions whose record could not be written
}

// SourceStatus describes one settings file.
type SourceStatus struct {
	Path string `json:"path"`
	// Source is managed, user, project, local, flag, hookd, plugin-registry, or
	// "plugin:<name>@<marketplace>" for a plugin's hooks file (Version is the plugin's).
	Source  string `json:"source"`
	Version string `json:"version,omitempty"`
	// State is loaded, absent, invalid (the file on disk does not parse; KeptRevision is
	// in force), or refused (a ConfigChange hook refused the last change; see Refused).
	State    string    `json:"state"`
	Revision string    `json:"revision,omitempty"` // the version in force
	LoadedAt time.Time `json:"loaded_at"`          // when that version was loaded
	Error    string    `json:"error,omitempty"`
	Warnings []string  `json:"warnings,omitempty"`
	// KeptRevision is the last good version still in force while the file is invalid.
	KeptRevision string   `json:"kept_revision,omitempty"`
	Refused      *Refusal `json:"refused,omitempty"`
	// Watch says how hookd notices edits: watching (fsnotify on Watch.Detail) or polling
	// (and why). Absent when no watcher runs (`hookd run`).
	Watch *WatchInfo `json:"watch,omitempty"`
}

// Refusal is a settings change that a ConfigChange hook refused (spec §4.4): the previous
// version of the file stays in force until the file changes again.
type Refusal struct {
	// Revision is the hash of the refused content; "" when a deletion was refused.
	Revision string    `json:"revision,omitempty"`
	Reason   string    `json:"reason"`
	Project  string    `json:"project,omitempty"` // the project whose ConfigChange hooks refused
	At       time.Time `json:"at"`
}

// WatchInfo says how the watcher follows one settings file.
type WatchInfo struct {
	Mode   string `json:"mode"`             // watching | polling
	Detail string `json:"detail,omitempty"` // the directory watched, or why polling
}

// WatcherStatus summarises the settings watcher.
type WatcherStatus struct {
	// Backend is fsnotify, or polling when fsnotify could not start at all.
	Backend  string   `json:"backend"`
	Debounce string   `json:"debounce"`
	Dirs     []string `json:"dirs"`              // directories watched
	Polling  []string `json:"polling,omitempty"` // files polled, "path (why)"
	// Events counts file-system events about settings files, Overflows the times the
	// kernel queue overflowed (each one reloads everything), Reloads the reloads run.
	Events    uint64 `json:"events"`
	Overflows uint64 `json:"overflows"`
	Reloads   uint64 `json:"reloads"`
	// Pending: a reload is scheduled or running.
	Pending bool `json:"pending"`
	// Descriptors are the file descriptors the watches hold where each costs some
	// (kqueue on macOS: one per watched directory and per entry in it), of at most
	// MaxDescriptors; both 0 where watches cost none (inotify on Linux).
	Descriptors    int `json:"descriptors,omitempty"`
	MaxDescriptors int `json:"max_descriptors,omitempty"`
}

// ReloadSummary is the outcome of one reload: the answer to an OpReload request, logged
// for every reload that changed something, and the last one shown in Status.
type ReloadSummary struct {
	Trigger   string    `json:"trigger"`
	At        time.Time `json:"at"`
	Took      string    `json:"took"`
	FilesRead int       `json:"files_read"`
	// Changed are the files whose version in force changed.
	Changed    []string `json:"changed,omitempty"`
	Swapped    int      `json:"projects_swapped"`
	Generation uint64   `json:"generation"`
	Errors     []string `json:"errors,omitempty"`  // files that are invalid now
	Refused    []string `json:"refused,omitempty"` // changes ConfigChange hooks refused in this reload
}

// ProjectStatus describes one project's snapshot.
type ProjectStatus struct {
	Dir         string    `json:"dir"`
	Revision    string    `json:"revision"`
	Generation  uint64    `json:"generation"`
	SwappedAt   time.Time `json:"swapped_at"`
	Handlers    int       `json:"handlers"`
	NotRunnable []string  `json:"not_runnable,omitempty"`
	// RoutedBy is the managed routing drop-in in effect for this project (`hookd install
	// claude-code --scope managed`; docs/fleet.md): Claude Code runs only managed hooks
	// and forwards every other event to hookd. "" when there is none.
	RoutedBy string `json:"routed_by,omitempty"`
	// NotForwarded are the events the drop-in has no forwarder for (FileChanged,
	// WorktreeCreate, WorktreeRemove for the installer's): under it, user, project and
	// local hooks of these events run nowhere.
	NotForwarded []string `json:"not_forwarded,omitempty"`
	// RunNowhere names each such hook, as "file: hooks.<Event>: message".
	RunNowhere []string `json:"run_nowhere,omitempty"`
	// ClaudeCodeRuns are the hooks (handler ids) Claude Code runs itself — managed hooks,
	// and without a routing drop-in those of user/project/local files no install moved:
	// hookd does not run them for events Claude Code sends (audit: "run by Claude Code:
	// …"), only for other harnesses and raw clients.
	ClaudeCodeRuns []string `json:"claude_code_runs,omitempty"`
	// ManagedSource is the managed channel Claude Code (and hookd) takes policy from, as
	// "mdm (first-wins): <plist>" or "file (first-wins): <files>"; "none" without managed
	// settings. Server-managed settings, which win over both, are invisible to hookd.
	ManagedSource string `json:"managed_source,omitempty"`
	// ManagedSkipped are the managed files present that Claude Code ignores under that
	// choice, one finding each; an "error: " prefix marks hookd's own drop-in (Claude
	// Code then forwards nothing to hookd).
	ManagedSkipped []string `json:"managed_skipped,omitempty"`
}

// PrewarmStatus describes the prewarm pool: hook processes started before their event
// and left waiting on stdin.
type PrewarmStatus struct {
	Hits        uint64 `json:"hits"`         // events served by a prewarmed process
	Misses      uint64 `json:"misses"`       // events of a prewarmed hook that found no process ready
	Fallbacks   uint64 `json:"fallbacks"`    // prewarmed processes that failed when used; the event ran cold
	Spawned     uint64 `json:"spawned"`      // processes prewarmed
	SpawnErrors uint64 `json:"spawn_errors"` // prewarm starts that failed
	Discarded   uint64 `json:"discarded"`    // idle processes killed: their hook or script changed, or their key was dropped
	DiedWaiting uint64 `json:"died_waiting"` // processes that exited before their event
	ReapedIdle  uint64 `json:"reaped_idle"`  // processes killed after the idle timeout
	Evicted     uint64 `json:"evicted"`      // idle processes of a less recently used key killed to make room under Total
	// Background counts processes started at the lowest CPU priority and given a native
	// hook's back once waiting (Linux, sched_autogroup); LateRestores, those an event took
	// while the kernel's rate limit still refused the change back (at most ~110 ms at the
	// low priority). docs/performance.md, "Spares boot in the background".
	Background   uint64 `json:"background,omitempty"`
	LateRestores uint64 `json:"late_restores,omitempty"`
	// Unready counts events that took a background spare before it had waited for its
	// event: it was still starting up, and the rest of its start-up ran on the event's time.
	Unready     uint64 `json:"unready,omitempty"`
	Idle        int    `json:"idle"`     // processes waiting now
	Starting    int    `json:"starting"` // processes being started now
	Keys        int    `json:"keys"`     // distinct hook commands being prewarmed
	PerKey      int    `json:"per_key"`  // limit per key
	Total       int    `json:"total"`    // limit over all keys
	IdleTimeout string `json:"idle_timeout"`
}

// WorkerStatus describes the persistent workers: hooks configured to run once and
// answer many events over a line protocol.
type WorkerStatus struct {
	Workers        int    `json:"workers"`         // running now
	Started        uint64 `json:"started"`         // processes started, restarts included
	Events         uint64 `json:"events"`          // events answered
	Crashes        uint64 `json:"crashes"`         // workers that exited mid-event or while idle
	Timeouts       uint64 `json:"timeouts"`        // events that timed out (the worker is replaced)
	ProtocolErrors uint64 `json:"protocol_errors"` // answers that broke the line protocol
}

// ZygoteStatus describes the Python zygotes: warm interpreters Python hooks are forked
// from (docs/zygote.md).
type ZygoteStatus struct {
	Enabled   bool   `json:"enabled"`
	Forked    uint64 `json:"forked"`    // events answered by a forked hook
	RanCold   uint64 `json:"ran_cold"`  // events of a Python hook that ran cold (zygote starting, or the event not modelled)
	Started   uint64 `json:"started"`   // zygotes started, replacements included
	Died      uint64 `json:"died"`      // zygotes that ended (stopped, idle, crashed)
	Lost      uint64 `json:"lost"`      // forked hooks whose zygote died under them (killed; run again cold)
	Fallbacks uint64 `json:"fallbacks"` // events the zygote declined (nothing ran; they ran cold)
	// RerunCold counts lost forked hooks run again cold in their time left; Refused,
	// scripts refused as FIFOs, devices or sockets; Unresponsive, zygotes stopped (with
	// their children) because they did not answer in time.
	RerunCold    uint64 `json:"rerun_cold"`
	Refused      uint64 `json:"refused"`
	Unresponsive uint64 `json:"unresponsive"`
	Zygotes      int    `json:"zygotes"` // ready now
	LastFallback string `json:"last_fallback,omitempty"`
	// Pre-faulting (docs/zygote.md): pages the spares that took events had populated, and
	// how many such events; the forked children's minor page faults and CPU time over their
	// whole lives (as spares too), and how many children exited.
	Populated   uint64  `json:"populated_pages"`
	Prefaulted  uint64  `json:"prefaulted_events"`
	ChildFaults uint64  `json:"child_minor_faults"`
	Exited      uint64  `json:"children_exited"`
	ChildCPUMs  float64 `json:"child_cpu_ms"`
	// Minor faults children took once their spare was ready (the event's path and exit),
	// over how many children reported.
	EventFaults uint64 `json:"child_event_faults"`
	Reported    uint64 `json:"children_reported"`
}

// AuditStatus describes the decision log.
type AuditStatus struct {
	Path        string     `json:"path"`
	Fsync       string     `json:"fsync"`
	Seq         uint64     `json:"seq"`               // last record's sequence number
	Records     uint64     `json:"records"`           // written by this process
	Batches     uint64     `json:"batches"`           // writes (each fsynced per policy)
	Repairs     uint64     `json:"repairs,omitempty"` // repair records written
	Rotations   uint64     `json:"rotations,omitempty"`
	Failures    uint64     `json:"failures"` // records that could not be written
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
	// Healthy is false while records cannot be written: events that can block are
	// denied (fail closed) until it recovers.
	Healthy bool `json:"healthy"`
	// Checkpoints is how many signed checkpoints this process wrote (docs/fleet.md).
	Checkpoints uint64 `json:"checkpoints,omitempty"`
	// Exporters are the decision log's exporters (OTLP, syslog): docs/fleet.md.
	Exporters []ExporterStatus `json:"exporters,omitempty"`
}

// ExporterStatus is one exporter following the decision log.
type ExporterStatus struct {
	Name string `json:"name"` // "otlp" | "syslog"
	// Cursor is the seq of the last record the destination accepted (persisted).
	Cursor      uint64     `json:"cursor"`
	Exported    uint64     `json:"exported"`           // records accepted since start
	Batches     uint64     `json:"batches"`            // successful exports
	Retries     uint64     `json:"retries"`            // failed exports retried
	Rejected    uint64     `json:"rejected,omitempty"` // records the destination refused for good
	Lost        uint64     `json:"lost,omitempty"`     // records removed by retention before export
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
	Healthy     bool       `json:"healthy"`
}

// ProjectCacheStatus describes the live-project cache: projects whose settings are
// loaded and watched. An evicted project is loaded from disk again by its next event.
type ProjectCacheStatus struct {
	Live        int    `json:"live"`
	Max         int    `json:"max"`          // limits.max_live_projects
	IdleTimeout string `json:"idle_timeout"` // limits.project_idle_timeout_ms
	Evicted     uint64 `json:"evicted"`      // since start
}
