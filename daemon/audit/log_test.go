package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/test/testutil"
)

func openLog(t *testing.T, o Options) *Log {
	t.Helper()
	if o.Path == "" {
		o.Path = filepath.Join(t.TempDir(), "audit", DefaultFile)
	}
	l, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func decision(i int) *Record {
	code := i % 3
	return &Record{
		DecisionID: fmt.Sprintf("01TEST%020d", i), Time: time.Date(2026, 1, 2, 3, 4, 5, i*1000, time.UTC),
		Event: "PreToolUse", SessionID: "sess-1", ToolUseID: fmt.Sprintf("toolu_%d", i), ToolName: "Bash",
		Cwd: "/p", ProjectDir: "/p", Caller: &Caller{UID: 1000, PID: 42 + i, Client: "hookc"},
		Revision: "rev", Sources: []Source{{File: "/p/.claude/settings.json", Source: "project", Hash: "abc"}},
		Mode: "parallel",
		Hooks: []Hook{{ID: "project:/p/.claude/settings.json#PreToolUse[0].hooks[0]", Source: "project",
			File: "/p/.claude/settings.json", Matcher: "Bash", Type: "command", Command: "./guard.sh",
			Outcome: "ok", ExitCode: &code, DurationMS: 1.5,
			Stdout: &Output{Bytes: 3, SHA256: sha256Hex([]byte("out"))}, Stderr: &Output{Bytes: 0, SHA256: sha256Hex(nil)}}},
		HookDecision: "allow", Decision: "allow", DecisionSource: "hook", ExitCode: 0,
		Input: json.RawMessage(`{"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}}`),
	}
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte("\n"))[:bytes.Count(data, []byte("\n"))]
}

func TestRecordRoundTrip(t *testing.T) {
	l := openLog(t, Options{DaemonVersion: "v1.2.3"})
	want := decision(1)
	want.RuleAnswer = &Rule{Decision: "deny", Rule: "Bash(rm:*)", List: "deny", File: "/etc/claude-code/managed-settings.json", Source: "managed", Command: "$x f", Unresolved: "command name is not a literal: `$x`"}
	want.Override = &Override{HookDecision: "allow", Final: "deny", Rule: "Bash(rm:*)", List: "deny", File: "/etc/claude-code/managed-settings.json", Source: "managed", Command: "$x f", Unresolved: "command name is not a literal: `$x`"}
	want.UpdatedInput = json.RawMessage(`{"command":"ls -la"}`)
	want.AdditionalContextBytes = []int{12, 0}
	want.SystemMessages = 2
	want.Reason = "because"
	want.Harness, want.HarnessVersion, want.NativeEvent = "gemini", "0.61.0", "BeforeTool"
	want.Hooks = append(want.Hooks, Hook{ID: "x", Outcome: "not_run", Error: "prompt hooks need the harness"})
	in := *want
	if err := l.Append(context.Background(), &in); err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, l.Path())
	if len(lines) != 1 {
		t.Fatalf("got %d lines", len(lines))
	}
	var got Record
	if err := json.Unmarshal(lines[0], &got); err != nil {
		t.Fatal(err)
	}
	want.V, want.Kind, want.Seq, want.DaemonVersion = SchemaVersion, KindDecision, 1, "v1.2.3"
	if !reflect.DeepEqual(&got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("round trip differs\ngot  %s\nwant %s\nline %s", g, w, lines[0])
	}
	// Every key the line has is a key of the struct.
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(lines[0], &keys)
	known := map[string]bool{}
	rt := reflect.TypeOf(Record{})
	for i := 0; i < rt.NumField(); i++ {
		known[strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]] = true
	}
	for k := range keys {
		if !known[k] {
			t.Errorf("line has key %q that Record does not", k)
		}
	}
	if !bytes.HasPrefix(lines[0], []byte(`{"time":"2026-01-02T03:04:05.000001Z","kind":"decision","v":1,`)) {
		t.Errorf("line does not start with the chain fields: %s", lines[0][:80])
	}
	if !bytes.HasSuffix(bytes.TrimSpace(lines[0]), []byte(`,"seq":1,"prev_hash":""}`)) {
		t.Errorf("line does not end with seq and prev_hash: %s", lines[0][len(lines[0])-60:])
	}
}

func TestChainVerifies(t *testing.T) {
	for _, policy := range []string{FsyncAlways, FsyncBatch, FsyncNever} {
		t.Run(policy, func(t *testing.T) {
			l := openLog(t, Options{Fsync: policy})
			for i := 0; i < 20; i++ {
				if err := l.Append(context.Background(), decision(i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			rep, err := VerifyLog(l.Path())
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() || rep.Records != 20 || rep.Decisions != 20 || rep.FirstSeq != 1 || rep.LastSeq != 20 || !rep.Head {
				t.Fatalf("report %+v", rep)
			}
			// Re-opening continues the chain.
			l2 := openLog(t, Options{Path: l.Path(), Fsync: policy})
			if err := l2.Append(context.Background(), decision(21)); err != nil {
				t.Fatal(err)
			}
			l2.Close()
			if rep, _ := VerifyLog(l.Path()); !rep.OK() || rep.Records != 21 {
				t.Fatalf("after reopen: %+v", rep)
			}
		})
	}
}

// TestGroupCommit: concurrent appends under each policy produce one intact chain, every
// record exactly once; under "batch" fsyncs are shared.
func TestGroupCommit(t *testing.T) {
	for _, policy := range []string{FsyncAlways, FsyncBatch, FsyncNever} {
		t.Run(policy, func(t *testing.T) {
			l := openLog(t, Options{Fsync: policy})
			const workers, each = 8, 50
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						if err := l.Append(context.Background(), decision(w*1000+i)); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			st := l.Status()
			if st.Records != workers*each || st.Failures != 0 || !st.Healthy || st.Seq != workers*each {
				t.Fatalf("status %+v", st)
			}
			t.Logf("%s: %d records in %d writes", policy, st.Records, st.Batches)
			l.Close()
			rep, err := VerifyLog(l.Path())
			if err != nil || !rep.OK() || rep.Records != workers*each {
				t.Fatalf("verify: %v %+v", err, rep)
			}
			ids := map[string]bool{}
			_ = Scan([]string{l.Path()}, func(r *Record, _ []byte) error { ids[r.DecisionID] = true; return nil })
			if len(ids) != workers*each {
				t.Fatalf("%d distinct decision ids, want %d", len(ids), workers*each)
			}
		})
	}
}

// TestTwoWriters: the daemon and a `hookd run` fallback append to one log; the file
// lock and the re-read of the tail keep one chain.
func TestTwoWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), DefaultFile)
	a := openLog(t, Options{Path: path, MaxBytes: 4 << 10})
	b := openLog(t, Options{Path: path, MaxBytes: 4 << 10})
	var wg sync.WaitGroup
	for _, l := range []*Log{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				if err := l.Append(context.Background(), decision(i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	a.Close()
	b.Close()
	rep, err := VerifyLog(path)
	if err != nil || !rep.OK() || rep.Records != 200 || len(rep.Files) < 3 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}

func TestRotationAndRetention(t *testing.T) {
	l := openLog(t, Options{MaxBytes: 2 << 10, Retain: 3})
	for i := 0; i < 60; i++ {
		if err := l.Append(context.Background(), decision(i)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	rs, _ := Rotated(l.Path())
	if len(rs) != 3 {
		t.Fatalf("%d rotated files kept, want 3: %v", len(rs), rs)
	}
	rep, err := VerifyLog(l.Path())
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	if rep.StartsAfter == 0 || rep.LastSeq != 60 {
		t.Fatalf("retention should have pruned the chain's start: %+v", rep)
	}
	head, _ := readHead(HeadPath(l.Path()))
	if head.Pruned == nil || len(head.Sealed) != 3 || head.Seq != 60 {
		t.Fatalf("head %+v", head)
	}
	if got := l.Status().Rotations; got < 4 {
		t.Fatalf("rotations = %d", got)
	}
}

// TestVerifyDetects: each kind of tampering is reported as the first problem.
func TestVerifyDetects(t *testing.T) {
	build := func(t *testing.T, rotate, killed bool) string {
		o := Options{}
		if rotate {
			o.MaxBytes = 2 << 10
		}
		l := openLog(t, o)
		for i := 0; i < 30; i++ {
			if err := l.Append(context.Background(), decision(i)); err != nil {
				t.Fatal(err)
			}
		}
		path := l.Path()
		if killed {
			// What a SIGKILL leaves: the files as they are after the last Append
			// returned, no Close. A copy, so the open Log cannot touch them again.
			killedDir := filepath.Join(t.TempDir(), "killed")
			testutil.CopyFiles(t, filepath.Dir(path), killedDir)
			path = filepath.Join(killedDir, filepath.Base(path))
		} else {
			l.Close()
		}
		if rep, err := VerifyLog(path); err != nil || !rep.OK() {
			t.Fatalf("pristine log does not verify: %v %+v", err, rep)
		}
		return path
	}
	rewrite := func(t *testing.T, path string, f func(lines [][]byte) [][]byte) {
		lines := f(readLines(t, path))
		if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		rotate bool
		tamper func(t *testing.T, path string)
		want   string
		killed bool // the writer was SIGKILLed (no Close) before the tampering
	}{
		{"killed: truncated at a line end", false, func(t *testing.T, p string) {
			rewrite(t, p, func(ls [][]byte) [][]byte { return ls[:len(ls)-1] })
		}, ProblemTruncated, true},
		{"killed: truncated at a line end, rotated", true, func(t *testing.T, p string) {
			rewrite(t, p, func(ls [][]byte) [][]byte { return ls[:len(ls)-1] })
		}, ProblemTruncated, true},
		{"killed: current file deleted", true, func(t *testing.T, p string) { os.Remove(p) }, ProblemTruncated, true},
		{"killed: head deleted", false, func(t *testing.T, p string) { os.Remove(HeadPath(p)) }, ProblemHeadMissing, true},
		{"killed: head deleted and tail cut", false, func(t *testing.T, p string) {
			os.Remove(HeadPath(p))
			rewrite(t, p, func(ls [][]byte) [][]byte { return ls[:len(ls)-4] })
		}, ProblemHeadMissing, true},
		{"head deleted", false, func(t *testing.T, p string) { os.Remove(HeadPath(p)) }, ProblemHeadMissing, false},
		{"current file and head deleted", true, func(t *testing.T, p string) {
			os.Remove(p)
			os.Remove(HeadPath(p))
		}, ProblemHeadMissing, false},
		{"newest rotated file and head deleted", true, func(t *testing.T, p string) {
			rs, _ := Rotated(p)
			os.Remove(filepath.Join(filepath.Dir(p), rs[len(rs)-1].Name))
			os.Remove(HeadPath(p))
		}, ProblemBrokenLink, false},
		{"newest rotated file and head deleted, current emptied", true, func(t *testing.T, p string) {
			rs, _ := Rotated(p)
			os.Remove(filepath.Join(filepath.Dir(p), rs[len(rs)-1].Name))
			os.Remove(HeadPath(p))
			os.Truncate(p, 0)
		}, ProblemHeadMissing, false},
		{"edited byte", false, func(t *testing.T, p string) {
			rewrite(t, p, func(ls [][]byte) [][]byte {
				ls[10] = bytes.Replace(ls[10], []byte(`"allow"`), []byte(`"alloW"`), 1)
				return ls
			})
		}, ProblemBrokenLink, false},
		{"edited last record", false, func(t *testing.T, p string) {
			rewrite(t, p, func(ls [][]byte) [][]byte {
				ls[len(ls)-1] = bytes.Replace(ls[len(ls)-1], []byte(`"allow"`), []byte(`"alloW"`), 1)
				return ls
			})
		}, ProblemHeadMismatch, false},
		{"deleted line", false, func(t *testing.T, p string) {
			rewrite(t, p, func(ls [][]byte) [][]byte { return append(ls[:5], ls[6:]...) })
		}, ProblemBrokenLink, false},
		{"reordered pair", false, func(t *testing.T, p string) {
			rewrite(t, p, func(ls [][]byte) [][]byte { ls[7], ls[8] = ls[8], ls[7]; return ls })
		}, ProblemBrokenLink, false},
		{"not json", false, func(t *testing.T, p string) {
			rewrite(t, p, func(ls [][]byte) [][]byte { ls[3] = []byte("garbage\n"); return ls })
		}, ProblemBadLine, false},
		{"truncated mid-line", false, func(t *testing.T, p string) {
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()-40)
		}, ProblemTruncated, false},
		{"truncated at a line end", false, func(t *testing.T, p string) {
			rewrite(t, p, func(ls [][]byte) [][]byte { return ls[:len(ls)-3] })
		}, ProblemTruncated, false},
		{"removed rotated file", true, func(t *testing.T, p string) {
			rs, _ := Rotated(p)
			os.Remove(filepath.Join(filepath.Dir(p), rs[1].Name))
		}, ProblemMissingFile, false},
		{"removed oldest rotated file", true, func(t *testing.T, p string) {
			rs, _ := Rotated(p)
			os.Remove(filepath.Join(filepath.Dir(p), rs[0].Name))
		}, ProblemMissingFile, false},
		{"removed newest rotated file", true, func(t *testing.T, p string) {
			rs, _ := Rotated(p)
			os.Remove(filepath.Join(filepath.Dir(p), rs[len(rs)-1].Name))
		}, ProblemMissingFile, false},
		{"truncated rotated file", true, func(t *testing.T, p string) {
			rs, _ := Rotated(p)
			rewrite(t, filepath.Join(filepath.Dir(p), rs[0].Name), func(ls [][]byte) [][]byte { return ls[:len(ls)-1] })
		}, ProblemTruncated, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := build(t, c.rotate, c.killed)
			c.tamper(t, p)
			rep, err := VerifyLog(p)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || rep.Problems[0].Kind != c.want {
				t.Fatalf("got problems %v, want first %s", rep.Problems, c.want)
			}
			t.Logf("%s", rep.Problems[0])
		})
	}
}

func TestVerifyFiles(t *testing.T) {
	l := openLog(t, Options{MaxBytes: 2 << 10})
	for i := 0; i < 30; i++ {
		_ = l.Append(context.Background(), decision(i))
	}
	l.Close()
	files, _ := Files(l.Path())
	rep, err := VerifyFiles(files[1:]...)
	if err != nil || !rep.OK() || rep.StartsAfter == 0 || rep.LastSeq != 30 {
		t.Fatalf("%v %+v", err, rep)
	}
	rep, _ = VerifyFiles(files[2], files[1])
	if rep.OK() || rep.Problems[0].Kind != ProblemBrokenLink {
		t.Fatalf("files out of order should break the chain: %+v", rep)
	}
}

// TestTornTailRepaired: a partial last line (a crash mid-write) is cut off on open and a
// repair record chained in; Verify passes and reports it.
func TestTornTailRepaired(t *testing.T) {
	for _, torn := range []string{`{"time":"2026-01-02T03:04:05Z","kind":"decision","v":1,"decis`, "\x00\x00\x00\x00", "{\"half\":\n"} {
		t.Run(fmt.Sprintf("%q", torn[:4]), func(t *testing.T) {
			l := openLog(t, Options{})
			for i := 0; i < 5; i++ {
				_ = l.Append(context.Background(), decision(i))
			}
			l.Close()
			f, _ := os.OpenFile(l.Path(), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(torn)
			f.Close()
			if rep, _ := VerifyFiles(l.Path()); rep.OK() {
				t.Fatal("verify before repair should report the torn tail")
			}
			l2 := openLog(t, Options{Path: l.Path()})
			if st := l2.Status(); st.Repairs != 1 || !st.Healthy {
				t.Fatalf("status %+v", st)
			}
			_ = l2.Append(context.Background(), decision(9))
			l2.Close()
			rep, err := VerifyLog(l.Path())
			if err != nil || !rep.OK() || rep.Records != 7 || len(rep.Repairs) != 1 {
				t.Fatalf("%v %+v", err, rep)
			}
			r := rep.Repairs[0].Repair
			if r.Reason != RepairTornTail || r.DroppedBytes != len(torn) || r.DroppedSHA256 != sha256Hex([]byte(torn)) {
				t.Fatalf("repair %+v", r)
			}
		})
	}
}

// TestRecordsMissing: records removed while the log was closed are admitted by a
// repair record on open, which Verify keeps reporting.
func TestRecordsMissing(t *testing.T) {
	l := openLog(t, Options{})
	for i := 0; i < 5; i++ {
		_ = l.Append(context.Background(), decision(i))
	}
	l.Close()
	lines := readLines(t, l.Path())
	os.WriteFile(l.Path(), bytes.Join(lines[:3], nil), 0o600)
	l2 := openLog(t, Options{Path: l.Path()})
	_ = l2.Append(context.Background(), decision(9))
	l2.Close()
	rep, _ := VerifyLog(l.Path())
	if rep.OK() || rep.Problems[0].Kind != ProblemRecordsMissing || len(rep.Repairs) != 1 || rep.Repairs[0].Repair.ExpectedSeq != 5 {
		t.Fatalf("%+v", rep)
	}
}

// TestUnwritableFailsAndHeals: a directory that cannot be created fails every Append
// with the reason, reports it in Status, and heals once it can be.
func TestUnwritableFailsAndHeals(t *testing.T) {
	root := t.TempDir()
	blocker := filepath.Join(root, "state")
	os.WriteFile(blocker, []byte("a file where a directory should be"), 0o600)
	path := filepath.Join(blocker, "audit", DefaultFile)
	l, err := Open(Options{Path: path})
	if err == nil || l == nil {
		t.Fatalf("Open = %v, %v; want a broken log and an error", l, err)
	}
	defer l.Close()
	if err := l.Append(context.Background(), decision(1)); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("Append = %v", err)
	}
	st := l.Status()
	if st.Healthy || st.Failures != 1 || !strings.Contains(st.LastError, "not a directory") {
		t.Fatalf("status %+v", st)
	}
	os.Remove(blocker)
	if err := l.Append(context.Background(), decision(2)); err != nil {
		t.Fatalf("after fixing the directory: %v", err)
	}
	if st := l.Status(); !st.Healthy || st.Records != 1 {
		t.Fatalf("status %+v", st)
	}
}

// TestDiskFull: writes that fail (ENOSPC from /dev/full) fail the records and leave no
// record behind; the chain is intact once writing works again.
func TestDiskFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, DefaultFile)
	l := openLog(t, Options{Path: path})
	_ = l.Append(context.Background(), decision(1))
	l.Close()
	data, _ := os.ReadFile(path)
	os.Remove(path)
	os.Symlink("/dev/full", path)
	l2, _ := Open(Options{Path: path})
	err := l2.Append(context.Background(), decision(2))
	if err == nil || !strings.Contains(err.Error(), "no space") {
		t.Fatalf("Append on a full disk = %v", err)
	}
	if st := l2.Status(); st.Healthy || st.Failures != 1 {
		t.Fatalf("status %+v", st)
	}
	l2.Close()
	os.Remove(path)
	os.WriteFile(path, data, 0o600)
	l3 := openLog(t, Options{Path: path})
	_ = l3.Append(context.Background(), decision(3))
	l3.Close()
	if rep, _ := VerifyLog(path); !rep.OK() || rep.Records != 2 {
		t.Fatalf("%+v", rep)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Path: "x", Fsync: "sometimes"},
		{Path: "x", Mask: []MaskRule{{Path: "a..b", Action: MaskHash}}},
		{Path: "x", Mask: []MaskRule{{Path: "a", Action: "encrypt"}}},
		{},
	} {
		if l, err := Open(o); err == nil || l != nil {
			t.Errorf("Open(%+v) = %v, %v", o, l, err)
		}
	}
}

// TestHeadMissingRepair: a writer that opens a log whose head was deleted says so in a
// repair record, and Verify keeps failing afterwards (a new head cannot vouch for what
// was cut before it was written).
func TestHeadMissingRepair(t *testing.T) {
	l := openLog(t, Options{})
	for i := 0; i < 10; i++ {
		if err := l.Append(context.Background(), decision(i)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	os.Remove(HeadPath(l.Path()))
	rewrite := readLines(t, l.Path())
	os.WriteFile(l.Path(), bytes.Join(rewrite[:7], nil), 0o600)
	l2 := openLog(t, Options{Path: l.Path()})
	if err := l2.Append(context.Background(), decision(99)); err != nil {
		t.Fatal(err)
	}
	l2.Close()
	rep, err := VerifyLog(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || rep.Problems[0].Kind != ProblemHeadMissing || len(rep.Repairs) != 1 || rep.Repairs[0].Repair.Reason != RepairHeadMissing {
		t.Fatalf("want a head_missing repair and problem, got %+v", rep)
	}
}

// TestHeadCoversEveryAppend: once Append returns, the head on disk (and Log.Head) is at
// or past the record, without Close.
func TestHeadCoversEveryAppend(t *testing.T) {
	for _, fsync := range []string{FsyncBatch, FsyncAlways, FsyncNever} {
		t.Run(fsync, func(t *testing.T) {
			l := openLog(t, Options{Fsync: fsync, MaxBytes: 4 << 10})
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					for i := 0; i < 10; i++ {
						r := decision(g*100 + i)
						if err := l.Append(context.Background(), r); err != nil {
							t.Error(err)
							return
						}
						h, err := readHead(HeadPath(l.Path()))
						if err != nil || h == nil {
							t.Errorf("head: %v %v", h, err)
							return
						}
						if mem := l.Head(); mem.Seq < 1 || h.Seq < 1 {
							t.Errorf("head not advanced: disk %d mem %d", h.Seq, mem.Seq)
						}
					}
				}(g)
			}
			wg.Wait()
			h, _ := readHead(HeadPath(l.Path()))
			if h.Seq != 40 || l.Head().Seq != 40 || l.Head().Hash != h.Hash {
				t.Fatalf("head after 40 appends: disk %+v mem %+v", h, l.Head())
			}
		})
	}
}
