//go:build unix

package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/hookd/hookd/configs/settings"
	"github.com/hookd/hookd/events"
)

// known is what this build of hookd knows.
func known() Known {
	k := Known{Events: events.Names(), Decoded: map[string][]string{}}
	decoded, ignored := settings.HandlerFields()
	for f, ts := range decoded {
		var s []string
		for _, t := range ts {
			s = append(s, string(t))
		}
		k.Decoded[f] = s
	}
	k.Ignored = ignored
	return k
}

// readBinary maps the binary read-only (it is ~380 MB; no copy).
func readBinary(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap %s: %v", path, err)
	}
	t.Cleanup(func() { _ = syscall.Munmap(data) })
	return data
}

// TestConformance is `make conformance`: the pinned Claude Code binary's event list and
// handler fields against hookd's catalogue and decoder.
func TestConformance(t *testing.T) {
	bin := os.Getenv("HOOKD_CLAUDE_BIN")
	if bin == "" {
		// `make conformance` (part of `make test`, so of CI) always sets both; a plain
		// `go test ./...` has no binary to read and says so.
		if os.Getenv("HOOKD_CONFORMANCE") != "" {
			t.Fatal("HOOKD_CLAUDE_BIN is not set: make conformance installs the pinned Claude Code (test/e2e/install-claude.sh) and passes its path")
		}
		t.Skip("SKIPPED: HOOKD_CLAUDE_BIN not set; the drift check against the pinned Claude Code runs in `make conformance` (part of `make test` and CI)")
	}
	version := "unknown"
	if out, err := exec.Command(bin, "--version").Output(); err == nil {
		version = strings.TrimSpace(string(out))
	}
	data := readBinary(t, bin)
	evs, err := ExtractEvents(data)
	if err != nil {
		t.Fatalf("%s (%s): %v", bin, version, err)
	}
	fields, err := ExtractHandlerFields(data)
	if err != nil {
		t.Fatalf("%s (%s): %v", bin, version, err)
	}
	t.Logf("Claude Code %s: %d events; handler fields: %v", version, len(evs), fields)
	if problems := Check(Extracted{Events: evs, Fields: fields}, known()); len(problems) > 0 {
		t.Fatalf("hookd is not current with Claude Code %s (%s):\n  %s\nSee docs/claude-code.md, \"Moving to a newer Claude Code\".",
			version, bin, strings.Join(problems, "\n  "))
	}
	fmt.Printf("conformance: hookd knows all %d events and every handler field of Claude Code %s\n", len(evs), version)
}

// binaryLike is a fragment laid out as the 2.1.330 binary lays out its settings schema
// (minified names are arbitrary; the structure and the descriptions are the anchors).
const binaryLike = `var Zz=1;var Jd=["PreToolUse","PostToolUse","Stop","SessionStart","UserPromptSubmit"],other=2;` +
	`hooks:A(rOe()).describe("List of hooks to execute when the matcher matches")})),Iee=p(()=>n$e(F(Jd),A(At())));` +
	`function al(){let e=c({type:E("command").describe("Shell command hook type"),command:n().describe("a, b: c"),` +
	`args:A(n()).optional(),if:gt(),timeout:v().positive().optional(),onFailure:Oo(),` +
	"statusMessage:n().optional().describe(`x ${a?\"}\":'{'} y`),async:P().optional(),re:n().regex(/^[a-z]{1,2}\\/$/).optional()})," +
	`o=c({type:E("prompt"),prompt:n(),model:n().optional()}),r=c({type:E("mcp_tool"),server:n(),tool:n(),input:he(n(),ie()).optional()}),` +
	`a=c({type:E("http"),url:n().url(),headers:he(n(),n()).optional(),"allowedEnvVars":A(n()).optional()}),l=c({type:E("agent"),prompt:n()});` +
	`return{BashCommandHookSchema:e,PromptHookSchema:o,HttpHookSchema:a,AgentHookSchema:l,McpToolHookSchema:r}}`

func TestExtract(t *testing.T) {
	evs, err := ExtractEvents([]byte(binaryLike))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(evs, ","); got != "PreToolUse,PostToolUse,Stop,SessionStart,UserPromptSubmit" {
		t.Errorf("events %s", got)
	}
	fields, err := ExtractHandlerFields([]byte(binaryLike))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"command":  "type,command,args,if,timeout,onFailure,statusMessage,async,re",
		"prompt":   "type,prompt,model",
		"mcp_tool": "type,server,tool,input",
		"http":     "type,url,headers,allowedEnvVars",
		"agent":    "type,prompt",
	}
	for typ, w := range want {
		if got := strings.Join(fields[typ], ","); got != w {
			t.Errorf("%s fields %s, want %s", typ, got, w)
		}
	}
	// Without the anchors, extraction fails and says the layout changed.
	if _, err := ExtractHandlerFields([]byte("nothing here")); err == nil || !strings.Contains(err.Error(), "layout changed") {
		t.Errorf("no anchors: %v", err)
	}
	if _, err := ExtractEvents([]byte(`["PreToolUse","Foo"]`)); err == nil || !strings.Contains(err.Error(), "layout changed") {
		t.Errorf("no event list: %v", err)
	}
}

// TestCheckNamesWhatIsMissing: the check fails when the binary has an event or a handler
// field hookd lacks, and its message names it. This is the test that proves `make
// conformance` can fail: a fake event added to the list extracted from the real
// catalogue, and a fake field added to the command schema.
func TestCheckNamesWhatIsMissing(t *testing.T) {
	k := known()
	decoded, _ := settings.HandlerFields()
	var commandFields []string
	for f, ts := range decoded {
		if ts == nil || containsType(ts, events.Command) {
			commandFields = append(commandFields, f)
		}
	}
	x := Extracted{Events: append([]string(nil), k.Events...), Fields: map[string][]string{"command": commandFields}}
	if p := Check(x, k); len(p) != 0 {
		t.Fatalf("hookd against itself: %v", p)
	}

	x.Events = append(x.Events, "PreTeleport")
	p := Check(x, k)
	if len(p) != 1 || !strings.Contains(p[0], "event PreTeleport") || !strings.Contains(p[0], "catalogue") {
		t.Fatalf("fake event: problems %q, want one naming PreTeleport", p)
	}

	x.Events = x.Events[:len(x.Events)-1]
	x.Fields["command"] = append(x.Fields["command"], "failMode")
	x.Fields["prompt"] = []string{"type", "onFailure"}
	p = Check(x, k)
	if len(p) != 2 || !strings.Contains(strings.Join(p, "\n"), "handler field failMode on command handlers") ||
		!strings.Contains(strings.Join(p, "\n"), "handler field onFailure on prompt handlers") {
		t.Fatalf("fake fields: problems %q", p)
	}

	// An event hookd has and the binary lost is reported too.
	x = Extracted{Events: k.Events[1:]}
	if p := Check(x, k); len(p) != 1 || !strings.Contains(p[0], "event "+k.Events[0]) {
		t.Fatalf("removed event: %q", p)
	}
}

func containsType(ts []events.HandlerType, t events.HandlerType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}
