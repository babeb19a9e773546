package audit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// Fsync policies (Options.Fsync).
const (
	FsyncAlways = "always"
	FsyncBatch  = "batch"
	FsyncNever  = "never"
)

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("audit log is closed")

// Options configure a Log.
type Options struct {
	// Path is the current file; rotated files, the head and the lock file live beside
	// it, named after it (decisions.jsonl → decisions-000001.jsonl, decisions.head.json).
	Path  string
	Fsync string // FsyncAlways, FsyncBatch (default) or FsyncNever
	// MaxBytes rotates the current file once it reaches this size; 0 never rotates.
	MaxBytes int64
	// Retain is how many rotated files to keep; 0 keeps them all.
	Retain        int
	Mask          []MaskRule
	MaxFieldBytes int
	// DaemonVersion is written into every decision record.
	DaemonVersion string
	// Logger is the operational log (errors, repairs, rotations).
	Logger *zap.Logger
	// Checkpoint, when set, makes the log write signed checkpoints (checkpoint.go).
	Checkpoint *CheckpointOptions
}

// DefaultFile is the current file's name in the audit directory.
const DefaultFile = "decisions.jsonl"

// Log is an open decision log. Append is safe for concurrent use.
type Log struct {
	opts Options
	log  *zap.Logger
	mask *masker
	dir  string
	base string // file name without ".jsonl"

	mu      sync.Mutex
	durable Head       // the head as last written (Head)
	queue   []*pending // records waiting for the flusher
	closed  bool
	st      Status
	kick    chan struct{} // wakes the flusher (capacity 1)
	stop    chan struct{} // closed by Close
	exited  chan struct{} // closed when the flusher has drained the queue and returned
	// shippers are told after each write (AddShipper, before the first Append).
	shippers []*Shipper
	cp       *checkpointer // nil: no checkpoints

	// Owned by the flusher goroutine (before it starts: Open; after it exits: Close).
	lock   *os.File
	headF  *os.File    // the head file as this process last wrote it (writeTip)
	headFI os.FileInfo // and its identity
	f      *os.File
	fi     os.FileInfo
	size   int64
	seq    uint64 // last record's seq
	hash   string // last record's hash
	known  bool   // seq/hash come from this process's own view of the file
	broken error  // the file's state is unknown: re-read it before writing
	head   Head
	dirty  bool // records written since the head was last written
	buf    []byte
	ends   []int
}

type pending struct {
	body []byte        // the record without its chain fields (encodeBody)
	done chan struct{} // closed by the flusher once err is final
	err  error
	seq  uint64
}

// Status is the log's state for `hookd status`.
type Status struct {
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
	Healthy     bool       `json:"healthy"`
	// Checkpoints is how many signed checkpoints this process wrote.
	Checkpoints uint64 `json:"checkpoints,omitempty"`
}

// Open opens (creating if needed) the log at o.Path and recovers its tail: a torn last
// line is cut off and a repair record written. If the directory or file cannot be used,
// Open still returns a usable *Log together with the error: every Append then retries
// and fails until the problem is fixed, so a daemon can start, fail closed, and report
// the error in its status rather than refuse to run. An invalid option returns a nil
// *Log.
func Open(o Options) (*Log, error) {
	switch o.Fsync {
	case "":
		o.Fsync = FsyncBatch
	case FsyncAlways, FsyncBatch, FsyncNever:
	default:
		return nil, fmt.Errorf("audit fsync policy must be %q, %q or %q (found %q)", FsyncAlways, FsyncBatch, FsyncNever, o.Fsync)
	}
	if o.Path == "" {
		return nil, errors.New("audit log path is empty")
	}
	m, err := newMasker(o.Mask, o.MaxFieldBytes)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	l := &Log{opts: o, log: o.Logger, mask: m, dir: filepath.Dir(o.Path),
		base: strings.TrimSuffix(filepath.Base(o.Path), ".jsonl")}
	l.kick, l.stop, l.exited = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	if c := o.Checkpoint; c != nil && c.Signer != nil {
		cp := *c
		if cp.Interval <= 0 {
			cp.Interval = time.Minute
		}
		if cp.Origin == "" {
			host, _ := os.Hostname()
			cp.Origin = "hookd/" + host + o.Path
		}
		l.cp = &checkpointer{o: cp, last: time.Now()}
	}
	l.st.Path, l.st.Fsync = o.Path, o.Fsync
	err = l.withFileLock(func() error { return l.reopen(true) })
	l.mu.Lock()
	l.st.Seq = l.seq
	if err != nil {
		l.broken = err
		l.noteErrLocked(err)
	} else {
		l.st.Healthy = true
	}
	l.mu.Unlock()
	go l.flusher()
	if err != nil {
		return l, fmt.Errorf("opening audit log %s: %w", o.Path, err)
	}
	return l, nil
}

// Path is the current file.
func (l *Log) Path() string { return l.opts.Path }

// Append masks r (in place), writes it as the next record and returns once it is as
// durable as the fsync policy requires. ctx is not consulted: a decision that was made
// is recorded even if its caller has gone.
func (l *Log) Append(_ context.Context, r *Record) error {
	l.maskRecord(r)
	if r.Kind == "" {
		r.Kind = KindDecision
	}
	// The body is encoded now, outside any lock; the writer adds seq and prev_hash.
	body, err := encodeBody(r)
	if err != nil {
		return err
	}
	return l.commit(&pending{body: body})
}

func (l *Log) maskRecord(r *Record) {
	if r.DaemonVersion == "" && r.Kind != KindRepair {
		r.DaemonVersion = l.opts.DaemonVersion
	}
	var labels []string
	if len(r.Input) > 0 {
		var ls []string
		r.Input, ls = l.mask.Input(r.Input)
		labels = append(labels, ls...)
	}
	if len(r.UpdatedInput) > 0 {
		var ls []string
		r.UpdatedInput, ls = l.mask.UpdatedInput(r.UpdatedInput)
		labels = append(labels, ls...)
	}
	for i := range r.Hooks {
		h := &r.Hooks[i]
		if h.Command != "" {
			h.Command, h.CommandSHA256 = l.mask.Command(h.Command)
		}
		h.Error = l.mask.Text(h.Error)
	}
	if l.mask.command != "" && len(r.Hooks) > 0 {
		labels = append(labels, commandPath+":"+l.mask.command)
	}
	r.Reason = l.mask.Text(r.Reason)
	seen := map[string]bool{}
	r.Masked = r.Masked[:0]
	for _, s := range labels {
		if !seen[s] {
			seen[s] = true
			r.Masked = append(r.Masked, s)
		}
	}
	if len(r.Masked) == 0 {
		r.Masked = nil
	}
}

// commit queues p for the flusher and returns once the write (and fsync, per policy)
// covering it is done.
func (l *Log) commit(p *pending) error {
	p.done = make(chan struct{})
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.queue = append(l.queue, p)
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default: // already kicked
	}
	<-p.done
	return p.err
}

// flusher is the goroutine that owns the file: group commit. Each turn it takes every
// record queued so far, writes them with one write(2) and (batch policy) one fsync, and
// releases their callers; records that arrive meanwhile wait for the next turn, which
// starts as soon as this one ends. Owning the file in one goroutine keeps hand-offs
// between writers off the critical path: a caller's only wait is for the fsync that
// covers its record.
func (l *Log) flusher() {
	defer close(l.exited)
	var tick <-chan time.Time
	if l.cp != nil {
		t := time.NewTicker(l.cp.o.Interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		l.mu.Lock()
		batch := l.queue
		l.queue = nil
		l.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-tick:
				// Quiet since the last group: sign what is there.
				_ = l.withFileLock(func() error {
					if l.syncWithDisk() == nil && l.checkpointDue(false) {
						l.writeCheckpoint()
					}
					return nil
				})
				continue
			case <-l.kick:
				continue
			case <-l.stop:
				l.mu.Lock()
				n := len(l.queue)
				l.mu.Unlock()
				if n > 0 {
					continue // drain what was queued before Close
				}
				return
			}
		}
		l.flush(batch)
		l.mu.Lock()
		l.st.Seq = l.seq
		for _, b := range batch {
			if b.err != nil {
				l.st.Failures++
				l.noteErrLocked(b.err)
			} else {
				l.st.Records++
			}
		}
		l.st.Healthy = l.broken == nil && batch[len(batch)-1].err == nil
		ships := l.shippers
		l.mu.Unlock()
		for _, b := range batch {
			close(b.done)
		}
		for _, s := range ships {
			s.Notify() // never blocks
		}
	}
}

func (l *Log) noteErrLocked(err error) {
	now := time.Now()
	l.st.LastError, l.st.LastErrorAt, l.st.Healthy = err.Error(), &now, false
}

// Status reports the log's counters and last error.
func (l *Log) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st
}

// Exporters reports the shippers following this log (OTLP, syslog).
func (l *Log) Exporters() []ShipperStatus {
	l.mu.Lock()
	ships := l.shippers
	l.mu.Unlock()
	var out []ShipperStatus
	for _, s := range ships {
		out = append(out, s.Status())
	}
	return out
}

// AddShipper makes the writer wake s after each write and lists s in Status. Call it
// before records are appended; s runs on its own (Shipper.Run).
func (l *Log) AddShipper(s *Shipper) {
	l.mu.Lock()
	l.shippers = append(l.shippers, s)
	l.mu.Unlock()
}

// flush writes batch (flusher goroutine).
func (l *Log) flush(batch []*pending) {
	fail := func(from int, err error) {
		for _, p := range batch[from:] {
			p.err = err
		}
	}
	err := l.withFileLock(func() error {
		if err := l.syncWithDisk(); err != nil {
			fail(0, err)
			return nil
		}
		l.write(batch, fail)
		return nil
	})
	if err != nil {
		fail(0, err)
	}
}

// write encodes batch on top of the chain and writes it per the fsync policy.
func (l *Log) write(batch []*pending, fail func(int, error)) {
	l.buf, l.ends = l.buf[:0], l.ends[:0]
	seq, hash := l.seq, l.hash
	hashes := make([]string, len(batch))
	for i, p := range batch {
		start := len(l.buf)
		l.buf = appendChained(l.buf, p.body, seq+1, hash)
		sum := sha256.Sum256(l.buf[start : len(l.buf)-1])
		seq, hash = seq+1, hex.EncodeToString(sum[:])
		p.seq, hashes[i] = seq, hash
		l.ends = append(l.ends, len(l.buf))
	}
	if len(l.ends) == 0 {
		return
	}
	// ok is how many of the encoded lines are durable.
	before, beforeSeq, beforeHash, beforeDirty := l.size, l.seq, l.hash, l.dirty
	ok, err := l.writeLines()
	// Advance the chain over the lines that made it, in batch order (skipping any
	// that failed to encode, which have no line).
	n := 0
	for i, p := range batch {
		if p.err != nil && p.seq == 0 {
			continue
		}
		if n < ok {
			l.seq, l.hash = p.seq, hashes[i]
			l.known, l.dirty = true, true
		} else if p.err == nil {
			p.err = err
		}
		n++
	}
	if ok > 0 {
		l.size += int64(l.ends[ok-1])
		// The head moves with every commit group, before any caller is released: a
		// record whose answer was sent is always covered by the head, so cutting it
		// (even after a SIGKILL) is detected by Verify. If the head cannot be written
		// the group is undone — records without a head covering them would be a
		// decision log that disagrees with the answers (which fail closed).
		if herr := l.writeTip(); herr != nil {
			if terr := l.f.Truncate(before); terr != nil {
				l.broken = fmt.Errorf("audit head write failed (%v) and cutting the records back failed: %w", herr, terr)
			} else if l.opts.Fsync != FsyncNever {
				if serr := l.f.Sync(); serr != nil {
					l.broken = fmt.Errorf("audit head write failed (%v) and syncing the cut failed: %w", herr, serr)
				}
			}
			l.size, l.seq, l.hash, l.dirty = before, beforeSeq, beforeHash, beforeDirty
			err = herr
			for _, p := range batch {
				if p.seq != 0 {
					p.err = herr
				}
			}
		}
	}
	if err != nil {
		l.log.Error("audit records not written", zap.Error(err), zap.Int("records", len(l.ends)-ok))
		return
	}
	rotating := l.opts.MaxBytes > 0 && l.size >= l.opts.MaxBytes
	if l.checkpointDue(rotating) {
		// Before a rotation the checkpoint is the sealed file's last record.
		l.writeCheckpoint()
	}
	if l.opts.MaxBytes > 0 && l.size >= l.opts.MaxBytes {
		if err := l.rotate(); err != nil {
			// The records are written; the next write retries the rotation.
			l.log.Error("audit log rotation failed", zap.Error(err))
			l.mu.Lock()
			l.noteErrLocked(fmt.Errorf("rotating: %w", err))
			l.mu.Unlock()
		}
	}
}

// writeLines writes l.buf (lines ending at l.ends) and syncs per policy. It returns how
// many lines are durable; on error the file is cut back to the last durable line.
func (l *Log) writeLines() (int, error) {
	var err error
	ok := 0
	switch l.opts.Fsync {
	case FsyncAlways:
		start := 0
		for _, end := range l.ends {
			if _, err = l.f.Write(l.buf[start:end]); err == nil {
				err = syncRecords(l.f)
			}
			if err != nil {
				break
			}
			ok++
			start = end
		}
	default:
		if _, err = l.f.Write(l.buf); err == nil && l.opts.Fsync == FsyncBatch {
			err = syncRecords(l.f)
		}
		if err == nil {
			ok = len(l.ends)
		}
	}
	l.mu.Lock()
	l.st.Batches++
	l.mu.Unlock()
	if err == nil {
		return ok, nil
	}
	good := l.size
	if ok > 0 {
		good += int64(l.ends[ok-1])
	}
	if terr := l.f.Truncate(good); terr != nil {
		// Part of a failed write may remain; re-read the tail before the next write.
		l.broken = fmt.Errorf("audit write failed (%v) and cutting it back failed: %w", err, terr)
	}
	return ok, fmt.Errorf("writing audit log %s: %w", l.opts.Path, err)
}

// withFileLock runs fn holding the cross-process lock (flock on <base>.lock).
func (l *Log) withFileLock(fn func() error) error {
	if l.lock == nil {
		if err := os.MkdirAll(l.dir, 0o700); err != nil {
			return fmt.Errorf("creating audit directory: %w", err)
		}
		f, err := os.OpenFile(filepath.Join(l.dir, l.base+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("opening audit lock: %w", err)
		}
		l.lock = f
	}
	for {
		err := syscall.Flock(int(l.lock.Fd()), syscall.LOCK_EX)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("locking audit log: %w", err)
		}
	}
	defer syscall.Flock(int(l.lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
	return fn()
}

// syncWithDisk makes sure l.f is the current file and l.seq/l.hash its last record:
// another process (`hookd run`) may have appended or rotated since this one last wrote.
func (l *Log) syncWithDisk() error {
	if l.f != nil && l.broken == nil {
		fi, err := os.Stat(l.opts.Path)
		if err == nil && os.SameFile(fi, l.fi) && fi.Size() == l.size {
			return nil
		}
	}
	return l.reopen(false)
}

// Close waits for queued records, writes the head and closes the files. Appends after
// Close fail.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.exited // the file is ours again
	var err error
	if l.cp != nil && !l.cp.writing {
		_ = l.withFileLock(func() error {
			if l.syncWithDisk() == nil && l.checkpointDue(true) {
				l.writeCheckpoint()
			}
			return nil
		})
	}
	if l.dirty {
		err = l.withFileLock(func() error {
			if err := l.syncWithDisk(); err != nil {
				return err
			}
			return l.writeHead()
		})
	}
	if l.f != nil {
		if cerr := l.f.Close(); err == nil {
			err = cerr
		}
		l.f = nil
	}
	l.closeHeadFile()
	if l.lock != nil {
		l.lock.Close()
		l.lock = nil
	}
	return err
}

// chainTail is how a record encoded with zero chain fields ends. Seq and PrevHash are
// Record's last fields, so the writer can fill them in without encoding again.
const chainTail = `,"seq":0,"prev_hash":""}` + "\n"

// encodeBody encodes r — encoding/json with r's json tags, the record's one encoding —
// for the writer: v set, time in UTC, no HTML escaping (the log is read by people and
// tools, not browsers), json.RawMessage fields validated and compacted, and the chain
// fields cut off (appendChained adds them).
func encodeBody(r *Record) ([]byte, error) {
	c := *r
	c.V, c.Seq, c.PrevHash = SchemaVersion, 0, ""
	if c.Time.IsZero() {
		c.Time = time.Now()
	}
	c.Time = c.Time.UTC()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("encoding audit record: %w", err)
	}
	body, ok := bytes.CutSuffix(b.Bytes(), []byte(chainTail))
	if !ok {
		return nil, errors.New("encoding audit record: the chain fields are not last")
	}
	return body, nil
}

// appendChained appends the line of a record whose body encodeBody made, with its
// chain fields, to buf.
func appendChained(buf, body []byte, seq uint64, prevHash string) []byte {
	buf = append(buf, body...)
	buf = append(buf, `,"seq":`...)
	buf = strconv.AppendUint(buf, seq, 10)
	buf = append(buf, `,"prev_hash":"`...)
	buf = append(buf, prevHash...)
	return append(buf, "\"}\n"...)
}
