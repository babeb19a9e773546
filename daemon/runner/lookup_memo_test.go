package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/daemon/runner/lookup"
)

// primeLookup makes the answer of `npm root -g` for env and dir known, as an analysis does.
func primeLookup(t *testing.T, env []string, dir string) {
	t.Helper()
	for _, cmd := range []string{"npm root -g", "npm root --global"} {
		if _, err := lookup.Cached(cmd, env, dir, true); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMemoLookupsRewrite: what a memoised command becomes, checked against the real sh —
// the rewritten command's words are the words sh gives the original — and what is left
// alone.
func TestMemoLookupsRewrite(t *testing.T) {
	for _, root := range []string{"", `/odd dir/with "quotes" $HOME and \back`} {
		dir, env, groot := fakeNpm(t, root)
		if root == "" {
			root = groot
		}
		primeLookup(t, env, dir)
		for _, c := range []struct {
			cmd  string
			memo bool
		}{
			{`printf '<%s>' $(npm root -g)/pkg/hook.js`, !strings.ContainsAny(root, " \"$")},
			{`printf '<%s>' "$(npm root -g)/pkg/hook.js"`, true},
			{`printf '<%s>' "$(npm root --global)"/x "$(npm root -g)"`, true},
			{`X=1 printf '<%s>' "$(npm root -g)"`, true},
			{`printf '<%s>' "$(npm root -g)" | cat`, false},              // not a simple command
			{`printf '<%s>' "$(npm root -g)" "$(npm prefix -g)"`, false}, // not a lookup
			{`printf '<%s>' "$(npm root)"`, false},
			{"printf '<%s>' \"`npm root -g`\"", false},
			{`printf '<%s>' plain`, false},
		} {
			spec := ProcSpec{Command: c.cmd, Dir: dir, Env: env}
			got := memoLookups(spec, false).Command
			if (got != c.cmd) != c.memo {
				t.Errorf("root %q: %s → %s (memoised: %v, want %v)", root, c.cmd, got, got != c.cmd, c.memo)
				continue
			}
			if !c.memo {
				continue
			}
			if strings.Contains(got, "npm") {
				t.Errorf("%s → %s: a lookup is left", c.cmd, got)
			}
			want := shOut(t, c.cmd, env, dir)
			if out := shOut(t, got, env, dir); out != want || !strings.Contains(out, root) {
				t.Errorf("root %q: %s\n  sh gives %q\n  memoised %s gives %q", root, c.cmd, want, got, out)
			}
		}
	}
}

func shOut(t *testing.T, cmd string, env []string, dir string) string {
	t.Helper()
	c := exec.Command("/bin/sh", "-c", cmd)
	c.Env, c.Dir = env, dir
	out, err := c.Output()
	if err != nil {
		t.Fatalf("sh -c %s: %v", cmd, err)
	}
	return string(out)
}

// TestMemoLookupsUnknownAnswer: until the answer is known the command runs as written.
func TestMemoLookupsUnknownAnswer(t *testing.T) {
	dir, env, _ := fakeNpm(t, "")
	spec := ProcSpec{Command: "node $(npm root -g)/pkg/hook.js", Dir: dir, Env: append(env, "UNIQUE="+t.Name())}
	if got := memoLookups(spec, false).Command; got != spec.Command {
		t.Fatalf("memoised with no answer known: %s", got)
	}
	// It asked npm in the background; that npm writes in dir, which the test removes.
	poll(t, 30*time.Second, "the background lookup's end", func() bool { return !lookup.Running("npm root -g", spec.Env, dir) })
}

// TestPoolMemoisesLookup: through the pool, a hook written node $(npm root -g)/… runs npm
// at its first event (as written, while hookd asks npm itself) and never again; every
// event's output is what a cold run of the command as written gives. With
// HOOKD_MEMO_LOOKUPS=off npm runs at every event.
func TestPoolMemoisesLookup(t *testing.T) {
	for _, off := range []bool{false, true} {
		dir, env, _ := fakeNpm(t, "")
		if _, err := lookPath("node", env); err != nil {
			t.Fatal("node not installed: this test needs it")
		}
		p := newTestPool(t, PoolOptions{NoMemoLookups: off, NoPrewarm: true})
		spec := ProcSpec{Command: "node $(npm root -g)/pkg/hook.js", Dir: dir, Env: env, Timeout: 30 * time.Second, Stdin: []byte(`{"n":1}`)}
		calls := func() int {
			b, _ := os.ReadFile(filepath.Join(dir, "calls"))
			return strings.Count(string(b), "x")
		}
		cold := ExecRunner{}.Run(context.Background(), spec)
		primeLookup(t, env, dir) // as the analysis does
		base := calls()
		for i := range 3 {
			r := p.Run(context.Background(), spec)
			if r.ExitCode != cold.ExitCode || string(r.Stdout) != string(cold.Stdout) || string(r.Stderr) != string(cold.Stderr) {
				t.Fatalf("off=%v event %d: %+v, cold %+v", off, i, r, cold)
			}
		}
		ran := calls() - base
		if want := map[bool]int{false: 0, true: 3}[off]; ran != want {
			t.Fatalf("HOOKD_MEMO_LOOKUPS off=%v: npm ran %d times for 3 events, want %d", off, ran, want)
		}
	}
}

// TestMemoLookupsNpmrcEdit: an edit of the user's or the project's .npmrc (which can set
// npm's prefix) makes the known answer unknown, so the command runs as written until npm
// has been asked again.
func TestMemoLookupsNpmrcEdit(t *testing.T) {
	dir, env, _ := fakeNpm(t, "")
	spec := ProcSpec{Command: "node $(npm root -g)/pkg/hook.js", Dir: filepath.Join(dir, "groot"), Env: env}
	for _, rc := range []string{filepath.Join(dir, ".npmrc"), filepath.Join(dir, "groot", ".npmrc")} { // HOME=dir
		primeLookup(t, env, spec.Dir)
		if got := memoLookups(spec, false).Command; got == spec.Command {
			t.Fatalf("not memoised with the answer known")
		}
		if err := os.WriteFile(rc, []byte("prefix=/elsewhere\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := memoLookups(spec, false).Command; got != spec.Command {
			t.Fatalf("after writing %s: still memoised as %s", rc, got)
		}
		// That asked npm again in the background; that npm writes in dir, which the test
		// removes (under load the removal came first: "directory not empty").
		poll(t, 30*time.Second, "the background lookup's end", func() bool { return !lookup.Running("npm root -g", spec.Env, spec.Dir) })
	}
}

// FuzzMemoLookups: whatever the command, a rewrite is the command sh would run — its words,
// as the analysis's parser (mvdan.cc/sh) reads them with no substitution allowed, are the
// words of the original with the lookup's answer in place — and there is no lookup left
// in it. The answer is fixed and known (the cache is primed), with characters that need
// quoting.
func FuzzMemoLookups(f *testing.F) {
	for _, s := range []string{
		`node $(npm root -g)/pkg/hook.js`, `node "$(npm root -g)/pkg/hook.js"`, `X=1 node "$(npm root --global)"/a "$(npm root -g)"`,
		`node $(npm root -g)/a | cat`, "node `npm root -g`/a", `node "$(npm root -g)"'/x'"$HOME"`, `node $(npm root -g) $(npm root -g)`,
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	root := dir + `/odd "root" $x \y`
	env := []string{"PATH=" + dir + "/bin", "HOME=" + dir}
	for _, cmd := range []string{"npm root -g", "npm root --global"} {
		lookup.Seed(cmd, env, dir, root, time.Hour)
	}
	lookup := func(cmd string) (string, bool) { return root, lookupCommands[cmd] }
	f.Fuzz(func(t *testing.T, cmd string) {
		got := memoLookups(ProcSpec{Command: cmd, Dir: dir, Env: env}, false).Command
		if got == cmd {
			return
		}
		want, ok := shellWords(cmd, env, lookup)
		if !ok {
			t.Fatalf("rewrote %q, which the analysis does not accept, to %q", cmd, got)
		}
		words, ok := shellWords(got, env, nil)
		if !ok || !slices.Equal(words, want) {
			t.Fatalf("%q → %q: words %q (ok %v), want %q", cmd, got, words, ok, want)
		}
	})
}
