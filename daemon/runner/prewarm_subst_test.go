package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/lookup"
)

func TestShellWordsLookup(t *testing.T) {
	env := []string{"HOME=/h"}
	var calls []string
	lookup := func(cmd string) (string, bool) {
		if !lookupCommands[cmd] {
			t.Errorf("lookup called with %q", cmd)
		}
		calls = append(calls, cmd)
		return "/g/lib", true
	}
	tests := []struct {
		in   string
		want []string
	}{
		{`node $(npm root -g)/pkg/hook.js`, []string{"node", "/g/lib/pkg/hook.js"}},
		{`node $(npm root --global)/pkg/hook.js`, []string{"node", "/g/lib/pkg/hook.js"}},
		{`node "$(npm root -g)/pkg/hook.js" x`, []string{"node", "/g/lib/pkg/hook.js", "x"}},
		{`node "$(npm root -g)"/pkg/hook.js`, []string{"node", "/g/lib/pkg/hook.js"}},
		{`node $(  npm   root  -g  )/h.js`, []string{"node", "/g/lib/h.js"}},
		{`X=$(npm root -g) node h.js`, []string{"X=/g/lib", "node", "h.js"}},
		// In single quotes, or escaped, it is text, not a substitution.
		{`node '$(npm root -g)/h.js'`, []string{"node", "$(npm root -g)/h.js"}},
		{`node "\$(npm root -g)/h.js"`, []string{"node", "$(npm root -g)/h.js"}},

		{`node $(npm root -g; rm x)/h.js`, nil},
		{`node $(npm root -g && rm x)/h.js`, nil},
		{`node $(npm root -g > f)/h.js`, nil},
		{`node $(npm root -g 2>/dev/null)/h.js`, nil},
		{`node $(npm root -g | x)/h.js`, nil},
		{`node $(npm root -g &)/h.js`, nil},
		{`node $(! npm root -g)/h.js`, nil},
		{`node $(npm root -g # c` + "\n" + `)/h.js`, nil},
		{`node $(npm root)/h.js`, nil},
		{`node $(npm root -g x)/h.js`, nil},
		{`node $(npm -g root)/h.js`, nil},
		{`node $(npm install -g x)/h.js`, nil},
		{`node $(rm -rf x)/h.js`, nil},
		{`node $(npm root -g $(x))/h.js`, nil},
		{`node $(npm root $(echo -g))/h.js`, nil},
		{`node $($(npm root -g))/h.js`, nil},
		{`node $(X=1 npm root -g)/h.js`, nil},
		{`node $("npm" root -g)/h.js`, nil},
		{`node $(npm\ root -g)/h.js`, nil},
		{`node $(npm root -$G)/h.js`, nil},
		{`node $((1+2))/h.js`, nil},
		{`node $(( npm root -g ))/h.js`, nil},
		{`node $( (npm root -g) )/h.js`, nil},
		{"node `npm root -g`/h.js", nil},
		{`node "` + "`npm root -g`" + `/h.js"`, nil},
		{`node $(npm root -g)/h.js; rm x`, nil},
		{`node $(npm root -g)/h.js > f`, nil},
		{`node $(npm root -g)/*.js`, nil},
	}
	for _, tt := range tests {
		calls = nil
		checkWords(t, tt.in, env, lookup, tt.want)
		if strings.Contains(tt.in, `$(npm root -g)/h.js'`) || strings.Contains(tt.in, `\$(`) {
			if len(calls) > 0 {
				t.Errorf("%q: literal text ran a lookup", tt.in)
			}
		}
	}
	// Without a lookup nothing is substituted; a value that would be field-split or
	// globbed is accepted only in double quotes.
	checkWords(t, `node $(npm root -g)/h.js`, env, nil, nil)
	spacey := func(string) (string, bool) { return "/x y/lib", true }
	checkWords(t, `node $(npm root -g)/h.js`, env, spacey, nil)
	checkWords(t, `node "$(npm root -g)/h.js"`, env, spacey, []string{"node", "/x y/lib/h.js"})
	failing := func(string) (string, bool) { return "", false }
	checkWords(t, `node $(npm root -g)/h.js`, env, failing, nil)
}

// fakeNpm makes a scratch directory whose bin/npm is a real executable printing out for
// `npm root -g` (and failing otherwise), and counts its runs in dir/calls. It returns
// the directory, an environment with bin first on PATH, and the global root dir/groot,
// which holds pkg/hook.js (reads stdin) and pkg/quiet.js (does not).
func fakeNpm(t *testing.T, out string) (dir string, env []string, root string) {
	t.Helper()
	dir = t.TempDir()
	root = filepath.Join(dir, "groot")
	if out == "" {
		out = root
	}
	files := map[string]string{
		"bin/npm": "#!/bin/sh\necho x >> '" + dir + "/calls'\n" +
			"case \"$*\" in 'root -g'|'root --global') printf '%s\\n' '" + out + "' ;; *) exit 1 ;; esac\n",
		"groot/pkg/hook.js": "let s='';process.stdin.on('data',d=>s+=d);" +
			"process.stdin.on('end',()=>{console.log(JSON.stringify({len:s.length,in:JSON.parse(s)}));process.exit(2)});\n",
		"groot/pkg/quiet.js": "console.log('hi')\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env = []string{"PATH=" + filepath.Join(dir, "bin") + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + dir}
	return dir, env, root
}

// npmCalls is how many times fakeNpm's npm ran.
func npmCalls(t *testing.T, dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "calls"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

func TestAnalyzeNpmRoot(t *testing.T) {
	dir, env, root := fakeNpm(t, "")
	spec := ProcSpec{Command: "node $(npm root -g)/pkg/hook.js", Dir: dir, Env: append(env, "CLAUDE_CODE_SESSION_ID=s1")}
	safe, reason, script := AnalyzeCommand(spec)
	if want := filepath.Join(root, "pkg/hook.js"); !safe || script != want {
		t.Fatalf("safe=%v (%s) script=%q; want safe, %q", safe, reason, script, want)
	}
	// Another session of the same setup reuses the answer.
	spec.Env = append(env, "CLAUDE_CODE_SESSION_ID=s2")
	if safe, reason, _ := AnalyzeCommand(spec); !safe {
		t.Fatalf("second session: %s", reason)
	}
	if n := npmCalls(t, dir); n != 1 {
		t.Fatalf("npm ran %d times, want 1 (cached)", n)
	}
	// A script that does not read stdin is not prewarmed; it is still watched.
	spec.Command = `node "$(npm root --global)/pkg/quiet.js"`
	if safe, _, script := AnalyzeCommand(spec); safe || script != filepath.Join(root, "pkg/quiet.js") {
		t.Fatalf("quiet.js: safe=%v script=%q", safe, script)
	}
	// npm root without -g is not a lookup the analysis runs.
	spec.Command = "node $(npm root)/pkg/hook.js"
	if safe, _, _ := AnalyzeCommand(spec); safe || npmCalls(t, dir) != 2 {
		t.Fatalf("npm root without -g: safe=%v, npm ran %d times", safe, npmCalls(t, dir))
	}
}

func TestAnalyzeNpmRootFails(t *testing.T) {
	tests := []struct{ name, out, reason string }{
		{"two lines", "/a\n/b", "more than one line"},
		{"space", "/a b", "not a simple command"},
	}
	for _, tt := range tests {
		dir, env, _ := fakeNpm(t, tt.out)
		spec := ProcSpec{Command: "node $(npm root -g)/pkg/hook.js", Dir: dir, Env: env}
		if safe, reason, _ := AnalyzeCommand(spec); safe || !strings.Contains(reason, tt.reason) {
			t.Errorf("%s: safe=%v reason %q, want %q", tt.name, safe, reason, tt.reason)
		}
	}
	// npm failing, printing nothing, missing.
	for _, tt := range []struct{ body, reason string }{{"exit 3", "exit status 3"}, {"exit 0", "printed nothing"}, {"", "not found"}} {
		dir, env, _ := fakeNpm(t, "")
		if tt.body == "" {
			env[0] = "PATH=/nonexistent"
		} else if err := os.WriteFile(filepath.Join(dir, "bin/npm"), []byte("#!/bin/sh\n"+tt.body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		spec := ProcSpec{Command: "node $(npm root -g)/pkg/hook.js", Dir: dir, Env: env}
		if safe, r, _ := AnalyzeCommand(spec); safe || !strings.Contains(r, "$(npm root -g) gave no usable path") || !strings.Contains(r, tt.reason) {
			t.Errorf("npm %q: safe=%v reason %q, want %q", tt.body, safe, r, tt.reason)
		}
	}
}

func TestPoolNpmRootWarm(t *testing.T) {
	dir, env, _ := fakeNpm(t, "")
	if _, err := lookPath("node", env); err != nil {
		t.Skip("node not installed")
	}
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "node $(npm root -g)/pkg/hook.js", Dir: dir, Env: env, Timeout: 30 * time.Second}
	for i := range 4 {
		spec.Stdin = []byte(`{"n":` + strconv.Itoa(i) + `}`)
		cold := ExecRunner{}.Run(context.Background(), spec)
		r := p.Run(context.Background(), spec)
		if r.ExitCode != 2 || cold.ExitCode != 2 || !bytes.Equal(r.Stdout, cold.Stdout) || !bytes.Equal(r.Stderr, cold.Stderr) ||
			!strings.Contains(string(r.Stdout), `"n":`+strconv.Itoa(i)) {
			t.Fatalf("event %d:\ncold %d %q %q\ngot  %d %q %q", i, cold.ExitCode, cold.Stdout, cold.Stderr, r.ExitCode, r.Stdout, r.Stderr)
		}
		if i == 0 {
			// The first event ran cold without waiting for the analysis's own npm root -g,
			// which goes on in the background; the next event finds its answer.
			poll(t, 30*time.Second, "the lookup's answer", func() bool {
				_, err := lookup.Cached("npm root -g", env, dir, false)
				return err == nil
			})
			continue
		}
		waitIdle(t, p, 1)
	}
	if h, m := stat(p, "hits"), stat(p, "misses"); h != 2 || m != 1 {
		t.Fatalf("hits %d misses %d, want 2 and 1 (auto policy should prewarm node $(npm root -g)/…)", h, m)
	}
}

// TestPoolEventNeverWaitsForLookup: an event whose hook's analysis needs a lookup that has
// no answer yet runs cold at once — here the analysis's npm (told apart by the
// npm_config_logs_max=0 it sets) hangs until the test lets it go, while the hook's own npm
// answers — and a Warm that needs the same lookup waits for the one under way.
func TestPoolEventNeverWaitsForLookup(t *testing.T) {
	dir, env, root := fakeNpm(t, "")
	release := filepath.Join(dir, "release")
	npm := "#!/bin/sh\nif [ \"$npm_config_logs_max\" = 0 ]; then echo analysis >> '" + dir + "/calls'; while [ ! -e '" + release + "' ]; do sleep 0.05; done; fi\n" +
		"printf '%s\\n' '" + root + "'\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "npm"), []byte(npm), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := lookPath("node", env); err != nil {
		t.Fatal("node not installed: this test needs it")
	}
	p := newTestPool(t, PoolOptions{})
	spec := ProcSpec{Command: "node $(npm root -g)/pkg/hook.js", Dir: dir, Env: env, Timeout: 30 * time.Second, Stdin: []byte(`{"n":0}`)}
	done := make(chan ProcResult, 1)
	go func() { done <- p.Run(context.Background(), spec) }()
	var r ProcResult
	select { // no speed bound: the analysis's npm cannot answer before release exists
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the event waited for the analysis's lookup")
	}
	if r.ExitCode != 2 || !strings.Contains(string(r.Stdout), `"n":0`) {
		t.Fatalf("cold run: %+v", r)
	}
	if !lookup.Running("npm root -g", env, dir) { // an event that waited would have seen the lookup end (its 10 s timeout)
		t.Fatal("the event was answered after the analysis's lookup ended, not while it ran")
	}
	if n := stat(p, "spawned"); n != 0 {
		t.Fatalf("%d processes prewarmed before the analysis was done", n)
	}
	warmed := make(chan struct{})
	go func() { p.Warm(spec); close(warmed) }()
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-warmed
	waitIdle(t, p, 1) // the Warm waited for the lookup under way, then prewarmed
	if b, _ := os.ReadFile(filepath.Join(dir, "calls")); strings.Count(string(b), "analysis") != 1 {
		t.Fatalf("the analysis ran npm %d times, want once: the Warm did not wait for the lookup under way", strings.Count(string(b), "analysis"))
	}
}
