package rules

import (
	"strings"
	"testing"
)

func TestIfMatches(t *testing.T) {
	bash := func(cmd string) Call {
		return Call{Tool: "Bash", Input: map[string]any{"command": cmd}, Cwd: "/proj", Home: "/home/u"}
	}
	file := func(tool, p string) Call {
		return Call{Tool: tool, Input: map[string]any{"file_path": p}, Cwd: "/proj", Home: "/home/u"}
	}
	tests := []struct {
		name string
		ifs  string
		call Call
		want bool
	}{
		{"git in a compound command", "Bash(git *)", bash("cd x && git push"), true},
		{"git as the only command", "Bash(git *)", bash("git status"), true},
		{"no git", "Bash(git *)", bash("ls -la"), false},
		{"git inside $()", "Bash(git *)", bash("echo $(git rev-parse HEAD)"), true},
		{"git behind wrappers and env", "Bash(git *)", bash("GIT_PAGER=cat timeout 5 git log"), true},
		{"other tool", "Bash(git *)", file("Read", "/proj/a"), false},
		{"word boundary", "Bash(git *)", bash("gitk"), false},
		{"unparseable runs the hook", "Bash(rm *)", bash("echo 'unterminated"), true},
		{"unparseable runs the hook even for unrelated patterns", "Bash(git push *)", bash("ls $(pwd"), true},
		{"$() with a multi-word pattern runs the hook", "Bash(git push *)", bash("git $(echo push) origin"), true},
		{"$VAR with a multi-word pattern runs the hook", "Bash(git push *)", bash("git $SUB origin"), true},
		{"backticks with a multi-word pattern runs the hook", "Bash(git push *)", bash("git `echo push`"), true},
		{"multi-word pattern without expansions", "Bash(git push *)", bash("git status"), false},
		{"single-word pattern ignores expansions", "Bash(git *)", bash("npm run $TARGET"), false},
		{"Edit(src/**) matches <cwd>/src", "Edit(src/**)", file("Edit", "/proj/src/a.go"), true},
		{"Edit(src/**) covers Write", "Edit(src/**)", file("Write", "/proj/src/new.go"), true},
		{"Edit(src/**) is not any-depth in if", "Edit(src/**)", file("Edit", "/proj/lib/src/a.go"), false},
		{"Edit(**/src/**) is any-depth", "Edit(**/src/**)", file("Edit", "/proj/lib/src/a.go"), true},
		{"Edit(*.ts)", "Edit(*.ts)", file("Edit", "/proj/web/app.ts"), true},
		{"Edit(*.ts) other extension", "Edit(*.ts)", file("Edit", "/proj/web/app.js"), false},
		{"Read(.env) at cwd", "Read(.env)", file("Read", "/proj/.env"), true},
		{"Read(.env) nested", "Read(.env)", file("Read", "/proj/services/api/.env"), true},
		{"Read(.env) other file", "Read(.env)", file("Read", "/proj/.env.example"), false},
		{"Read(.env) does not cover Edit in if", "Read(.env)", file("Edit", "/proj/.env"), false},
		{"Read(~/.ssh/**)", "Read(~/.ssh/**)", file("Read", "/home/u/.ssh/id_rsa"), true},
		{"bare tool", "Write", file("Write", "/proj/a"), true},
		{"MCP server", "mcp__github", Call{Tool: "mcp__github__create_issue"}, true},
		{"param rule in if", "Agent(model:opus)", Call{Tool: "Agent", Input: map[string]any{"model": "opus"}}, true},
		{"WebFetch unparseable URL runs the hook", "WebFetch(domain:example.com)", Call{Tool: "WebFetch", Input: map[string]any{"url": "http://[::1"}}, true},
		{"WebFetch other domain", "WebFetch(domain:example.com)", Call{Tool: "WebFetch", Input: map[string]any{"url": "https://other.org"}}, false},
		{"PowerShell case-insensitive", "PowerShell(Remove-Item *)", Call{Tool: "PowerShell", Input: map[string]any{"command": "remove-item x"}}, true},
		{"star", "*", file("Read", "/x"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseIf(tt.ifs, projectOrigin)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Matches(tt.call); got != tt.want {
				t.Errorf("if %q on %s %v = %v, want %v", tt.ifs, tt.call.Tool, tt.call.Input, got, tt.want)
			}
		})
	}
}

func TestIfNilAndErrors(t *testing.T) {
	var f *If
	if !f.Matches(Call{Tool: "Bash"}) {
		t.Error("a nil filter must match")
	}
	for _, bad := range []string{"", "Bash()", "Read(", "Bash(command:ls)", "mcp__x(y)"} {
		if _, err := ParseIf(bad, projectOrigin); err == nil || !strings.HasPrefix(err.Error(), "rules: ") {
			t.Errorf("ParseIf(%q) err = %v, want a rules: error", bad, err)
		}
	}
	f, err := ParseIf(" Bash(git *) ", projectOrigin)
	if err != nil || f.Text != "Bash(git *)" {
		t.Errorf("ParseIf kept Text=%q err=%v", f.Text, err)
	}
}
