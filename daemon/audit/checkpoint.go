package audit

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"

	"github.com/hookd/hookd/configs/atomicfile"
)

// Signed checkpoints.
//
// The chain head file proves nothing to someone who can rewrite the log directory: they
// cut the tail and rewrite the head to match. A checkpoint is the head signed with an
// Ed25519 key the admin configured, in the C2SP signed-note checkpoint format
// (c2sp.org/tlog-checkpoint):
//
//	<origin>
//	<seq>
//	<base64 of the SHA-256 chain hash of record seq>
//	time <RFC 3339>
//
//	— <key name> <signature>
//
// The "tree size" is the number of records (seqs start at 1) and the "root hash" is the
// hash chain's head rather than a Merkle root — hookd's log is a chain, so a checkpoint
// proves a prefix, not inclusion of one record without the ones before it.
//
// The Log writes one as a record of kind "checkpoint" (covering the record before it)
// every Interval while records arrive, before each rotation and at Close, and also
// writes the newest to <base>.checkpoint. Being records, checkpoints travel with the
// OTLP and syslog exports; once one has left the machine, `hookd audit verify --pubkey
// K --checkpoint FILE` detects a cut or rewritten tail even if the head was rewritten
// too. The signature shows the checkpoint came from a holder of the key; it cannot stop
// a holder of the key (hookd's own user, if the key is readable by it) from signing a
// new, shorter history — the off-box copy of the older checkpoint is what catches that.

// CheckpointOptions configure signed checkpoints.
type CheckpointOptions struct {
	Signer note.Signer
	// Origin names this log in the checkpoint's first line (default "hookd/<host><path>").
	Origin string
	// Interval between checkpoints while records arrive (default 1 minute).
	Interval time.Duration
}

// CheckpointPath is where the newest checkpoint of the log at path is kept.
func CheckpointPath(path string) string { return strings.TrimSuffix(path, ".jsonl") + ".checkpoint" }

// GenerateKey makes a signer key and its verifier key (note format; name is the key
// name shown in signatures, e.g. "hookd-fleet-2026").
func GenerateKey(name string) (skey, vkey string, err error) {
	return note.GenerateKey(nil, name)
}

// LoadSigner reads a signer key file (`hookd audit keygen`).
func LoadSigner(file string) (note.Signer, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := note.NewSigner(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a signer key (PRIVATE+KEY+…): %w", file, err)
	}
	return s, nil
}

// Checkpoint is an opened (signature-checked) checkpoint.
type Checkpoint struct {
	Origin string
	Seq    uint64
	Hash   string // hex, as in prev_hash
	Time   time.Time
	Signer string // key name
	Text   string // the signed note
}

func formatCheckpoint(origin string, seq uint64, hash string, t time.Time) (string, error) {
	raw, err := hex.DecodeString(hash)
	if err != nil && seq > 0 {
		return "", fmt.Errorf("chain hash %q: %w", hash, err)
	}
	return fmt.Sprintf("%s\n%d\n%s\ntime %s\n", origin, seq, base64.StdEncoding.EncodeToString(raw), t.UTC().Format(time.RFC3339Nano)), nil
}

// OpenCheckpoint checks msg's signature against the verifier key vkey and parses it.
func OpenCheckpoint(msg []byte, vkey string) (*Checkpoint, error) {
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return nil, fmt.Errorf("verifier key: %w", err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return nil, fmt.Errorf("checkpoint signature: %w", err)
	}
	lines := strings.Split(strings.TrimSuffix(n.Text, "\n"), "\n")
	if len(lines) < 3 {
		return nil, errors.New("checkpoint body has fewer than 3 lines")
	}
	seq, err := strconv.ParseUint(lines[1], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("checkpoint size %q: %w", lines[1], err)
	}
	raw, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil {
		return nil, fmt.Errorf("checkpoint hash %q: %w", lines[2], err)
	}
	c := &Checkpoint{Origin: lines[0], Seq: seq, Hash: hex.EncodeToString(raw), Signer: n.Sigs[0].Name, Text: string(msg)}
	for _, ext := range lines[3:] {
		if v, ok := strings.CutPrefix(ext, "time "); ok {
			c.Time, _ = time.Parse(time.RFC3339Nano, v)
		}
	}
	return c, nil
}

// SplitCheckpoints finds the signed notes in data: a file holding one checkpoint, several
// separated by blank lines, or audit/JSON lines whose "checkpoint" field holds one (a
// collector's or SIEM's export). Anything else is ignored.
func SplitCheckpoints(data []byte) [][]byte {
	var out [][]byte
	// JSON lines first: any string value that looks like a signed note.
	for _, line := range bytes.Split(data, []byte("\n")) {
		for _, s := range notesInJSON(line) {
			out = append(out, []byte(s))
		}
	}
	if len(out) > 0 {
		return out
	}
	// Plain notes: text, blank line, signature lines ("— name sig"), then a blank line or end.
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	var cur []string
	inSigs := false
	flush := func() {
		if len(cur) > 0 && inSigs {
			out = append(out, []byte(strings.Join(cur, "\n")+"\n"))
		}
		cur, inSigs = nil, false
	}
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "— "):
			inSigs = true
			cur = append(cur, l)
		case l == "" && inSigs:
			flush()
		default:
			if inSigs {
				flush()
			}
			cur = append(cur, l)
		}
	}
	flush()
	return out
}

// notesInJSON returns the string values in a JSON line that contain a note signature.
func notesInJSON(line []byte) []string {
	if !bytes.Contains(line, []byte(`\n\u2014 `)) && !bytes.Contains(line, []byte("\\n— ")) {
		return nil
	}
	var v any
	if json.Unmarshal(line, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, "\n— ") {
				out = append(out, x)
			}
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return out
}

// checkpointer is the Log's checkpoint state (owned by the flusher goroutine).
type checkpointer struct {
	o       CheckpointOptions
	last    time.Time
	covered uint64 // seq of the newest checkpoint record written
	writing bool
}

// checkpointDue reports whether the writer should add a checkpoint now.
func (l *Log) checkpointDue(force bool) bool {
	c := l.cp
	if c == nil || c.writing || l.seq == 0 || l.seq == c.covered {
		return false
	}
	return force || time.Since(c.last) >= c.o.Interval
}

// writeCheckpoint appends a checkpoint record covering l.seq (flusher goroutine, file
// lock held) and saves it to <base>.checkpoint.
func (l *Log) writeCheckpoint() {
	c := l.cp
	now := time.Now()
	if err := l.appendCheckpoint(now); err != nil {
		c.last = now // do not retry on every write
		l.log.Error("audit checkpoint not written", zap.Error(err))
	}
}

func (l *Log) appendCheckpoint(now time.Time) error {
	c := l.cp
	body, err := formatCheckpoint(c.o.Origin, l.seq, l.hash, now)
	if err != nil {
		return err
	}
	msg, err := note.Sign(&note.Note{Text: body}, c.o.Signer)
	if err != nil {
		return err
	}
	line, err := encodeBody(&Record{Kind: KindCheckpoint, Time: now, Checkpoint: string(msg)})
	if err != nil {
		return err
	}
	p := &pending{body: line}
	c.writing = true
	l.write([]*pending{p}, func(int, error) {})
	c.writing = false
	if p.err != nil {
		return p.err
	}
	c.last, c.covered = now, p.seq
	if err := atomicfile.Write(CheckpointPath(l.opts.Path), msg, 0o600, l.opts.Fsync != FsyncNever); err != nil {
		l.log.Warn("saving the newest checkpoint", zap.Error(err))
	}
	l.mu.Lock()
	l.st.Checkpoints++
	l.mu.Unlock()
	return nil
}

// CheckCheckpoint checks the log whose current file is path against cp: the record
// cp.Seq must exist and hash to cp.Hash. It returns a Problem when the log ends before
// cp.Seq (records cut from the tail) or the record differs (rewritten history).
func CheckCheckpoint(path string, cp *Checkpoint) (*Problem, error) {
	files, err := Files(path)
	if err != nil {
		return nil, err
	}
	var last uint64
	var found *Problem
	done := errors.New("done")
	err = Scan(files, func(r *Record, line []byte) error {
		last = r.Seq
		if r.Seq == cp.Seq {
			if h := sha256Hex(line); h != cp.Hash {
				found = &Problem{Kind: ProblemCheckpointMismatch, Seq: r.Seq, Message: fmt.Sprintf(
					"record %d does not match the checkpoint signed by %s at %s (hash %s, signed %s): the log was rewritten",
					r.Seq, cp.Signer, cp.Time.Format(time.RFC3339), short(h), short(cp.Hash))}
			}
			return done
		}
		return nil
	})
	if err != nil && !errors.Is(err, done) {
		return nil, err
	}
	if found != nil {
		return found, nil
	}
	if last < cp.Seq {
		return &Problem{Kind: ProblemCheckpointAhead, Seq: last, Message: fmt.Sprintf(
			"the log ends at record %d but a checkpoint signed by %s at %s covers %d records: records were removed from the end",
			last, cp.Signer, cp.Time.Format(time.RFC3339), cp.Seq)}, nil
	}
	return nil, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
