// Package configs is hookd's own configuration: DaemonConfig (mode, per-hook overrides,
// limits, audit and exporters, extra settings files, harness options), loaded strictly
// from hookd's own file on top of the embedded default (default.json), with errors that
// name the field, line and column. It also ships the examples (configs/examples: systemd
// unit, launchd plist, sample settings, worker scripts).
//
// hookd's own configuration never lives in a harness's settings file: Claude Code
// ignores a whole settings file that has a top-level key it does not know (spec §12).
//
// Below it:
//
//   - configs/settings is the model of Claude Code settings (sources, strict decoding,
//     merge, validation, the compiled Snapshot the daemon matches events against);
//   - configs/install edits harness settings files for `hookd install`;
//   - configs/atomicfile writes files atomically (a leaf: standard library only);
//   - configs/internal/jsontree is the ordered JSON tree with byte offsets both strict
//     decoders share.
package configs
