package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/hookd/hookd/configs/atomicfile"
)

// Head is the chain head file: where the chain ends, and the last record of every
// retained rotated file. It is rewritten atomically (temp file, fsync, rename, fsync of
// the directory) after every commit group — before any record of the group is
// acknowledged — and on open when something changed, on rotation and on close. So
// every record whose Append returned is covered by the head: cutting the tail, or
// deleting the newest file, is detected by Verify even after a SIGKILL (with fsync
// "never", only after a crash of hookd, not a power loss). It never runs ahead of what
// was written.
//
// The head is the anchor for anything built on the chain (signed checkpoints, remote
// copies): Log.Head returns the last durable one. It does not protect against someone
// who can rewrite the whole directory — head included — consistently; see
// docs/reliability.md.
type Head struct {
	V    int    `json:"v"`
	File string `json:"file"` // the current file's name
	Seq  uint64 `json:"seq"`  // the last record's seq when the head was written
	Hash string `json:"hash"` // and its hash
	// Count is the number of records in the current file at that time.
	Count  uint64   `json:"count"`
	Sealed []Sealed `json:"sealed"`
	// Pruned is the newest rotated file removed by retention: the oldest retained
	// record chains to its last hash.
	Pruned  *Sealed   `json:"pruned,omitempty"`
	Updated time.Time `json:"updated"`
}

// Sealed is one rotated file's place in the chain.
type Sealed struct {
	File     string `json:"file"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	LastHash string `json:"last_hash"`
}

// HeadPath returns the head file for the current file path.
func HeadPath(path string) string { return strings.TrimSuffix(path, ".jsonl") + ".head.json" }

// readHead reads a head file; a missing file yields (nil, nil).
func readHead(path string) (*Head, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var h Head
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("audit head %s: %w", path, err)
	}
	return &h, nil
}

// RotatedFile is a rotated file found on disk.
type RotatedFile struct {
	Name string
	No   int
}

// Rotated lists the rotated files of the log whose current file is path, oldest first.
func Rotated(path string) ([]RotatedFile, error) {
	dir, base := filepath.Dir(path), strings.TrimSuffix(filepath.Base(path), ".jsonl")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []RotatedFile
	for _, e := range ents {
		if no, ok := rotatedNo(base, e.Name()); ok {
			out = append(out, RotatedFile{Name: e.Name(), No: no})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].No < out[j].No })
	return out, nil
}

func rotatedNo(base, name string) (int, bool) {
	s, ok := strings.CutPrefix(name, base+"-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".jsonl")
	if !ok || s == "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// Files returns the log's files in chain order: rotated files oldest first, then the
// current file (if it exists).
func Files(path string) ([]string, error) {
	rs, err := Rotated(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rs {
		out = append(out, filepath.Join(filepath.Dir(path), r.Name))
	}
	if _, err := os.Stat(path); err == nil {
		out = append(out, path)
	}
	return out, nil
}

// tail is what the end of a file holds.
type tail struct {
	last []byte // the last complete line, without its newline; nil if none
	good int64  // bytes up to and including the last good line's newline
	torn []byte // what follows: a partial line, or a last line that is not JSON
}

// readTail reads the end of f (size bytes). A last line without its newline is torn; so
// is a newline-terminated last line that is not valid JSON (a write that was cut and
// then followed by a later block, as a power loss can leave).
func readTail(f *os.File, size int64) (tail, error) {
	var t tail
	if size == 0 {
		return t, nil
	}
	w := int64(256 << 10)
	var data []byte
	var start int64
	for {
		start = max(0, size-w)
		data = make([]byte, size-start)
		if _, err := f.ReadAt(data, start); err != nil && !errors.Is(err, io.EOF) {
			return t, err
		}
		if start == 0 || bytes.Count(data, []byte{'\n'}) >= 3 {
			break
		}
		w *= 2
	}
	tornFrom := bytes.LastIndexByte(data, '\n') + 1
	lineEnd := tornFrom - 1
	for attempt := 0; lineEnd >= 0; attempt++ {
		prev := bytes.LastIndexByte(data[:lineEnd], '\n')
		line := data[prev+1 : lineEnd]
		if attempt == 0 && !json.Valid(line) {
			tornFrom, lineEnd = prev+1, prev
			continue
		}
		t.last = append([]byte(nil), line...)
		break
	}
	t.good = start + int64(tornFrom)
	if tornFrom < len(data) {
		t.torn = append([]byte(nil), data[tornFrom:]...)
	}
	return t, nil
}

// lastLineOf returns the first and last complete lines of a (rotated) file.
func lastLineOf(path string) (first, last []byte, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	t, err := readTail(f, fi.Size())
	if err != nil {
		return nil, nil, err
	}
	buf := make([]byte, min(fi.Size(), 1<<20))
	n, _ := f.ReadAt(buf, 0)
	if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
		first = buf[:i]
	}
	return first, t.last, nil
}

// lineHead is the part of a line the chain needs.
type lineHead struct {
	V          int     `json:"v"`
	Kind       string  `json:"kind"`
	Seq        uint64  `json:"seq"`
	PrevHash   string  `json:"prev_hash"`
	DecisionID string  `json:"decision_id"`
	Repair     *Repair `json:"repair"`
}

func parseLineHead(line []byte) (lineHead, error) {
	var h lineHead
	err := json.Unmarshal(line, &h)
	return h, err
}

// reopen (re)opens the current file and brings seq/hash in line with what is on disk,
// cutting a torn tail and recording repairs. The caller holds the file lock and owns
// the file. first is set by Open.
func (l *Log) reopen(first bool) error {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	path := l.opts.Path
	head, herr := readHead(HeadPath(path))
	if herr != nil {
		l.log.Error("audit head unreadable; rebuilding it from the files", zap.Error(herr))
	}
	headChanged := head == nil
	if head == nil {
		head = &Head{}
	}
	_, serr := os.Stat(path)
	created := errors.Is(serr, fs.ErrNotExist)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening audit log: %w", err)
	}
	if created {
		_ = atomicfile.SyncDir(l.dir)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	t, err := readTail(f, fi.Size())
	if err != nil {
		f.Close()
		return fmt.Errorf("reading audit log tail: %w", err)
	}
	var repairs []Repair
	size := fi.Size()
	if len(t.torn) > 0 {
		if err := f.Truncate(t.good); err != nil {
			f.Close()
			return fmt.Errorf("cutting torn audit record: %w", err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		size = t.good
		repairs = append(repairs, Repair{Reason: RepairTornTail, File: filepath.Base(path), Offset: t.good,
			DroppedBytes: len(t.torn), DroppedSHA256: sha256Hex(t.torn),
			Detail: "a partial last record (crash or full disk during a write) was cut off"})
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return err
	}
	changed := l.reconcile(head)
	headChanged = headChanged || changed
	var seq uint64
	var hash string
	last := t.last
	if last == nil {
		// An empty current file continues the newest rotated file.
		if n := len(head.Sealed); n > 0 {
			if _, lst, err := lastLineOf(filepath.Join(l.dir, head.Sealed[n-1].File)); err == nil {
				last = lst
			} else if !errors.Is(err, fs.ErrNotExist) {
				f.Close()
				return err
			}
		}
	}
	if last != nil {
		h, err := parseLineHead(last)
		if err != nil {
			l.log.Error("last audit record is not valid JSON; continuing the chain from its bytes", zap.Error(err))
		}
		seq, hash = h.Seq, sha256Hex(last)
	}
	expSeq, expHash := head.Seq, head.Hash
	if l.known && l.seq > expSeq {
		expSeq, expHash = l.seq, l.hash
	}
	if herr == nil && head.File == "" && seq > 0 && !l.known {
		// Records but no head: the head was removed (every writer writes one with its
		// first record). Whatever was cut from the end meanwhile cannot be known.
		repairs = append(repairs, Repair{Reason: RepairHeadMissing, File: filepath.Base(HeadPath(path)),
			FoundSeq: seq, Detail: fmt.Sprintf("the log holds records up to %d but its head file is missing: records may have been removed from the end", seq)})
	}
	if expSeq > seq || (expSeq == seq && expSeq > 0 && expHash != hash) {
		repairs = append(repairs, Repair{Reason: RepairRecordsMissing, File: filepath.Base(path),
			ExpectedSeq: expSeq, ExpectedHash: expHash, FoundSeq: seq,
			Detail: fmt.Sprintf("the log should end at record %d but ends at %d: records were removed or replaced", expSeq, seq)})
	}
	l.f, l.fi, l.size, l.seq, l.hash, l.head = f, fi, size, seq, hash, *head
	l.known, l.broken = true, nil
	for i := range repairs {
		r := &repairs[i]
		l.log.Warn("audit log repaired", zap.String("reason", r.Reason), zap.String("file", r.File),
			zap.Int64("offset", r.Offset), zap.Int("dropped_bytes", r.DroppedBytes), zap.Uint64("expected_seq", r.ExpectedSeq),
			zap.Uint64("found_seq", r.FoundSeq))
		if err := l.writeRepair(r); err != nil {
			l.broken = err
			return err
		}
	}
	if len(repairs) > 0 || (first && headChanged) {
		if err := l.writeHead(); err != nil {
			return err
		}
	}
	return nil
}

// writeRepair chains a repair record in, synced whatever the policy.
func (l *Log) writeRepair(r *Repair) error {
	body, err := encodeBody(&Record{Kind: KindRepair, Repair: r})
	if err != nil {
		return err
	}
	p := &pending{body: body}
	l.write([]*pending{p}, func(int, error) {})
	if p.err == nil && l.opts.Fsync == FsyncNever {
		p.err = l.f.Sync()
	}
	if p.err == nil {
		l.mu.Lock()
		l.st.Repairs++
		l.mu.Unlock()
	}
	return p.err
}

// reconcile adds rotated files found on disk to the head's sealed list (a crash
// between a rotation's rename and its head write leaves one out). Files the head lists
// but the disk lacks stay listed, so that Verify reports them. It reports whether the
// head changed.
func (l *Log) reconcile(h *Head) bool {
	rs, err := Rotated(l.opts.Path)
	if err != nil {
		return false
	}
	known := map[string]bool{}
	for _, s := range h.Sealed {
		known[s.File] = true
	}
	if h.Pruned != nil {
		known[h.Pruned.File] = true
	}
	changed := false
	for _, r := range rs {
		if known[r.Name] {
			continue
		}
		first, last, err := lastLineOf(filepath.Join(l.dir, r.Name))
		if err != nil || last == nil {
			continue
		}
		fh, _ := parseLineHead(first)
		lh, _ := parseLineHead(last)
		h.Sealed = append(h.Sealed, Sealed{File: r.Name, FirstSeq: fh.Seq, LastSeq: lh.Seq, LastHash: sha256Hex(last)})
		changed = true
	}
	if changed {
		sort.Slice(h.Sealed, func(i, j int) bool {
			a, _ := rotatedNo(l.base, h.Sealed[i].File)
			b, _ := rotatedNo(l.base, h.Sealed[j].File)
			return a < b
		})
	}
	for _, s := range h.Sealed {
		if _, err := os.Stat(filepath.Join(l.dir, s.File)); errors.Is(err, fs.ErrNotExist) {
			l.log.Error("rotated audit file listed in the head is missing", zap.String("file", s.File),
				zap.Uint64("first_seq", s.FirstSeq), zap.Uint64("last_seq", s.LastSeq))
		}
	}
	return changed
}

// prevSeq is the seq of the record before the current file's first.
func (h *Head) prevSeq() uint64 {
	if n := len(h.Sealed); n > 0 {
		return h.Sealed[n-1].LastSeq
	}
	if h.Pruned != nil {
		return h.Pruned.LastSeq
	}
	return 0
}

// headPrefix is the length of the head file's first part: every field that changes with
// a commit group (seq, hash, count, updated), padded with spaces (JSON whitespace). The
// rest — the sealed files — changes only on open and rotation. So the per-group update
// is one pwrite of the first headPrefix bytes (within the first sector, which storage
// writes atomically) and one fdatasync, while open and rotation rewrite the whole file
// atomically (temp file, rename).
const headPrefix = 448

// writeHead rewrites the whole head file atomically and keeps it open for writeTip.
func (l *Log) writeHead() error {
	h := l.stamp()
	prefix, rest, err := encodeHead(h)
	if err != nil {
		return err
	}
	path := HeadPath(l.opts.Path)
	if err := atomicfile.Write(path, append(prefix, rest...), 0o600, l.opts.Fsync != FsyncNever); err != nil {
		return fmt.Errorf("writing audit head: %w", err)
	}
	l.closeHeadFile()
	if len(prefix) == headPrefix {
		if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
			if fi, err := f.Stat(); err == nil {
				l.headF, l.headFI = f, fi
			} else {
				f.Close()
			}
		}
	}
	l.published(h)
	return nil
}

// writeTip moves the head to l.seq/l.hash with one in-place write of its first part,
// falling back to writeHead when the file on disk is not the one this process wrote
// last (another writer replaced it) or was never opened.
func (l *Log) writeTip() error {
	path := HeadPath(l.opts.Path)
	if l.headF == nil {
		return l.writeHead()
	}
	if fi, err := os.Stat(path); err != nil || !os.SameFile(fi, l.headFI) {
		return l.writeHead()
	}
	h := l.stamp()
	prefix, _, err := encodeHead(h)
	if err != nil {
		return err
	}
	if len(prefix) != headPrefix {
		return l.writeHead()
	}
	if _, err := l.headF.WriteAt(prefix, 0); err != nil {
		l.closeHeadFile()
		return fmt.Errorf("writing audit head: %w", err)
	}
	if l.opts.Fsync != FsyncNever {
		if err := syncHead(l.headF); err != nil {
			l.closeHeadFile()
			return fmt.Errorf("syncing audit head: %w", err)
		}
	}
	l.published(h)
	return nil
}

func (l *Log) closeHeadFile() {
	if l.headF != nil {
		l.headF.Close()
		l.headF, l.headFI = nil, nil
	}
}

// stamp is l.head brought up to the chain's current end.
func (l *Log) stamp() Head {
	h := l.head
	h.V, h.File, h.Seq, h.Hash, h.Updated = 1, filepath.Base(l.opts.Path), l.seq, l.hash, time.Now().UTC()
	h.Count = 0
	if p := h.prevSeq(); l.seq >= p {
		h.Count = l.seq - p
	}
	if h.Sealed == nil {
		h.Sealed = []Sealed{}
	}
	return h
}

// published records h as written.
func (l *Log) published(h Head) {
	l.head, l.dirty = h, false
	h.Sealed = append([]Sealed(nil), h.Sealed...)
	l.mu.Lock()
	l.durable = h
	l.mu.Unlock()
}

// encodeHead lays the head out as headPrefix bytes of per-group fields (padded with
// spaces; longer only if the file name is very long, which disables in-place updates)
// followed by the rest of the object and a newline.
func encodeHead(h Head) (prefix, rest []byte, err error) {
	type tip struct {
		V       int       `json:"v"`
		File    string    `json:"file"`
		Seq     uint64    `json:"seq"`
		Hash    string    `json:"hash"`
		Count   uint64    `json:"count"`
		Updated time.Time `json:"updated"`
	}
	type tail struct {
		Sealed []Sealed `json:"sealed"`
		Pruned *Sealed  `json:"pruned,omitempty"`
	}
	a, err := json.Marshal(tip{h.V, h.File, h.Seq, h.Hash, h.Count, h.Updated})
	if err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(tail{h.Sealed, h.Pruned})
	if err != nil {
		return nil, nil, err
	}
	prefix = a[:len(a)-1] // without "}"
	if pad := headPrefix - len(prefix); pad > 0 {
		prefix = append(prefix, bytes.Repeat([]byte{' '}, pad)...)
	}
	rest = append([]byte{','}, b[1:]...) // the tail object's fields, continuing the first
	return prefix, append(rest, '\n'), nil
}

// Head returns the head as last durably written (zero before the first write). Every
// record whose Append has returned is covered by it: Seq/Hash are at or past that
// record. It is the value to sign or ship elsewhere as a checkpoint.
func (l *Log) Head() Head {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.durable
	h.Sealed = append([]Sealed(nil), h.Sealed...)
	return h
}

// nextFileNo is the number the current file gets when rotated.
func (l *Log) nextFileNo() int {
	n := 0
	for _, s := range l.head.Sealed {
		if no, ok := rotatedNo(l.base, s.File); ok && no > n {
			n = no
		}
	}
	if l.head.Pruned != nil {
		if no, ok := rotatedNo(l.base, l.head.Pruned.File); ok && no > n {
			n = no
		}
	}
	if rs, err := Rotated(l.opts.Path); err == nil && len(rs) > 0 && rs[len(rs)-1].No > n {
		n = rs[len(rs)-1].No
	}
	return n + 1
}

// rotate seals the current file under the next number, starts a new one, applies
// retention and writes the head. The caller holds the file lock and owns the file.
func (l *Log) rotate() error {
	if l.opts.Fsync == FsyncNever {
		if err := l.f.Sync(); err != nil {
			return err
		}
	}
	name := fmt.Sprintf("%s-%06d.jsonl", l.base, l.nextFileNo())
	first := l.head.prevSeq() + 1
	if err := os.Rename(l.opts.Path, filepath.Join(l.dir, name)); err != nil {
		return err
	}
	l.f.Close()
	l.f = nil
	l.head.Sealed = append(l.head.Sealed, Sealed{File: name, FirstSeq: first, LastSeq: l.seq, LastHash: l.hash})
	f, err := os.OpenFile(l.opts.Path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		l.broken = err
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		l.broken = err
		return err
	}
	l.f, l.fi, l.size = f, fi, 0
	_ = atomicfile.SyncDir(l.dir)
	if r := l.opts.Retain; r > 0 {
		for len(l.head.Sealed) > r {
			s := l.head.Sealed[0]
			if err := os.Remove(filepath.Join(l.dir, s.File)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				l.log.Error("removing old audit file", zap.String("file", s.File), zap.Error(err))
				break
			}
			l.head.Pruned = &s
			l.head.Sealed = l.head.Sealed[1:]
		}
	}
	l.mu.Lock()
	l.st.Rotations++
	l.mu.Unlock()
	l.log.Info("audit log rotated", zap.String("sealed", name), zap.Uint64("last_seq", l.seq))
	return l.writeHead()
}
