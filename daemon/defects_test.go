package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/daemon/runner"
	"github.com/hookd/hookd/protocol"
)

// The regressions for the three defects of issue 24, each reproduced on the engine as it
// was (daemon/engine.go's 233-line Handle): they fail there and pass on the stages.

// scripted is a runner.Runner that answers by command, without starting processes: the
// engine's composition is under test, not process handling (package runner has its own
// tests). A command it does not know exits 0 with no output. block commands wait for
// the request's context to end, as a hook still running at shutdown would.
type scripted struct {
	mu    sync.Mutex
	out   map[string]runner.ProcResult
	block map[string]bool
	// answer, when set, answers every command its stdin decides (out is not used).
	answer func(command string, stdin []byte) runner.ProcResult
	ran    []string // commands in the order they started
	stdin  map[string][]byte
}

func (s *scripted) Run(ctx context.Context, spec runner.ProcSpec) runner.ProcResult {
	s.mu.Lock()
	s.ran = append(s.ran, spec.Command)
	if s.stdin == nil {
		s.stdin = map[string][]byte{}
	}
	s.stdin[spec.Command] = spec.Stdin
	r, block, answer := s.out[spec.Command], s.block[spec.Command], s.answer
	s.mu.Unlock()
	if answer != nil {
		return answer(spec.Command, spec.Stdin)
	}
	if block {
		<-ctx.Done()
		return runner.ProcResult{ExitCode: -1, Cancelled: true}
	}
	return r
}

func (s *scripted) commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ran...)
}

func stdout(s string) runner.ProcResult { return runner.ProcResult{Stdout: []byte(s)} }

// recorder is an Auditor that keeps every decision, or fails every append with err.
type recorder struct {
	mu  sync.Mutex
	got []*decision
	err error
}

func (r *recorder) Append(_ context.Context, d *decision) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	r.got = append(r.got, d)
	return nil
}

func (r *recorder) last(t *testing.T) *decision {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		t.Fatal("no decision recorded")
	}
	return r.got[len(r.got)-1]
}

// world is a home directory, a project and an engine over them.
type world struct {
	t       *testing.T
	home    string
	project string
	run     *scripted
	audit   *recorder
	engine  *engine
}

func newWorld(t *testing.T, files map[string]string) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, home: filepath.Join(root, "home"), project: filepath.Join(root, "proj"),
		run: &scripted{out: map[string]runner.ProcResult{}, block: map[string]bool{}}, audit: &recorder{}}
	for _, d := range []string{w.home, w.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range files {
		w.write(name, text)
	}
	w.engine = newEngine(engineOptions{
		Sources: settings.Sources{Home: w.home, ManagedDir: filepath.Join(root, "managed")},
		Runner:  w.run, Audit: w.audit,
	})
	return w
}

// write creates a file; "~/" names the home directory, "./" the project.
func (w *world) write(name, text string) {
	w.t.Helper()
	p := w.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) path(name string) string {
	switch {
	case strings.HasPrefix(name, "~/"):
		return filepath.Join(w.home, name[2:])
	case strings.HasPrefix(name, "./"):
		return filepath.Join(w.project, name[2:])
	}
	return name
}

// geminiBeforeTool is Gemini CLI 0.61.0's BeforeTool payload for `ls` (abbreviated from
// test/testdata/harnesses).
func (w *world) geminiBeforeTool() *protocol.Request {
	payload, _ := json.Marshal(map[string]any{
		"session_id": "g1", "transcript_path": filepath.Join(w.home, ".gemini", "tmp", "p", "chats", "g1.jsonl"),
		"cwd": w.project, "hook_event_name": "BeforeTool", "timestamp": "2026-11-23T14:33:54.104Z",
		"tool_name": "run_shell_command", "tool_input": map[string]any{"command": "ls"},
	})
	return &protocol.Request{V: protocol.Version, Event: payload, Harness: protocol.HarnessGemini,
		ProjectDir: w.project, Env: []string{"PATH=/usr/bin:/bin"}}
}

// codexPreToolUse is Codex 0.169.0's PreToolUse payload for `ls`.
func (w *world) codexPreToolUse() *protocol.Request {
	payload, _ := json.Marshal(map[string]any{
		"session_id": "c1", "turn_id": "t1", "transcript_path": filepath.Join(w.home, ".codex", "sessions", "r.jsonl"),
		"cwd": w.project, "hook_event_name": "PreToolUse", "model": "gpt-5", "permission_mode": "default",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}, "tool_use_id": "call_1",
	})
	return &protocol.Request{V: protocol.Version, Event: payload, Harness: protocol.HarnessCodex,
		ProjectDir: w.project, Env: []string{"PATH=/usr/bin:/bin"}}
}

func (w *world) handle(req *protocol.Request) *protocol.Result {
	w.t.Helper()
	res, err := w.engine.Handle(context.Background(), req, Caller{Client: "test"}, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return res
}

// geminiToolInput is the tool_input of a rendered Gemini BeforeTool answer.
func geminiToolInput(t *testing.T, res *protocol.Result) string {
	t.Helper()
	var out struct {
		HSO struct {
			ToolInput json.RawMessage `json:"tool_input"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("answer %q: %v", res.Output, err)
	}
	return string(out.HSO.ToolInput)
}

// Defect 1: two Claude Code hooks rewrite the input differently; the first in
// configuration order wins and the other is reported. A no-op hook of the harness's own
// in a sequential group — a separate batch — must not change that: the sequential "last
// rewrite counts" rule applies to its own batch only.
func TestDefectOtherBatchDoesNotChangeWhichRewriteWins(t *testing.T) {
	settingsJSON := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
		{"type":"command","command":"hook-a"},{"type":"command","command":"hook-b"}]}]}}`
	allowWith := func(cmd string) string {
		return `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"` + cmd + `"}}}`
	}
	for _, c := range []struct {
		name   string
		gemini string // ~/.gemini/hookd.json, "" for none
	}{
		{"Claude Code hooks alone", ""},
		{"beside a sequential Gemini hook", `{"hooks":{"BeforeTool":[{"matcher":"run_shell_command","sequential":true,"hooks":[{"type":"command","command":"gemini-noop"}]}]}}`},
		{"beside a parallel Gemini hook", `{"hooks":{"BeforeTool":[{"matcher":"run_shell_command","hooks":[{"type":"command","command":"gemini-noop"}]}]}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{"~/.claude/settings.json": settingsJSON}
			if c.gemini != "" {
				files["~/.gemini/hookd.json"] = c.gemini
			}
			w := newWorld(t, files)
			w.run.out["hook-a"] = stdout(allowWith("ls -a"))
			w.run.out["hook-b"] = stdout(allowWith("ls -b"))
			res := w.handle(w.geminiBeforeTool())
			if got := geminiToolInput(t, res); got != `{"command":"ls -a"}` {
				t.Errorf("rewrite %s, want hook-a's (first in configuration order); warnings %q", got, res.Warnings)
			}
			found := false
			for _, warn := range res.Warnings {
				found = found || strings.HasPrefix(warn, "conflicting updatedInput from user:") && strings.Contains(warn, "#PreToolUse[0].hooks[1] ignored")
			}
			if !found {
				t.Errorf("no warning that hook-b's rewrite was ignored: %q", res.Warnings)
			}
			if c.gemini != "" && !strings.Contains(strings.Join(w.run.commands(), " "), "gemini-noop") {
				t.Errorf("the Gemini hook did not run: %q", w.run.commands())
			}
		})
	}
}

// Defect 2: a harness's own hook file is compiled policy: the record of a decision its hook
// made names the file among its sources, and the revision changes with the file.
func TestDefectHarnessHookFileIsInTheRevision(t *testing.T) {
	deny := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`
	w := newWorld(t, map[string]string{
		"~/.codex/hookd.json": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"codex-guard"}]}]}}`,
	})
	w.run.out["codex-guard"] = stdout(deny)
	res := w.handle(w.codexPreToolUse())
	if res.Permission == nil || res.Permission.Decision != "deny" {
		t.Fatalf("codex-guard's deny not in the answer: %+v", res.Permission)
	}
	rec := auditRecord(w.audit.last(t))
	file := w.path("~/.codex/hookd.json")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(text)
	named := false
	for _, s := range rec.Sources {
		named = named || s.File == file && s.Hash == hex.EncodeToString(sum[:])
	}
	if !named || rec.Revision == "" {
		t.Fatalf("record: revision %q, sources %+v; want %s among them with its hash", rec.Revision, rec.Sources, file)
	}
	if len(rec.Hooks) != 1 || rec.Hooks[0].File != file {
		t.Errorf("record's hooks %+v: want codex-guard, defined in %s", rec.Hooks, file)
	}
	first := rec.Revision
	w.write("~/.codex/hookd.json", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"codex-guard","timeout":5}]}]}}`)
	w.engine.Store().Reload(context.Background(), "test")
	w.handle(w.codexPreToolUse())
	if rec := auditRecord(w.audit.last(t)); rec.Revision == first {
		t.Errorf("revision %s did not change with %s", first, file)
	}
}

// Defect 3: both fail-closed answers — hooks cut short by shutdown, and a decision the
// audit log could not record — are built and rendered the same way: for a Gemini event,
// in Gemini's shape, with the mode and revision.
func TestDefectFailClosedAnswersAgree(t *testing.T) {
	files := map[string]string{"~/.claude/settings.json": `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"slow"}]}]}}`}

	// Shutdown: the hook is still running when the grace period ends.
	w := newWorld(t, files)
	w.run.block["slow"] = true
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan *protocol.Result, 1)
	go func() {
		res, err := w.engine.Handle(ctx, w.geminiBeforeTool(), Caller{Client: "test"}, nil)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	waitFor(t, func() bool { return len(w.run.commands()) == 1 })
	cancel(ErrShutdown)
	shutdown := <-done

	// Audit failure: the hook allows, the record cannot be written.
	w2 := newWorld(t, files)
	w2.run.out["slow"] = stdout(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`)
	w2.audit.err = errors.New("disk full")
	audited := w2.handle(w2.geminiBeforeTool())

	for name, res := range map[string]*protocol.Result{"shutdown": shutdown, "audit failure": audited} {
		if res == nil {
			t.Fatalf("%s: no answer", name)
		}
		if res.Harness != protocol.HarnessGemini || res.NativeEvent != "BeforeTool" || res.Mode != "parallel" || res.Revision == "" || res.DecisionID == "" {
			t.Errorf("%s: harness %q, native event %q, mode %q, revision %q, decision %q; want gemini, BeforeTool, parallel and both ids",
				name, res.Harness, res.NativeEvent, res.Mode, res.Revision, res.DecisionID)
		}
		var out struct{ Decision string }
		if err := json.Unmarshal(res.Output, &out); err != nil || out.Decision != "deny" || res.ExitCode != 0 {
			t.Errorf("%s: answer %q exit %d, want Gemini's {\"decision\":\"deny\"} with exit 0", name, res.Output, res.ExitCode)
		}
	}
}

// waitFor polls cond until it holds (no wall-clock assertion: a slow machine only waits
// longer; the test binary's -timeout bounds it).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}
