package rules

import "testing"

func TestStarGlob(t *testing.T) {
	tests := []struct {
		pattern  string
		boundary bool
		s        string
		want     bool
	}{
		{"ls *", true, "ls", true},
		{"ls *", true, "ls -la", true},
		{"ls *", true, "lsof", false},
		{"ls *", false, "ls", false},
		{"ls*", true, "lsof", true},
		{"*", false, "", true},
		{"a*b*c", false, "abc", true},
		{"a*b*c", false, "aXbYc", true},
		{"a*b*c", false, "acb", false},
		{"a*a", false, "a", false},
		{"*.go", false, "x.go", true},
		{`a\*`, false, "a*", true},
		{`a\*`, false, "ab", false},
		{`a\\*`, false, `a\xyz`, true},
		{`ls \*`, true, "ls", false},
		{"git * main", true, "git push origin main", true},
	}
	for _, tt := range tests {
		g := compileStarGlob(tt.pattern, tt.boundary, false)
		if got := g.match(tt.s); got != tt.want {
			t.Errorf("glob(%q, boundary=%v).match(%q) = %v, want %v", tt.pattern, tt.boundary, tt.s, got, tt.want)
		}
	}
	if !compileStarGlob("Remove-Item *", true, true).match("remove-item x") {
		t.Error("folded glob should match lowercase subject")
	}
}
