// Package store holds the daemon's settings state: the Store (the last good version
// of every settings file, and one immutable, compiled settings.Snapshot per project,
// built then swapped, never mixed) and the Watcher that follows the files with fsnotify
// (polling what cannot be watched) and reloads the store when they change.
//
// Parsing, merging, validating and compiling settings belong to package configs/settings;
// this package decides when to read which file, keeps what is in force, and reports it for
// `hookd status`. Changes can be offered to a veto (VetoFunc: the daemon runs the
// ConfigChange hooks there) before they apply.
//
// store does not run hooks and does not know about the engine or the socket
// server. The store does not know the watcher either: a Store is built from
// StoreOptions alone, and StartWatcher attaches the watcher to it afterwards (the
// callbacks it needs and its status function).
//
// "spec §N" means §N of docs/spec/claude-code-hooks-spec.md (docs/spec/README.md).
package store
