package rules

import "testing"

// benchSet is a realistic settings pool: a few dozen rules across lists.
func benchSet(b *testing.B) *Set {
	b.Helper()
	texts := []struct {
		t string
		l List
	}{
		{"Bash(rm -rf *)", Deny}, {"Bash(curl * | sh)", Deny}, {"Read(.env)", Deny}, {"Read(~/.ssh/**)", Deny},
		{"Edit(//etc/**)", Deny}, {"WebFetch(domain:*.evil.com)", Deny}, {"mcp__github__delete_repo", Deny},
		{"Bash(run_in_background:true)", Deny}, {"Agent(model:opus)", Deny},
		{"Bash(git push *)", Ask}, {"Bash(terraform apply *)", Ask}, {"Edit(.github/**)", Ask},
		{"Bash(git status)", Allow}, {"Bash(git diff *)", Allow}, {"Bash(git log *)", Allow}, {"Bash(ls *)", Allow},
		{"Bash(npm test *)", Allow}, {"Bash(npm run *)", Allow}, {"Bash(go test *)", Allow}, {"Bash(grep *)", Allow},
		{"Bash(cat *)", Allow}, {"Edit(src/**)", Allow}, {"Read", Allow}, {"WebFetch(domain:go.dev)", Allow},
		{"mcp__github", Allow},
	}
	var rs []*Rule
	for _, x := range texts {
		r, err := Parse(x.t, x.l, projectOrigin)
		if err != nil {
			b.Fatal(err)
		}
		rs = append(rs, r)
	}
	return NewSet(rs)
}

func BenchmarkEvaluateBashCompound(b *testing.B) {
	s := benchSet(b)
	c := Call{Tool: "Bash", Input: map[string]any{"command": "cd web && NODE_ENV=test timeout 60 npm test -- --watch=false 2>&1 | grep -v WARN"}, Cwd: "/proj", Home: "/home/u"}
	b.ReportAllocs()
	for b.Loop() {
		if s.Evaluate(c).Decision != None {
			b.Fatal("unexpected decision") // cd is not allowed
		}
	}
}

func BenchmarkEvaluateBashSimple(b *testing.B) {
	s := benchSet(b)
	c := Call{Tool: "Bash", Input: map[string]any{"command": "git status"}, Cwd: "/proj"}
	b.ReportAllocs()
	for b.Loop() {
		if s.Evaluate(c).Decision != DecisionAllow {
			b.Fatal("want allow")
		}
	}
}

func BenchmarkEvaluateEdit(b *testing.B) {
	s := benchSet(b)
	c := Call{Tool: "Edit", Input: map[string]any{"file_path": "/proj/src/app/main.go"}, Cwd: "/proj", Home: "/home/u"}
	b.ReportAllocs()
	for b.Loop() {
		if s.Evaluate(c).Decision != DecisionAllow {
			b.Fatal("want allow")
		}
	}
}

func BenchmarkEvaluateWebFetch(b *testing.B) {
	s := benchSet(b)
	c := Call{Tool: "WebFetch", Input: map[string]any{"url": "https://go.dev/doc/"}}
	b.ReportAllocs()
	for b.Loop() {
		if s.Evaluate(c).Decision != DecisionAllow {
			b.Fatal("want allow")
		}
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("Bash(git push * --force)", Deny, projectOrigin); err != nil {
			b.Fatal(err)
		}
	}
}

// compound2KB is a ~2 KB compound command of the kind an agent writes: a
// build script with loops, conditionals, pipelines, substitutions, wrappers
// and redirections. Issue 10 asks that evaluating it stay under 1 ms.
var compound2KB = func() string {
	var b []byte
	step := `cd "$ROOT/web" && NODE_ENV=test timeout 60 npm test -- --watch=false 2>&1 | grep -v WARN | tee -a build.log; ` +
		`for f in $(git diff --name-only HEAD~1 -- '*.go'); do if [ -f "$f" ]; then gofmt -l "$f" >> fmt.txt; fi; done; ` +
		`test -s fmt.txt || echo "clean: $(date +%s)" > /dev/null; nice -n 10 go vet ./... && go test -count=1 ./pkg/...; `
	for len(b) < 2048 {
		b = append(b, step...)
	}
	return string(b) + "echo done"
}()

func BenchmarkEvaluateBash2KB(b *testing.B) {
	s := benchSet(b)
	c := Call{Tool: "Bash", Input: map[string]any{"command": compound2KB}, Cwd: "/proj", Home: "/home/u"}
	b.SetBytes(int64(len(compound2KB)))
	b.ReportAllocs()
	for b.Loop() {
		if s.Evaluate(c).Decision != None {
			b.Fatal("unexpected decision") // cd, for, npm… are not all allowed
		}
	}
}
