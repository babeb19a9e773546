package install

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hookd/hookd/configs/settings"
)

// handlersOf lists the handlers of Claude Code's file as decoded by the installer, per
// event.
func handlersOf(t *testing.T, text string) map[string][]handlerInfo {
	t.Helper()
	h, err := parseObject([]byte(hooksOf(t, text)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]handlerInfo{}
	eachHandler(h, func(ev string, _ *string, hi handlerInfo) { out[ev] = append(out[ev], hi) })
	return out
}

// TestExecFormForwarders: with Form exec every forwarder is {"command": <hookc>, "args":
// [...]} — hookc's --timeout in args, SessionEnd without a timeout of its own keeping
// args [] (still the exec form) — the form is recorded, the daemon's resync keeps it,
// re-installing in the shell form switches back (and says so), and uninstall recognises
// exec-form forwarders as hookd's and gives the original back.
func TestExecFormForwarders(t *testing.T) {
	w := newWorld(t, mixed)
	o := w.opts()
	o.Form = FormExec
	w.installWith(o)
	s := w.read(w.settings)
	hs := handlersOf(t, s)
	for _, ev := range []string{"PreToolUse", "SessionEnd", "FileChanged"} {
		if len(hs[ev]) == 0 {
			t.Fatalf("no %s handler:\n%s", ev, s)
		}
		for _, hi := range hs[ev] {
			if hi.Type == "prompt" || hi.Type == "agent" {
				continue
			}
			if hi.Command != fwd || hi.Args == nil || !settings.IsForwarder(hi.Command, hi.Args) {
				t.Errorf("%s: not an exec-form forwarder: %+v", ev, hi)
			}
			switch ev {
			case "PreToolUse": // the moved guard's 900 s + 30 s margin; hookc 10 s less
				if !reflect.DeepEqual(hi.Args, []string{"--timeout", "920s"}) || hi.Timeout == nil || *hi.Timeout != 930 {
					t.Errorf("PreToolUse: args %q timeout %v", hi.Args, hi.Timeout)
				}
			case "SessionEnd": // the moved hook asked for 20 s: carried over
				if !reflect.DeepEqual(hi.Args, []string{"--timeout", "18s"}) || hi.Timeout == nil || *hi.Timeout != 20 {
					t.Errorf("SessionEnd: args %q timeout %v", hi.Args, hi.Timeout)
				}
			}
		}
	}
	if strings.Contains(s, "hookc --timeout") {
		t.Errorf("a shell-form forwarder in an exec-form install:\n%s", s)
	}
	if h := w.read(w.hookd); !strings.Contains(h, `"forwarder_form": "exec"`) || !strings.Contains(h, `"forwarder": "`+fwd+`"`) {
		t.Errorf("hookd's file does not record the exec form:\n%s", h)
	}

	// The daemon's resync keeps the form (it plans from the record, not from Options).
	p, err := PlanResync(w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if p.Changed() {
		t.Fatalf("resync of an exec-form install changed it:\n%s", p.Diff())
	}
	// Without a SessionEnd timeout of its own, SessionEnd's exec-form forwarder has args [].
	h := regexp.MustCompile(`("command": "bye"),\s*"timeout": 20`).ReplaceAllString(w.read(w.hookd), "$1")
	if !strings.Contains(h, `"command": "bye"}`) && !strings.Contains(h, `"command": "bye"`+"\n") {
		t.Fatalf("SessionEnd's timeout not removed:\n%s", h)
	}
	if err := os.WriteFile(w.hookd, []byte(h), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err = PlanResync(w.opts()); err != nil || p.Apply() != nil {
		t.Fatal(err)
	}
	for _, hi := range handlersOf(t, w.read(w.settings))["SessionEnd"] {
		if hi.Command != fwd || hi.Args == nil || len(hi.Args) != 0 || hi.Timeout != nil {
			t.Errorf("SessionEnd without a timeout: %+v (%s)", hi, w.read(w.settings))
		}
	}

	// Back to the shell form: said, and every forwarder a command line again.
	p = w.install()
	if !strings.Contains(strings.Join(p.Summary, "\n"), "from the exec form to the shell form") {
		t.Errorf("summary does not say the form changed: %q", p.Summary)
	}
	for ev, hs := range handlersOf(t, w.read(w.settings)) {
		for _, hi := range hs {
			if hi.Args != nil {
				t.Errorf("%s: still exec form after a shell-form install: %+v", ev, hi)
			}
		}
	}
	if strings.Contains(w.read(w.hookd), "forwarder_form") {
		t.Errorf("the shell form is recorded as the default (no field):\n%s", w.read(w.hookd))
	}
	o = w.opts()
	o.Form = FormExec
	w.installWith(o)
	w.uninstall()
	// Uninstall gives every hook back (SessionEnd's as edited in hookd's file above) and
	// leaves no exec-form forwarder.
	got := w.read(w.settings)
	if strings.Contains(got, fwd) {
		t.Fatalf("uninstall left an exec-form forwarder:\n%s", got)
	}
	for _, hook := range []string{`"/p/h/guard.sh"`, `"bye"`, `"direnv-hook"`, `"http://127.0.0.1:9/h"`} {
		if !strings.Contains(got, hook) {
			t.Fatalf("uninstall did not give %s back:\n%s", hook, got)
		}
	}
}

// TestExecFormRefusals: the exec form takes hookc's path unquoted (Claude Code starts
// "command" as one executable); a shell-quoted one or another program is refused.
func TestExecFormRefusals(t *testing.T) {
	w := newWorld(t, mixed)
	for _, f := range []string{"'/opt/my hookd/hookc'", "/opt/hookd/bin/hookc --timeout 5s", "/usr/bin/env"} {
		o := w.opts()
		o.Form, o.Forwarder = FormExec, f
		if _, err := PlanInstall(o); err == nil {
			t.Errorf("exec form with forwarder %q: no error", f)
		}
	}
	o := w.opts()
	o.Form = "powershell"
	if _, err := PlanInstall(o); err == nil {
		t.Errorf("unknown form accepted")
	}
	// A path with a space is fine in the exec form (no shell reads it).
	o = w.opts()
	o.Form, o.Forwarder = FormExec, "/opt/my hookd/hookc"
	if _, err := PlanInstall(o); err != nil {
		t.Errorf("exec form with a space in the path: %v", err)
	}
}

// TestManagedDropInExecForm: the managed drop-in in the exec form is hookd's (a
// re-install and an uninstall recognise it).
func TestManagedDropInExecForm(t *testing.T) {
	dropIn := filepath.Join(t.TempDir(), "managed-settings.d", DropInName)
	o := Options{Scope: settings.KindManaged, Settings: dropIn, Forwarder: fwd, Form: FormExec}
	p, err := PlanInstall(o)
	if err != nil || p.Apply() != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(dropIn)
	if !isOurDropIn(data) || !strings.Contains(string(data), `"args": [`) || strings.Contains(string(data), "hookc --timeout") {
		t.Fatalf("exec-form drop-in:\n%s", data)
	}
	if p, err = PlanInstall(o); err != nil || p.Changed() {
		t.Fatalf("re-install changed the drop-in: %v", err)
	}
	if p, err = PlanUninstall(o); err != nil || p.Apply() != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if _, err := os.Stat(dropIn); !os.IsNotExist(err) {
		t.Errorf("drop-in still there: %v", err)
	}
}
