package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Problem kinds Verify reports.
const (
	ProblemBrokenLink     = "broken_link"     // prev_hash or seq does not follow the previous record
	ProblemBadLine        = "bad_line"        // a line is not a JSON record
	ProblemTruncated      = "truncated"       // a file ends mid-line, or before the head says it should
	ProblemMissingFile    = "missing_file"    // a rotated file the head lists is gone
	ProblemHeadMismatch   = "head_mismatch"   // a record differs from what the head recorded
	ProblemRecordsMissing = "records_missing" // a repair record admits records were lost
	// ProblemCheckpointAhead: a signed checkpoint covers records the log no longer has.
	ProblemCheckpointAhead = "checkpoint_ahead"
	// ProblemCheckpointMismatch: a record differs from what a signed checkpoint covers.
	ProblemCheckpointMismatch = "checkpoint_mismatch"
	ProblemHeadMissing        = "head_missing" // the log has records but no head file, or a repair says it had none
)

// Problem is one thing Verify found wrong.
type Problem struct {
	Kind    string `json:"kind"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Seq     uint64 `json:"seq,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if loc == "" {
		return p.Message
	}
	return loc + ": " + p.Message
}

// FoundRepair is a repair record met while verifying.
type FoundRepair struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Seq    uint64 `json:"seq"`
	Repair Repair `json:"repair"`
}

// CheckpointReport names the signed checkpoint a log was checked against.
type CheckpointReport struct {
	Origin string    `json:"origin"`
	Seq    uint64    `json:"seq"`
	Hash   string    `json:"hash"`
	Time   time.Time `json:"time"`
	Signer string    `json:"signer"`
}

// FileReport counts one file.
type FileReport struct {
	File     string `json:"file"`
	Records  uint64 `json:"records"`
	FirstSeq uint64 `json:"first_seq,omitempty"`
	LastSeq  uint64 `json:"last_seq,omitempty"`
}

// Report is Verify's answer.
type Report struct {
	Files     []FileReport  `json:"files"`
	Records   uint64        `json:"records"`
	Decisions uint64        `json:"decisions"`
	FirstSeq  uint64        `json:"first_seq,omitempty"`
	LastSeq   uint64        `json:"last_seq,omitempty"`
	LastHash  string        `json:"last_hash,omitempty"`
	Repairs   []FoundRepair `json:"repairs,omitempty"`
	// StartsAfter is set when the first record checked is not the chain's first: earlier
	// records were removed by retention (and the head vouches for the link), or were not
	// given to Verify.
	StartsAfter uint64 `json:"starts_after,omitempty"`
	Head        bool   `json:"head"` // a head file was found and checked against
	// Checkpoint is the signed checkpoint the log was checked against (verify --pubkey).
	Checkpoint *CheckpointReport `json:"checkpoint,omitempty"`
	Problems   []Problem         `json:"problems,omitempty"`
}

// OK reports whether the chain verified without problems.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// VerifyLog checks the whole log whose current file is path: every rotated file the
// head lists or the directory holds, in order, then the current file, against the
// head. A current file that ends mid-line is re-read once after a short wait, since a
// running daemon may be writing it.
func VerifyLog(path string) (*Report, error) {
	r, err := verifyLog(path)
	if err == nil && len(r.Problems) > 0 && r.Problems[0].Kind == ProblemTruncated && r.Problems[0].File == filepath.Base(path) {
		time.Sleep(300 * time.Millisecond)
		return verifyLog(path)
	}
	return r, err
}

func verifyLog(path string) (*Report, error) {
	dir := filepath.Dir(path)
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	head, herr := readHead(HeadPath(path))
	rep := &Report{}
	if herr != nil {
		rep.Problems = append(rep.Problems, Problem{Kind: ProblemHeadMismatch, File: filepath.Base(HeadPath(path)), Message: herr.Error()})
	}
	rs, err := Rotated(path)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	var files []string
	for _, r := range rs {
		names[r.Name] = true
		files = append(files, r.Name)
	}
	sealed := map[string]Sealed{}
	if head != nil {
		rep.Head = true
		for _, s := range head.Sealed {
			sealed[s.File] = s
			if !names[s.File] {
				rep.Problems = append(rep.Problems, Problem{Kind: ProblemMissingFile, File: s.File,
					Message: fmt.Sprintf("rotated file is missing (it held records %d to %d)", s.FirstSeq, s.LastSeq)})
				files = append(files, s.File)
			}
		}
	}
	sort.Slice(files, func(i, j int) bool {
		a, _ := rotatedNo(base, files[i])
		b, _ := rotatedNo(base, files[j])
		return a < b
	})
	// Numbering gaps between files on disk are missing files too (retention only ever
	// removes the oldest).
	for i := 1; i < len(rs); i++ {
		for no := rs[i-1].No + 1; no < rs[i].No; no++ {
			name := fmt.Sprintf("%s-%06d.jsonl", base, no)
			if _, listed := sealed[name]; !listed {
				rep.Problems = append(rep.Problems, Problem{Kind: ProblemMissingFile, File: name,
					Message: "rotated file is missing (numbering gap)"})
			}
		}
	}
	if len(rep.Problems) > 0 {
		return rep, nil
	}
	v := &verifier{rep: rep}
	if head != nil && head.Pruned != nil {
		v.pruned = head.Pruned
	}
	for _, name := range files {
		want, isSealed := sealed[name]
		fr, err := v.file(filepath.Join(dir, name), false)
		if err != nil {
			return nil, err
		}
		if v.stopped() {
			return rep, nil
		}
		if isSealed && (fr.LastSeq != want.LastSeq || v.prevHash != want.LastHash) {
			msg := fmt.Sprintf("ends at record %d but the head says it was sealed at record %d", fr.LastSeq, want.LastSeq)
			kind := ProblemTruncated
			if fr.LastSeq == want.LastSeq {
				kind, msg = ProblemHeadMismatch, fmt.Sprintf("last record %d differs from the one the head recorded when the file was sealed", fr.LastSeq)
			}
			rep.Problems = append(rep.Problems, Problem{Kind: kind, File: name, Seq: fr.LastSeq, Message: msg})
			return rep, nil
		}
	}
	if _, err := os.Stat(path); err == nil {
		if _, err := v.file(path, true); err != nil {
			return nil, err
		}
		if v.stopped() {
			return rep, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if head == nil && herr == nil && v.started {
		// Every writer writes the head with its first commit group: records without
		// one mean it was deleted, and with it the only record of where the chain ended.
		rep.Problems = append(rep.Problems, Problem{Kind: ProblemHeadMissing, File: filepath.Base(HeadPath(path)), Seq: v.lastSeq,
			Message: fmt.Sprintf("the log holds records up to %d but its head file is missing: records (or whole files) may have been removed from the end", v.lastSeq)})
	}
	if head != nil && head.File == filepath.Base(path) {
		switch {
		case head.Seq > v.lastSeq:
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemTruncated, File: filepath.Base(path), Seq: v.lastSeq,
				Message: fmt.Sprintf("the log ends at record %d but the head records %d: records were removed from the end", v.lastSeq, head.Seq)})
		case head.Seq > 0 && v.hashAt[head.Seq] != "" && v.hashAt[head.Seq] != head.Hash:
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemHeadMismatch, File: filepath.Base(path), Seq: head.Seq,
				Message: fmt.Sprintf("record %d differs from the one the head recorded", head.Seq)})
		}
	}
	return rep, nil
}

// VerifyFiles checks the given files as one chain, in the order given (no head).
func VerifyFiles(paths ...string) (*Report, error) {
	rep := &Report{}
	v := &verifier{rep: rep}
	for i, p := range paths {
		if _, err := v.file(p, i == len(paths)-1); err != nil {
			return nil, err
		}
		if v.stopped() {
			break
		}
	}
	return rep, nil
}

type verifier struct {
	rep      *Report
	pruned   *Sealed
	started  bool
	lastSeq  uint64
	prevHash string
	prevLoc  string
	// hashAt remembers the hash of the records of the current file (for the head check).
	hashAt map[uint64]string
}

func (v *verifier) stopped() bool { return len(v.rep.Problems) > 0 }

func (v *verifier) fail(kind, file string, line int, seq uint64, format string, args ...any) {
	v.rep.Problems = append(v.rep.Problems, Problem{Kind: kind, File: file, Line: line, Seq: seq, Message: fmt.Sprintf(format, args...)})
}

// file checks one file's records, continuing the chain.
func (v *verifier) file(path string, current bool) (FileReport, error) {
	name := filepath.Base(path)
	fr := FileReport{File: name}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			v.fail(ProblemMissingFile, name, 0, 0, "file is missing")
			return fr, nil
		}
		return fr, err
	}
	defer f.Close()
	if current {
		v.hashAt = map[uint64]string{}
	}
	br := bufio.NewReaderSize(f, 1<<20)
	lineNo := 0
	var offset int64
	for {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fr, err
		}
		lineNo++
		if line[len(line)-1] != '\n' {
			v.fail(ProblemTruncated, name, lineNo, v.lastSeq+1,
				"file ends in the middle of a record (%d bytes at offset %d, no newline): a torn write; hookd cuts it off and records a repair when it next opens the log", len(line), offset)
			break
		}
		offset += int64(len(line))
		line = line[:len(line)-1]
		h, perr := parseLineHead(line)
		if perr != nil || h.V == 0 || h.Seq == 0 {
			v.fail(ProblemBadLine, name, lineNo, v.lastSeq+1, "line is not an audit record (edited or damaged): %v", errOr(perr, "missing v or seq"))
			break
		}
		sum := sha256.Sum256(line)
		hash := hex.EncodeToString(sum[:])
		loc := fmt.Sprintf("%s:%d", name, lineNo)
		switch {
		case !v.started:
			switch {
			case h.Seq == 1 && h.PrevHash != "":
				v.fail(ProblemBrokenLink, name, lineNo, h.Seq, "the first record has a prev_hash: the chain's beginning was altered")
			case h.Seq > 1 && v.pruned != nil && (h.Seq != v.pruned.LastSeq+1 || h.PrevHash != v.pruned.LastHash):
				v.fail(ProblemBrokenLink, name, lineNo, h.Seq, "the oldest retained record (%d) does not chain to the last record of %s, removed by retention (%d): files were removed or edited",
					h.Seq, v.pruned.File, v.pruned.LastSeq)
			case h.Seq > 1:
				v.rep.StartsAfter = h.Seq - 1
			}
			v.rep.FirstSeq = h.Seq
		case h.Seq != v.lastSeq+1:
			v.fail(ProblemBrokenLink, name, lineNo, h.Seq, "record %d follows record %d (%s): records were deleted, inserted or reordered", h.Seq, v.lastSeq, v.prevLoc)
		case h.PrevHash != v.prevHash:
			v.fail(ProblemBrokenLink, name, lineNo, h.Seq, "record %d does not chain to the previous record (%s): one of the two was edited, or a record was replaced", h.Seq, v.prevLoc)
		}
		if v.stopped() {
			break
		}
		v.started, v.lastSeq, v.prevHash, v.prevLoc = true, h.Seq, hash, loc
		if current {
			v.hashAt[h.Seq] = hash
		}
		v.rep.Records++
		v.rep.LastSeq, v.rep.LastHash = h.Seq, hash
		fr.Records++
		if fr.FirstSeq == 0 {
			fr.FirstSeq = h.Seq
		}
		fr.LastSeq = h.Seq
		switch h.Kind {
		case KindDecision:
			v.rep.Decisions++
		case KindRepair:
			if h.Repair != nil {
				v.rep.Repairs = append(v.rep.Repairs, FoundRepair{File: name, Line: lineNo, Seq: h.Seq, Repair: *h.Repair})
				switch h.Repair.Reason {
				case RepairRecordsMissing:
					v.fail(ProblemRecordsMissing, name, lineNo, h.Seq, "repair record: %s", h.Repair.Detail)
				case RepairHeadMissing:
					v.fail(ProblemHeadMissing, name, lineNo, h.Seq, "repair record: %s", h.Repair.Detail)
				}
			}
		}
		if v.stopped() {
			break
		}
	}
	v.rep.Files = append(v.rep.Files, fr)
	return fr, nil
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}
