package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/atomicfile"
)

// Entry is one record handed to a Sink: the decoded record and the exact line it was
// read from (without the newline). SHA-256 of Line is the next record's prev_hash, so a
// destination that keeps Line can check the chain off-box.
type Entry struct {
	Record *Record
	Line   []byte
}

// A Sink is a destination for decision records (an OTLP collector, a syslog server).
//
// Export returns nil once the destination has accepted every entry of the batch; any
// error makes the shipper retry the same batch after a backoff, so a sink sees a record
// at least once and possibly more often (each record carries its decision_id and seq
// for de-duplication). A sink that knows an entry can never be accepted (the destination
// rejected it as malformed) reports that with a *PermanentError: the shipper counts and
// logs it and moves on rather than stall every later record behind it.
type Sink interface {
	Export(ctx context.Context, batch []Entry) error
	Close() error
}

// PermanentError is a Sink's answer for entries that retrying cannot deliver.
type PermanentError struct {
	Rejected int // how many entries of the batch were refused
	Err      error
}

func (e *PermanentError) Error() string {
	return fmt.Sprintf("%d records rejected: %v", e.Rejected, e.Err)
}

func (e *PermanentError) Unwrap() error { return e.Err }

// ShipperOptions configure a Shipper.
type ShipperOptions struct {
	// Name names the destination in logs, status and the cursor file ("otlp", "syslog").
	Name string
	// Path is the decision log's current file (Options.Path).
	Path string
	Sink Sink
	// MaxBatch is the most records one Export carries (default 512): the shipper's
	// in-memory queue. Records not yet exported wait in the log files, not in memory,
	// so a destination that is down for a day costs disk the log uses anyway, not RAM.
	MaxBatch int
	// Linger is how long a batch that is not full waits for more records (default 200 ms).
	Linger time.Duration
	// Poll is how often the files are checked when no Notify arrives (default 1 s): other
	// processes (`hookd run`) append to the same log.
	Poll time.Duration
	// MinBackoff and MaxBackoff bound the retry delay after a failed Export (defaults 200 ms
	// and 30 s); it doubles per failure, with jitter.
	MinBackoff, MaxBackoff time.Duration
	// Logger is the operational log.
	Logger *zap.Logger
}

// ShipperStatus is a shipper's state for `hookd status`.
type ShipperStatus struct {
	Name string `json:"name"`
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

// Shipper follows the decision log and hands every record to its Sink, in order.
//
// The log is the source of truth and the queue: the shipper reads the files (it is
// never on the path of an Append, so exporting cannot delay or change an answer) and
// persists, in <base>.<name>.cursor beside the log, the seq of the last record its
// destination accepted. After a crash, a restart or an outage it resumes after that
// seq — at-least-once delivery; a record whose export succeeded but whose cursor write
// did not is sent again with the same decision_id and seq.
type Shipper struct {
	o      ShipperOptions
	log    *zap.Logger
	cursor string
	wake   chan struct{}

	mu sync.Mutex
	st ShipperStatus

	// Owned by Run.
	f       *os.File
	fi      os.FileInfo
	off     int64
	partial []byte
	at      uint64 // seq of the last record read (queued or exported)
	// behindChecked: since the open file was opened, read checked whether it was opened
	// too late (sealedBehind).
	behindChecked bool
}

// NewShipper returns a shipper; Run starts it.
func NewShipper(o ShipperOptions) (*Shipper, error) {
	if o.Sink == nil || o.Path == "" || o.Name == "" {
		return nil, errors.New("audit shipper needs a name, the log path and a sink")
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 512
	}
	if o.Linger <= 0 {
		o.Linger = 200 * time.Millisecond
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 200 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
	s := &Shipper{o: o, log: o.Logger.With(zap.String("exporter", o.Name)), wake: make(chan struct{}, 1),
		cursor: cursorPath(o.Path, o.Name)}
	s.st.Name = o.Name
	return s, nil
}

// cursorPath is where the shipper called name keeps its cursor for the log at path.
func cursorPath(path, name string) string {
	return strings.TrimSuffix(path, ".jsonl") + "." + name + ".cursor"
}

// Notify tells the shipper that records were appended. It never blocks.
func (s *Shipper) Notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Status reports the shipper's counters.
func (s *Shipper) Status() ShipperStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

type cursorFile struct {
	Seq     uint64    `json:"seq"`
	Updated time.Time `json:"updated"`
}

func (s *Shipper) readCursor() (uint64, bool) {
	data, err := os.ReadFile(s.cursor)
	if err != nil {
		return 0, false
	}
	var c cursorFile
	if json.Unmarshal(data, &c) != nil {
		s.log.Error("audit export cursor unreadable: exporting from the start of the log", zap.String("file", s.cursor))
		return 0, true
	}
	return c.Seq, true
}

func (s *Shipper) writeCursor(seq uint64) {
	data, _ := json.Marshal(cursorFile{Seq: seq, Updated: time.Now().UTC()})
	if err := atomicfile.Write(s.cursor, data, 0o600, false); err != nil {
		// The records are exported; a lost cursor only means they are sent again. Not
		// fsynced for the same reason: after a power loss the shipper resends from an
		// older cursor (or, if the file is unreadable, from the start of the log).
		s.log.Warn("writing audit export cursor", zap.Error(err))
	}
	s.mu.Lock()
	s.st.Cursor = seq
	s.mu.Unlock()
}

// Run ships records until ctx is done, then makes one last attempt, bounded by
// drainTimeout, to send what the log holds beyond the cursor, and closes the sink.
func (s *Shipper) Run(ctx context.Context, drainTimeout time.Duration) {
	defer func() {
		if s.f != nil {
			s.f.Close()
		}
		if err := s.o.Sink.Close(); err != nil {
			s.log.Warn("closing audit exporter", zap.Error(err))
		}
	}()
	tick := time.NewTicker(s.o.Poll)
	defer tick.Stop()
	var batch []Entry
	backoff := time.Duration(0)
	lingered := false
	wait := func(d time.Duration) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	}
	for ctx.Err() == nil {
		if s.f == nil {
			if err := s.Start(); err != nil {
				s.noteErr(err)
				s.log.Error("audit export cannot read the decision log", zap.Error(err))
			}
		}
		batch = s.fill(batch)
		if n := len(batch); n > 0 && n < s.o.MaxBatch && !lingered && backoff == 0 {
			// Give a burst a moment to fill the batch.
			lingered = true
			wait(s.o.Linger)
			continue
		}
		if len(batch) > 0 {
			ok, hint := s.export(ctx, batch)
			if ok {
				batch, backoff, lingered = nil, 0, false
				continue // more may be waiting
			}
			backoff = s.next(backoff)
			wait(max(backoff, hint))
			continue
		}
		lingered = false
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-tick.C:
		}
	}
	if drainTimeout <= 0 || s.f == nil {
		return
	}
	dctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	for dctx.Err() == nil {
		if batch = s.fill(batch); len(batch) == 0 {
			return
		}
		if ok, _ := s.export(dctx, batch); !ok {
			return // the rest goes out after the next start
		}
		batch = nil
	}
}

func (s *Shipper) fill(batch []Entry) []Entry {
	if s.f == nil || len(batch) >= s.o.MaxBatch {
		return batch
	}
	batch, err := s.read(batch)
	if err != nil {
		s.noteErr(err)
		s.log.Error("reading decision log for export", zap.Error(err))
	}
	return batch
}

func (s *Shipper) next(d time.Duration) time.Duration {
	if d == 0 {
		d = s.o.MinBackoff
	} else {
		d *= 2
	}
	if d > s.o.MaxBackoff {
		d = s.o.MaxBackoff
	}
	// Jitter (±25 %) keeps a fleet that lost its collector from retrying in step.
	return d - d/4 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// export sends batch once; true when the shipper may move past it, else the least
// wait the destination asked for (Retry-After), if any.
func (s *Shipper) export(ctx context.Context, batch []Entry) (bool, time.Duration) {
	err := s.o.Sink.Export(ctx, batch)
	var perm *PermanentError
	if err != nil && !errors.As(err, &perm) {
		var hint interface{ MinRetryWait() time.Duration }
		wait := time.Duration(0)
		if errors.As(err, &hint) {
			wait = min(hint.MinRetryWait(), s.o.MaxBackoff)
		}
		s.mu.Lock()
		s.st.Retries++
		s.mu.Unlock()
		s.noteErr(err)
		s.log.Warn("audit export failed; retrying", zap.Error(err), zap.Int("records", len(batch)),
			zap.Uint64("first_seq", batch[0].Record.Seq))
		return false, wait
	}
	last := batch[len(batch)-1].Record.Seq
	s.mu.Lock()
	s.st.Batches++
	s.st.Exported += uint64(len(batch))
	if perm != nil {
		s.st.Rejected += uint64(perm.Rejected)
		now := time.Now()
		s.st.LastError, s.st.LastErrorAt = perm.Error(), &now
	} else {
		s.st.Healthy = true
	}
	s.mu.Unlock()
	if perm != nil {
		s.log.Error("audit export: destination rejected records for good", zap.Error(perm),
			zap.Uint64("first_seq", batch[0].Record.Seq), zap.Uint64("last_seq", last))
	}
	s.writeCursor(last)
	return true, 0
}

func (s *Shipper) noteErr(err error) {
	now := time.Now()
	s.mu.Lock()
	s.st.LastError, s.st.LastErrorAt, s.st.Healthy = err.Error(), &now, false
	s.mu.Unlock()
}

// Start positions the reader after the cursor; call it before the log takes records
// (Run calls it when it was not called or failed). Without a cursor (first start) the
// shipper begins at the end of the log as it is now and writes the cursor at once, so
// that everything appended from here on is shipped even across a crash.
func (s *Shipper) Start() error {
	cur, ok := s.readCursor()
	files, err := Files(s.o.Path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if !ok {
		last := uint64(0)
		if len(files) > 0 {
			if _, line, err := lastLineOf(files[len(files)-1]); err == nil && line != nil {
				if h, err := parseLineHead(line); err == nil {
					last = h.Seq
				}
			}
		}
		cur = last
		s.writeCursor(cur)
	}
	s.mu.Lock()
	s.st.Cursor = cur
	s.mu.Unlock()
	s.at = cur
	p, err := s.locate(cur)
	if err != nil {
		return err
	}
	if first, ok := firstSeq(p); ok && cur > 0 && first > cur+1 {
		s.lost(first - cur - 1)
		s.at = first - 1
	}
	return s.open(p)
}

func (s *Shipper) lost(n uint64) {
	s.mu.Lock()
	s.st.Lost += n
	s.mu.Unlock()
	s.log.Error("audit export: records were removed by retention before they were exported", zap.Uint64("records", n))
}

func (s *Shipper) open(path string) error {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // no log yet: the next poll tries again
		}
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if s.f != nil {
		s.f.Close()
	}
	s.f, s.fi, s.off, s.partial, s.behindChecked = f, fi, 0, nil, false
	return nil
}

// read appends to batch the records after s.at, up to MaxBatch, following rotation.
func (s *Shipper) read(batch []Entry) ([]Entry, error) {
	for len(batch) < s.o.MaxBatch {
		n := len(batch)
		var err error
		batch, err = s.readFile(batch)
		var sw *errSwitch
		if errors.As(err, &sw) {
			if err := s.open(sw.path); err != nil {
				return batch, err
			}
			continue
		}
		if err != nil {
			return batch, err
		}
		if len(batch) >= s.o.MaxBatch {
			return batch, nil
		}
		if len(batch) > n {
			continue
		}
		// At the end of the open file: move on if it is no longer the current one.
		next, err := s.nextFile()
		if err != nil || next == "" {
			return batch, err
		}
		// Finish this file first: the writer may have appended before renaming it.
		if more, err := s.readFile(batch); err != nil || len(more) > len(batch) {
			batch = more
			if err != nil || len(batch) >= s.o.MaxBatch {
				return batch, err
			}
		}
		if err := s.open(next); err != nil {
			return batch, err
		}
	}
	return batch, nil
}

// nextFile is the file that follows the open one in the chain, or "" while the open
// one is still the current file.
func (s *Shipper) nextFile() (string, error) {
	fi, err := os.Stat(s.o.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", nil // mid-rotation: the next poll sees the new file
		}
		return "", err
	}
	if s.fi != nil && os.SameFile(fi, s.fi) {
		if s.off == 0 && !s.behindChecked {
			s.behindChecked = true
			return s.sealedBehind()
		}
		return "", nil
	}
	files, err := Files(s.o.Path)
	if err != nil {
		return "", err
	}
	for i, p := range files {
		if pfi, err := os.Stat(p); err == nil && s.fi != nil && os.SameFile(pfi, s.fi) && i+1 < len(files) {
			return files[i+1], nil
		}
	}
	// The open file is gone (retention): find where the next record lives.
	return s.locate(s.at)
}

// sealedBehind is another file holding the record after s.at, "" when none does: the
// open file was opened by name just after the writer rotated away the file meant (it
// renames the current file, then makes a new one), so the records after s.at were sealed
// before this file existed. readFile asks when the open file skips past s.at+1; nextFile
// once per open current file, at its first end, since until a record lands there nothing
// shows the gap (later records go to the file this shipper has open, which it follows
// through any rename).
func (s *Shipper) sealedBehind() (string, error) {
	if s.at == 0 {
		return "", nil
	}
	p, err := s.locate(s.at)
	if err != nil || p == "" {
		return "", err
	}
	if pfi, err := os.Stat(p); err != nil || os.SameFile(pfi, s.fi) {
		return "", nil
	}
	first, line, err := lastLineOf(p)
	if err != nil || first == nil || line == nil {
		return "", nil
	}
	fh, err1 := parseLineHead(first)
	lh, err2 := parseLineHead(line)
	if err1 != nil || err2 != nil || fh.Seq > s.at+1 || lh.Seq <= s.at {
		return "", nil
	}
	return p, nil
}

// locate returns the file that holds the record after seq: the newest file whose first
// record is at most seq+1, else the oldest file with later records, else the current
// file.
func (s *Shipper) locate(seq uint64) (string, error) {
	files, err := Files(s.o.Path)
	if err != nil {
		return "", err
	}
	pick := ""
	for _, p := range files {
		first, ok := firstSeq(p)
		if !ok {
			continue
		}
		if first <= seq+1 {
			pick = p
			continue
		}
		if pick == "" {
			pick = p
		}
		break
	}
	if pick == "" {
		pick = s.o.Path
	}
	return pick, nil
}

func firstSeq(p string) (uint64, bool) {
	first, _, err := lastLineOf(p)
	if err != nil || first == nil {
		return 0, false
	}
	h, err := parseLineHead(first)
	if err != nil {
		return 0, false
	}
	return h.Seq, true
}

// errSwitch tells read to continue in another file.
type errSwitch struct{ path string }

func (e *errSwitch) Error() string { return "continue in " + e.path }

// readFile reads complete lines from the open file.
func (s *Shipper) readFile(batch []Entry) ([]Entry, error) {
	if s.f == nil {
		return batch, nil
	}
	if _, err := s.f.Seek(s.off, io.SeekStart); err != nil {
		return batch, err
	}
	br := bufio.NewReaderSize(s.f, 256<<10)
	for len(batch) < s.o.MaxBatch {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			s.partial = append(s.partial, chunk...)
			s.off += int64(len(chunk))
			continue
		}
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			line := append(s.partial, chunk[:len(chunk)-1]...)
			s.partial = nil
			s.off += int64(len(chunk))
			var r Record
			if json.Unmarshal(line, &r) != nil {
				continue // a line Verify reports; nothing to ship
			}
			if r.Seq <= s.at {
				continue
			}
			if s.at > 0 && r.Seq > s.at+1 {
				// A gap: this file was opened by name just as it was rotated away (the
				// records after s.at are in a rotated file), or retention removed them.
				if p, err := s.sealedBehind(); err == nil && p != "" {
					return batch, &errSwitch{path: p}
				}
				s.lost(r.Seq - s.at - 1)
			}
			s.at = r.Seq
			batch = append(batch, Entry{Record: &r, Line: line})
			continue
		}
		// EOF with a partial line (a write in progress): leave it for next time.
		if len(s.partial) > 0 {
			s.off -= int64(len(s.partial))
			s.partial = nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return batch, err
		}
		return batch, nil
	}
	return batch, nil
}

// exportedSeq reads the cursor of the shipper called name for the log at path (for
// `hookd status` when the daemon is not the one asking).
func exportedSeq(path, name string) (uint64, error) {
	data, err := os.ReadFile(cursorPath(path, name))
	if err != nil {
		return 0, err
	}
	var c cursorFile
	if err := json.Unmarshal(data, &c); err != nil {
		return 0, fmt.Errorf("%s: %w", filepath.Base(cursorPath(path, name)), err)
	}
	return c.Seq, nil
}
