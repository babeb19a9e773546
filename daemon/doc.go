// Package daemon is the running hookd service: the engine (one event through a fixed
// list of named stages — decode, locate, observe, plan, run, merge, contribute, resolve,
// finish, record; stages.go) and the server (the unix socket: peer credentials, request
// limits, streaming frames, status and reload requests), plus per-session state such as
// async hook results and session-scoped prewarming. Its API is New(Options) → a Daemon
// that serves (Serve), answers one event in-process (Handle: `hookd run`) and reports
// (Status); everything else is internal, and daemon/httpfwd reaches the engine through
// its own small interface.
//
// It wires the packages below it and owns none of their ideas: settings state lives in
// daemon/store, process execution in daemon/runner, the decision log in daemon/audit,
// the settings model in configs/settings (hookd's own configuration in configs), event
// semantics in events, permission rules in rules and the wire contract in protocol.
// daemon does not parse settings JSON itself and does not know how a process is started.
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package daemon
