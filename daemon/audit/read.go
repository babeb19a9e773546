package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Scan calls fn with every record of the given files, in order, and the line it was
// read from (without the newline). A torn last line is skipped; so is a line that is not
// JSON (Verify is the place to report those). fn returning io.EOF stops the scan without
// error.
func Scan(paths []string, fn func(r *Record, line []byte) error) error {
	for _, p := range paths {
		if err := scanFile(p, 0, func(r *Record, line []byte, _ int64) error { return fn(r, line) }); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
	return nil
}

// scanFile reads the complete lines of path from offset on, calling fn with each record,
// its line and the offset after it.
func scanFile(path string, offset int64, fn func(r *Record, line []byte, end int64) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return err
		}
	}
	br := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			offset += int64(len(line))
			line = line[:len(line)-1]
			var r Record
			if json.Unmarshal(line, &r) == nil {
				if ferr := fn(&r, line, offset); ferr != nil {
					return ferr
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// Follow calls fn with each record appended to the log whose current file is path,
// starting at the current end, until ctx is done. It polls (every 200 ms) rather than
// using inotify so that it works on any file system, and follows rotations.
//
// Records with seq <= after are skipped: a caller that printed the log up to some record
// passes its seq, and nothing appended in between is lost or printed twice.
func Follow(ctx context.Context, path string, after uint64, fn func(r *Record, line []byte) error) error {
	var offset int64
	var cur os.FileInfo
	if fi, err := os.Stat(path); err == nil {
		cur = fi
		if after == 0 {
			offset = fi.Size()
		}
	}
	inner := fn
	fn = func(r *Record, line []byte) error {
		if r.Seq <= after {
			return nil
		}
		return inner(r, line)
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		fi, err := os.Stat(path)
		if err == nil {
			if cur != nil && !os.SameFile(fi, cur) {
				// Rotated: finish the old file (now the newest rotated one), then start
				// the new current file from its beginning.
				if rs, rerr := Rotated(path); rerr == nil && len(rs) > 0 {
					last := rs[len(rs)-1].Name
					if err := scanFile(dirJoin(path, last), offset, func(r *Record, line []byte, _ int64) error { return fn(r, line) }); err != nil && !errors.Is(err, os.ErrNotExist) {
						return err
					}
				}
				offset = 0
			}
			cur = fi
			if fi.Size() > offset {
				if err := scanFile(path, offset, func(r *Record, line []byte, end int64) error {
					offset = end
					return fn(r, line)
				}); err != nil {
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func dirJoin(path, name string) string { return filepath.Join(filepath.Dir(path), name) }

// Filter selects records for `hookd audit query`. Zero fields match everything.
type Filter struct {
	Since, Until time.Time
	Event        string // exact, case-insensitive
	Decision     string // final decision, exact
	Tool         string // tool_name, exact, case-insensitive
	Session      string // session_id, exact or prefix
	Hook         string // substring of a matched hook's id or command
	SourceFile   string // substring of a matched hook's settings file or the overriding rule's file
	Overridden   bool   // only decisions a permission rule overrode
	// Via selects decisions a hook failure made: "on_failure" (onFailure: block) or
	// "on_timeout" (hookd's on_timeout: deny), exact.
	Via string
	// Harness selects the agent that sent the event, exact, case-insensitive (records
	// without one are claude-code).
	Harness string
	// Fallback selects decisions answered in-process, without the daemon (Record.Fallback).
	Fallback bool
	Kinds    []string
}

// Match reports whether r passes the filter. Repair records pass only filters that
// name no decision field.
func (f *Filter) Match(r *Record) bool {
	if len(f.Kinds) > 0 {
		ok := false
		for _, k := range f.Kinds {
			ok = ok || r.Kind == k
		}
		if !ok {
			return false
		}
	}
	if !f.Since.IsZero() && r.Time.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !r.Time.Before(f.Until) {
		return false
	}
	if f.Event != "" && !strings.EqualFold(r.Event, f.Event) {
		return false
	}
	if f.Decision != "" && !strings.EqualFold(r.Decision, f.Decision) {
		return false
	}
	if f.Harness != "" {
		h := r.Harness
		if h == "" && r.Kind == KindDecision {
			h = "claude-code" // records written before harnesses were named
		}
		if !strings.EqualFold(h, f.Harness) {
			return false
		}
	}
	if f.Tool != "" && !strings.EqualFold(r.ToolName, f.Tool) {
		return false
	}
	if f.Session != "" && !strings.HasPrefix(r.SessionID, f.Session) {
		return false
	}
	if f.Overridden && r.Override == nil {
		return false
	}
	if f.Via != "" && r.DecisionVia != f.Via {
		return false
	}
	if f.Fallback && r.Fallback == "" {
		return false
	}
	if f.Hook != "" {
		ok := false
		for _, h := range r.Hooks {
			ok = ok || strings.Contains(h.ID, f.Hook) || strings.Contains(h.Command, f.Hook)
		}
		if !ok {
			return false
		}
	}
	if f.SourceFile != "" {
		ok := r.Override != nil && strings.Contains(r.Override.File, f.SourceFile)
		for _, h := range r.Hooks {
			ok = ok || strings.Contains(h.File, f.SourceFile)
		}
		if !ok {
			return false
		}
	}
	return true
}

// Stats summarises decision records for `hookd audit stats`.
type Stats struct {
	Records    int `json:"records"`
	Decisions  int `json:"decisions"`
	Repairs    int `json:"repairs"`
	Overridden int `json:"overridden"`
	// Fallback counts decisions answered in-process, without the daemon.
	Fallback   int            `json:"fallback"`
	First      time.Time      `json:"first"`
	Last       time.Time      `json:"last"`
	ByDecision map[string]int `json:"by_decision"`
	ByEvent    map[string]int `json:"by_event"`
	// ByOutcome counts hook runs by outcome.
	ByOutcome map[string]int `json:"by_outcome"`
	Hooks     []HookStats    `json:"hooks"`

	hooks map[string]*HookStats
	durs  map[string][]float64
}

// HookStats is one hook's figures.
type HookStats struct {
	ID         string         `json:"id"`
	Command    string         `json:"command,omitempty"`
	File       string         `json:"file,omitempty"`
	Count      int            `json:"count"`
	Outcomes   map[string]int `json:"outcomes"`
	ErrorRate  float64        `json:"error_rate"` // (error + timeout) / runs
	P50MS      float64        `json:"p50_ms"`
	P95MS      float64        `json:"p95_ms"`
	MaxMS      float64        `json:"max_ms"`
	runs, errs int
}

// NewStats returns empty stats.
func NewStats() *Stats {
	return &Stats{ByDecision: map[string]int{}, ByEvent: map[string]int{}, ByOutcome: map[string]int{},
		hooks: map[string]*HookStats{}, durs: map[string][]float64{}}
}

// Add counts one record.
func (s *Stats) Add(r *Record) {
	s.Records++
	if r.Kind == KindRepair {
		s.Repairs++
		return
	}
	if r.Kind != KindDecision {
		return
	}
	s.Decisions++
	if s.First.IsZero() || r.Time.Before(s.First) {
		s.First = r.Time
	}
	if r.Time.After(s.Last) {
		s.Last = r.Time
	}
	s.ByDecision[r.Decision]++
	s.ByEvent[r.Event]++
	if r.Override != nil {
		s.Overridden++
	}
	if r.Fallback != "" {
		s.Fallback++
	}
	for _, h := range r.Hooks {
		s.ByOutcome[h.Outcome]++
		hs := s.hooks[h.ID]
		if hs == nil {
			hs = &HookStats{ID: h.ID, Command: h.Command, File: h.File, Outcomes: map[string]int{}}
			s.hooks[h.ID] = hs
		}
		hs.Count++
		hs.Outcomes[h.Outcome]++
		if h.Outcome == "not_run" {
			continue
		}
		hs.runs++
		if h.Outcome == "error" || h.Outcome == "timeout" {
			hs.errs++
		}
		s.durs[h.ID] = append(s.durs[h.ID], h.DurationMS)
	}
}

// Finish computes rates and percentiles and orders hooks by count.
func (s *Stats) Finish() {
	s.Hooks = s.Hooks[:0]
	for id, hs := range s.hooks {
		d := s.durs[id]
		sort.Float64s(d)
		if hs.runs > 0 {
			hs.ErrorRate = float64(hs.errs) / float64(hs.runs)
		}
		hs.P50MS, hs.P95MS = percentile(d, 0.50), percentile(d, 0.95)
		if len(d) > 0 {
			hs.MaxMS = d[len(d)-1]
		}
		s.Hooks = append(s.Hooks, *hs)
	}
	sort.Slice(s.Hooks, func(i, j int) bool {
		if s.Hooks[i].Count != s.Hooks[j].Count {
			return s.Hooks[i].Count > s.Hooks[j].Count
		}
		return s.Hooks[i].ID < s.Hooks[j].ID
	})
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
