package bash

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// calls lists the first word of every simple command in a parsed script.
func calls(s *Script) []string {
	var out []string
	syntax.Walk(s.File, func(n syntax.Node) bool {
		if ce, ok := n.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
			out = append(out, strings.ReplaceAll(ce.Args[0].Lit(), string(s.CR), "\r"))
		}
		return true
	})
	return out
}

// TestBashReading: where mvdan and bash read the same bytes differently,
// Parse reads them as bash does.
func TestBashReading(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"ls # note \\\nrm -rf x", []string{"ls", "rm"}},  // mvdan: ls rm -rf x
		{"ls #a\\\n#b\\\nrm x", []string{"ls", "rm"}},     // two in a row
		{"echo a \r# ; rm -rf x", []string{"echo", "rm"}}, // mvdan: a comment hides rm
		{"rm\r -rf x", []string{"rm\r"}},                  // mvdan: rm
		{"coproc rm -rf x | cat", []string{"rm", "cat"}},  // mvdan: coproc named rm
		{"coproc rm -rf x |& cat", []string{"rm", "cat"}},
		{"coproc N { rm x; } | cat", []string{"rm", "cat"}}, // a real name
		{"coproc A=1 env rm x | cat", []string{"env", "cat"}},
		{"coproc N A=1 rm x | cat", []string{"N", "cat"}},
		{"cat <<'E'\n# \\\nE\nrm x", []string{"cat", "rm"}},
	}
	for _, tt := range tests {
		s, err := Parse(tt.src)
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		if got := calls(s); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%q: commands %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestBounds(t *testing.T) {
	for src, want := range map[string]error{
		strings.Repeat("x", MaxLen+1): ErrTooLong,
		"ls\x00rm":                    ErrNUL,
		"echo $(( " + strings.Repeat("a[", 5000) + "1" + strings.Repeat("]", 5000) + " ))": ErrTooDeep,
		strings.Repeat("a ", 60000): ErrTooDeep,
	} {
		if _, err := Parse(src); err != want {
			t.Errorf("%.40q…: %v, want %v", src, err, want)
		}
	}
	// Quoted text is set aside: a large quoted payload still parses.
	big := "cat <<'E'\n" + strings.Repeat("(( [[ {{ -- || ``\n", 40000) + "E\n" +
		"echo '" + strings.Repeat("((((", 10000) + "' \"" + strings.Repeat("[[[[", 10000) + "\" # " + strings.Repeat("{", 9000)
	if _, err := Parse(big); err != nil {
		t.Errorf("quoted payload: %v", err)
	}
	// Unless the parser disagrees that it is quoted.
	if _, err := Parse("echo \"$(echo \")\"" + strings.Repeat("$(echo \")\"", 6000) + "rm x" + strings.Repeat(")", 6000)); err == nil {
		t.Error("nested substitutions behind quotes parsed")
	}
}

// FuzzParse: Parse never panics, and what it accepts is within its bounds
// or was set aside as quoted text the parser confirmed.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"ls # x \\\nrm", "coproc a b | c", "a\rb", "cat <<'E'\n((\nE", "echo '((' \"[[\"", "$((a[1]))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src)
		if err != nil {
			if s != nil {
				t.Fatal("a script and an error")
			}
			return
		}
		if s.File == nil {
			t.Fatal("no tree")
		}
		if strings.IndexByte(src, '\r') >= 0 && s.CR == 0 {
			t.Fatal("carriage returns without a placeholder")
		}
	})
}

// treeDepth is the depth of a syntax tree.
func treeDepth(f *syntax.File) int {
	depth, max := 0, 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			depth--
			return true
		}
		depth++
		if depth > max {
			max = depth
		}
		return true
	})
	return max
}

// FuzzCostBound: every level the parser nests consumes a byte Cost counts
// (the bound that keeps the parser's recursion safe), so the tree of
// anything Parse accepts is no deeper than a small multiple of the count.
func FuzzCostBound(f *testing.F) {
	for _, s := range []string{"echo $(( a[a[1]] ))", "if if true; then :; fi; then :; fi", "time time ls",
		"x=$(y=$(z=$(ls)))", "[[ ! ! -n x ]]", "f() { g() { :; }; }", "echo ${a:-${b:-${c}}}", "a && b || c | d",
		"echo $(( - - - 1 ))", "echo $(( a ? b : c ? d : e ))", "cat <<E\n$(ls)\nE",
		"echo '" + strings.Repeat("((((", 5000) + "' $(( a[a[a[1]]] ))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src)
		if err != nil {
			return
		}
		units, _ := Cost(src)
		units = min(units, maxCost) // over the bound: parsed only when the quiet parts set aside bring it under
		if d := treeDepth(s.File); d > 12*(units+1)+24 {
			t.Fatalf("tree %d deep for %d units: %q", d, units, src)
		}
	})
}
