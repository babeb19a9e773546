package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookd/hookd/test/testutil"
)

// TestAnalyzeNodeEval: `node -e CODE` is prewarmed by default when CODE, or a module it
// requires by a literal relative path, visibly reads stdin, and nothing Node runs or loads
// before the code (a preload option, NODE_OPTIONS) could do otherwise; the rule is
// textual, so code that writes a file before reading stdin is accepted (its documented
// limit).
func TestAnalyzeNodeEval(t *testing.T) {
	dir := nodeEvalFixture(t)
	ecc, err := os.ReadFile("testdata/ecc-stop-hook.txt") // ECC's Stop hook (MIT), as its installer writes it
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "CODE=" + nodeReads, "SPACEY=process.stdin; 1"}
	tests := nodeEvalCases(string(ecc))
	for _, tt := range tests {
		e := env
		if tt.env != nil {
			e = tt.env
		}
		safe, reason, script := AnalyzeCommand(ProcSpec{Command: tt.cmd, Args: tt.args, Dir: dir, Env: e})
		want := ""
		if tt.script != "" {
			want = filepath.Join(dir, tt.script)
		}
		name := tt.cmd
		if len(name) > 120 {
			name = name[:120] + "…"
		}
		if safe != tt.safe || script != want || (safe && reason != "node") || !strings.Contains(reason, tt.because) {
			t.Errorf("%s %q: safe=%v (%s) script=%q; want safe=%v (%s) script=%q", name, tt.args, safe, reason, script, tt.safe, tt.because, want)
		}
	}
}

// nodeEvalCase is one row of TestAnalyzeNodeEval.
type nodeEvalCase struct {
	cmd     string
	args    []string
	env     []string // replaces env
	safe    bool
	script  string
	because string // part of the reason when not safe
}

// nodeReads is -e code that visibly reads stdin.
const nodeReads = `JSON.parse(require('fs').readFileSync(0,'utf8'))`

// nodeEvalFixture makes TestAnalyzeNodeEval's directory: modules that read stdin or not.
func nodeEvalFixture(t *testing.T) string {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"reads.js":           "module.exports = JSON.parse(require('fs').readFileSync(0, 'utf8'))\n",
		"quiet.js":           "module.exports = 1\n",
		"evil.js":            "require('fs').writeFileSync('pwned', '')\n",
		"scripts/hooks/x.js": "console.log(1)\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// nodeEvalCases are TestAnalyzeNodeEval's rows, accepted then not; ecc is ECC's Stop hook.
func nodeEvalCases(ecc string) []nodeEvalCase {
	const reads = nodeReads
	return []nodeEvalCase{
		{cmd: `node -e "` + reads + `"`, safe: true},
		{cmd: `nodejs -e "` + reads + `"`, safe: true},
		{cmd: `node --eval "` + reads + `"`, safe: true},
		{cmd: `node --eval="` + reads + `"`, safe: true},
		{cmd: `node --no-warnings -e "process.stdin.on('data', d => {})"`, safe: true},
		{cmd: `node --stack-trace-limit=50 -e "process.stdin.on('data', d => {})"`, safe: true},
		{cmd: `node -e "` + reads + `" --no-deprecation`, safe: true},
		{cmd: `node -e "` + reads + `" node scripts/hooks/x.js a b`, safe: true, script: "scripts/hooks/x.js"},
		{cmd: `node -e "` + reads + `" -- -r ./evil.js`, safe: true, script: "evil.js"}, // after --: argv
		{cmd: `node --input-type=module -e "import fs from 'fs'; fs.readFileSync(0)"`, safe: true},
		{cmd: `node --input-type module -e "import fs from 'fs'; fs.readFileSync(0)"`, safe: true},
		{cmd: `node -e "require('./reads.js')"`, safe: true, script: "reads.js"},
		{cmd: `node -e "require('./reads')"`, safe: true, script: "reads.js"},
		{cmd: `node -e "require('./quiet.js'); process.stdin.resume()"`, safe: true, script: "quiet.js"},
		{cmd: `node -e "$CODE"`, safe: true}, // the environment is part of the prewarm key
		{cmd: "node", args: []string{"-e", reads}, safe: true},
		{cmd: ecc, safe: true},
		// The documented limit: the rule is what the code visibly does, not in what order.
		{cmd: `node -e "require('fs').writeFileSync('x', ''); ` + reads + `"`, safe: true},
		{cmd: `node -e "` + reads + `"`, env: []string{"NODE_OPTIONS=--max-old-space-size=100"}, safe: true},

		{cmd: `node --enable-source-maps --eval "` + reads + `"`, safe: true},
		{cmd: `node -e "` + reads + `" --redirect-warnings w.txt -r ./evil.js`, because: "looks like an option"}, // Node: w.txt is the value, -r preloads

		{cmd: `node -e "console.log(1)"`, because: "does not visibly read stdin"},
		{cmd: `node -e "require('./quiet.js')"`, script: "quiet.js", because: "does not visibly read stdin"},
		{cmd: `node -e "const s=require('path').resolve(process.argv[1]);require(s)" node scripts/hooks/x.js`, script: "scripts/hooks/x.js", because: "does not visibly read stdin"}, // ECC's dispatch shape
		{cmd: `node -e "require('some-package')"`, because: "does not visibly read stdin"},
		{cmd: `node -r ./evil.js -e "` + reads + `"`, because: "-r runs or loads code"},
		{cmd: `node -e "` + reads + `" -r ./evil.js`, because: "-r runs or loads code"},
		{cmd: `node --require=./evil.js -e "` + reads + `"`, because: "--require"},
		{cmd: `node --import ./evil.mjs -e "` + reads + `"`, because: "--import"},
		{cmd: `node --loader ./evil.mjs -e "` + reads + `"`, because: "--loader"},
		{cmd: `node --env-file=.env -e "` + reads + `"`, because: "--env-file"},
		{cmd: `node -r./evil.js -e "` + reads + `"`, because: "unrecognised short option"},
		{cmd: `node -e "` + reads + `" x -r ./evil.js`, because: "looks like an option"},
		{cmd: `NODE_OPTIONS='-r ./evil.js' node -e "` + reads + `"`, because: "NODE_OPTIONS"},
		{cmd: `node -e "` + reads + `"`, env: []string{"NODE_OPTIONS=--require ./evil.js"}, because: "NODE_OPTIONS --require"},
		{cmd: `node -e "` + reads + `"`, env: []string{"NODE_OPTIONS=--import=./evil.mjs"}, because: "NODE_OPTIONS --import"},
		{cmd: `node -p "` + reads + `"`, because: "not a script file"},
		{cmd: `node --print "` + reads + `"`, because: "not a script file"},
		{cmd: `node -pe "` + reads + `"`, because: "script file not found"}, // scriptArg: -pe is not -p
		{cmd: `node -e "` + reads + `" -p 1`, because: "-p"},
		{cmd: `node -i -e "` + reads + `"`, because: "-i"},
		{cmd: `node -e=x`, because: "not a script file"},
		{cmd: `node -e=x -e "` + reads + `"`, because: "unrecognised short option -e=x"},
		{cmd: `node -e "` + reads + `" -e "console.log(1)"`, because: "more than one -e"},
		{cmd: `node -e`, because: "-e without a value"},
		{cmd: `node -e ""`, because: "empty -e code"},
		{cmd: `node -e "$UNSET"`, because: "empty -e code"},
		{cmd: `bun -e "` + reads + `"`, because: "bunfig.toml"},
		{cmd: `node -e $SPACEY`, because: "not a simple command"}, // would be field-split
		{cmd: `node -e "$(cat code.js)"`, because: "not a simple command"},
		{cmd: "node -e \"`cat code.js`\"", because: "not a simple command"},
		{cmd: "node -e \"process.stdin; `${x}`\"", because: "not a simple command"}, // a template literal is sh's command substitution
		{cmd: `node -e "` + reads + `" | cat`, because: "not a simple command"},
		{cmd: `node - < code.js`, because: "not a simple command"},
		{cmd: `node -`, because: "not a script file"},
	}
}

// TestPoolNodeEvalWarm: a `node -e` hook that reads stdin is served by a prewarmed process
// from its second event on, with what a cold run gives (stdin, argv, the working directory
// its relative require resolves from); an edit of the module it requires discards the
// prewarmed process, as a script's edit does.
func TestPoolNodeEvalWarm(t *testing.T) {
	dir := t.TempDir()
	if _, err := lookPath("node", testEnv(dir)); err != nil {
		t.Skip("node not installed")
	}
	lib := filepath.Join(dir, "lib.js")
	writeLib := func(v string) {
		if err := os.WriteFile(lib, []byte("module.exports = s => '"+v+"' + JSON.parse(s).n\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeLib("a")
	code := `const raw=require('fs').readFileSync(0,'utf8');const f=require('./lib.js');` +
		`console.log(f(raw), process.argv.slice(1).join(','), process.cwd());console.error('err')`
	spec := ProcSpec{Command: `node -e "` + code + `" x y`, Dir: dir, Env: testEnv(dir), Timeout: 20 * time.Second,
		HookID: "h", HookRev: "1", Stdin: []byte(`{"n":1}`)}
	if safe, reason, script := AnalyzeCommand(spec); !safe || script != lib {
		t.Fatalf("analysis: safe=%v (%s) script=%q", safe, reason, script)
	}
	cold := ExecRunner{}.Run(context.Background(), spec)
	if got, want := string(cold.Stdout), "a1 x,y "+dir+"\n"; got != want || cold.ExitCode != 0 {
		t.Fatalf("cold: exit %d stdout %q (want %q) stderr %q", cold.ExitCode, got, want, cold.Stderr)
	}
	p := newTestPool(t, PoolOptions{})
	for i := range 3 {
		r := p.Run(context.Background(), spec)
		if string(r.Stdout) != string(cold.Stdout) || string(r.Stderr) != string(cold.Stderr) || r.ExitCode != cold.ExitCode {
			t.Fatalf("event %d: exit %d %q %q; cold %d %q %q", i, r.ExitCode, r.Stdout, r.Stderr, cold.ExitCode, cold.Stdout, cold.Stderr)
		}
		waitIdle(t, p, 1)
	}
	if h, m := stat(p, "hits"), stat(p, "misses"); h != 2 || m != 1 {
		t.Fatalf("hits %d misses %d, want 2 and 1 (auto policy should prewarm node -e reading stdin)", h, m)
	}
	old := p.IdlePIDs()
	writeLib("b")
	if r := p.Run(context.Background(), spec); !strings.HasPrefix(string(r.Stdout), "b1 ") {
		t.Fatalf("after lib.js changed: %q (a prewarmed process of the old module answered)", r.Stdout)
	}
	if stat(p, "discarded") != 1 || stat(p, "hits") != 2 {
		t.Fatalf("discarded %d hits %d after lib.js changed", stat(p, "discarded"), stat(p, "hits"))
	}
	poll(t, 10*time.Second, "old process gone", func() bool { return testutil.ProcessGone(old[0]) })
}

// FuzzNodeEvalCode: whatever the words, an accepted -e invocation has one -e whose code is
// one of the words, operands that are the words' tail, and — checked by prefix, wider than
// the parser's exact names — no word in an option's place that preloads, prints, reads
// code elsewhere or is a second -e, and no option-like operand unless after --.
func FuzzNodeEvalCode(f *testing.F) {
	for _, s := range []string{
		"-e process.stdin", "--no-warnings -e x node a.js", "-r ./e.js -e x", "-e x -r ./e.js",
		"-e x -- -r y", "--input-type module -e x", "-e x --redirect-warnings w -r y", "-pe x",
		"--eval=x", "-e x -e y", "-e", "-C c -e x", "--title -r -e x", "-e -r",
	} {
		f.Add(s)
	}
	valued := map[string]bool{"-e": true, "--eval": true, "--input-type": true, "--title": true, "--conditions": true, "-C": true}
	banned := []string{"-r", "--require", "--import", "--loader", "--experimental-loader", "--env-file", "-p", "--print", "-i", "--interactive", "-c", "--check", "--test", "-e=", "-pe"}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, " ")
		code, operands, why := nodeEvalCode(args)
		if why != "" || code == "" {
			return
		}
		start := len(args) - len(operands)
		if start < 0 || !slices.Equal(args[start:], operands) || !(slices.Contains(args, code) || slices.Contains(args, "--eval="+code)) {
			t.Fatalf("%q: code %q operands %q", args, code, operands)
		}
		evals := 0
		for k := 0; k < start; k++ {
			a := args[k]
			if a == "--" {
				return
			}
			if k > 0 && valued[args[k-1]] {
				continue // the value of the option before
			}
			if a == "-e" || a == "--eval" || strings.HasPrefix(a, "--eval=") {
				evals++
			}
			for _, b := range banned {
				if strings.HasPrefix(a, b) && !strings.HasPrefix(a, "--eval") {
					t.Fatalf("%q accepted with %q before the operands", args, a)
				}
			}
		}
		for _, o := range operands {
			if strings.HasPrefix(o, "-") {
				t.Fatalf("%q accepted with option-like operand %q", args, o)
			}
		}
		if evals != 1 {
			t.Fatalf("%q accepted with %d -e", args, evals)
		}
	})
}
