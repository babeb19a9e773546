// Package audit is hookd's decision log: one JSON line per answered event, written
// durably before the answer leaves the daemon, hash-chained so that an edited, deleted,
// reordered or truncated record — or a removed rotated file — is detected by Verify.
//
// # Files
//
// All files live in one directory (default $XDG_STATE_HOME/hookd/audit):
//
//	decisions.jsonl            the current file, appended to
//	decisions-000001.jsonl …   rotated files, oldest first (size-based rotation)
//	decisions.head.json        the chain head: last hash, sequence number, and each
//	                           retained rotated file's last hash; moved (one in-place
//	                           write + fdatasync of its first sector) with every commit
//	                           group before the group's callers return, rewritten
//	                           atomically on open and rotation (see Head)
//	decisions.lock             flock(2): one writer at a time across processes
//	                           (the daemon and any `hookd run` fallback)
//
// # The chain
//
// Every line carries "seq" (1, 2, 3, … across files) and "prev_hash", the hex SHA-256 of
// the previous line's bytes (without its newline); the first record of a new file chains
// to the last record of the previous one. A line's own hash is therefore not stored: it
// is computed by whoever reads the next line, or compared with the head.
//
// # Durability
//
// Append returns once the record is as durable as the fsync policy says: "batch" (the
// default) is a group commit — one goroutine owns the file and, each turn, writes every
// record queued so far with one write(2) and one fsync; records appended while an fsync
// runs share the next one, and each caller returns after the fsync that covers its
// record, so a crash can only lose records whose answer was never sent. The head is
// moved past the group after the data is synced and before the callers return, so every
// acknowledged record is covered by it: cutting it later fails Verify, SIGKILL or not. "always" fsyncs
// every record on its own; "never" only write(2)s (survives a daemon crash, not a power
// loss).
//
// "fsync" means reaching stable storage, through the drive's write cache: on Linux
// fsync(2) for the records and fdatasync(2) for the head; on macOS, where fsync(2)
// stops at the drive's cache, F_BARRIERFSYNC for the records (ordered before the head)
// and F_FULLFSYNC for the head (sync_linux.go, sync_darwin.go; docs/platforms.md).
//
// # Recovery
//
// Open (and any writer that finds the file changed under it) reads the tail of the
// current file. A torn last line — no trailing newline, or not valid JSON — is cut off
// and a "repair" record saying what was dropped (offset, length, SHA-256) is chained
// in, so Verify passes and reports the repair instead of a broken chain. Records that
// the head (or this process) knew of but that are gone from disk produce a repair
// record of reason "records_missing", which Verify reports as a failure.
//
// # Encoding
//
// A record has one encoding: encoding/json with Record's json tags, without HTML
// escaping. The body is encoded by the appending goroutine, outside any lock; the
// writer only appends the chain fields (seq, prev_hash — Record's last fields) and
// hashes the line. The daemon's operational log (zap) is separate and carries the same
// decision_id.
package audit
