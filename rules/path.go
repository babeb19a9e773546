package rules

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// anchor says what a Read/Edit pattern is relative to (spec §8, gitignore
// syntax).
type anchor int

const (
	anchorRoot     anchor = iota // //abs/path, or a pattern made absolute at parse time
	anchorHome                   // ~/path
	anchorCwd                    // path, ./path: the call's cwd
	anchorAnywhere               // bare filename, and single-segment dir/** in deny/ask: any depth anywhere
)

// pathPattern is a compiled Read(…)/Edit(…) specifier.
type pathPattern struct {
	anchor anchor
	up     int    // leading ../ segments applied to the anchor (cwd/home relative)
	glob   string // doublestar pattern relative to the anchor; matches the path and everything under it
	all    bool   // the pattern names the anchor itself ("/", "~", "."): everything under it
}

// compilePath compiles a path specifier for a rule in list l. base is the
// settings source's directory (Origin.Base) for "/x" patterns.
func compilePath(spec string, l List, base string) (pathPattern, string) {
	var pp pathPattern
	s := filepath.ToSlash(spec)
	dirOnly := strings.HasSuffix(s, "/") && len(s) > 1 && s != "//"
	if dirOnly {
		s = strings.TrimRight(s, "/")
		if s == "" {
			s = "/"
		}
	}
	var rel string
	switch {
	case strings.HasPrefix(s, "//"):
		pp.anchor, rel = anchorRoot, s[2:]
	case s == "~" || strings.HasPrefix(s, "~/"):
		pp.anchor, rel = anchorHome, strings.TrimPrefix(strings.TrimPrefix(s, "~"), "/")
	case strings.HasPrefix(s, "~"):
		return pp, "~user paths are not supported; use ~/path or //abs/path"
	case strings.HasPrefix(s, "/"):
		if base == "" {
			return pp, "a /path pattern is relative to the settings source, but the rule has no base directory (use //abs/path for an absolute path)"
		}
		b := filepath.ToSlash(base)
		if !strings.HasPrefix(b, "/") {
			return pp, "the settings base directory must be absolute"
		}
		pp.anchor, rel = anchorRoot, path.Join(b, s)[1:]
	default:
		rel = s
		explicit := strings.HasPrefix(rel, "./") || rel == "."
		rel = strings.TrimPrefix(rel, "./")
		switch {
		case !explicit && !strings.Contains(rel, "/") && rel != "..":
			// Bare filename (".env", "*.key"): any depth, as in gitignore.
			// Deny/ask match it anywhere on disk; allow only below cwd.
			pp.anchor, rel = anchorAnywhere, "**/"+rel
			if l == Allow {
				pp.anchor = anchorCwd
			}
		case !explicit && l != Allow && l != ifList && isSingleSegmentDirGlob(rel):
			// spec §8: single-segment "src/**" in deny/ask keeps any-depth
			// matching; allow rules and `if` filters (§2.1, 2.1.214) mean <cwd>/src.
			pp.anchor, rel = anchorAnywhere, "**/"+rel
		default:
			pp.anchor = anchorCwd
		}
	}
	if pp.anchor == anchorHome || pp.anchor == anchorCwd {
		// Leading "../" climbs from the anchor at match time; path.Clean
		// would silently drop it from a rooted path.
		for rel == ".." || strings.HasPrefix(rel, "../") {
			pp.up++
			rel = strings.TrimPrefix(strings.TrimPrefix(rel, ".."), "/")
		}
	}
	rel = path.Clean("/" + rel)[1:]
	if rel == "" {
		pp.all = true
		return pp, ""
	}
	if dirOnly {
		// "dir/" names a directory: only what is below it.
		rel += "/*"
	}
	if !strings.HasSuffix(rel, "**") {
		// gitignore: a pattern that matches a directory matches its contents.
		rel += "/**"
	}
	if !doublestar.ValidatePattern(rel) {
		return pp, "invalid glob pattern"
	}
	pp.glob = rel
	return pp, ""
}

// isSingleSegmentDirGlob reports whether rel is "<segment>/**".
func isSingleSegmentDirGlob(rel string) bool {
	seg, ok := strings.CutSuffix(rel, "/**")
	return ok && seg != "" && !strings.Contains(seg, "/") && seg != "**"
}

// match reports whether the cleaned absolute file path p matches. cwd and
// home come from the call.
func (pp *pathPattern) match(p, cwd, home string) bool {
	var dir string
	switch pp.anchor {
	case anchorRoot, anchorAnywhere:
		dir = "/"
	case anchorHome:
		dir = home
	case anchorCwd:
		dir = cwd
	}
	if dir == "" || dir[0] != '/' {
		return false
	}
	for i := 0; i < pp.up; i++ {
		dir = path.Dir(dir)
	}
	rel, ok := under(p, dir)
	if !ok {
		return false
	}
	if pp.all {
		return true
	}
	if rel == "" {
		return false
	}
	return doublestar.MatchUnvalidated(pp.glob, rel)
}

// under returns p relative to dir ("" when equal) if p is dir or below it.
// Both are clean absolute slash paths; no allocation.
func under(p, dir string) (string, bool) {
	if dir == "/" {
		return p[1:], true
	}
	if p == dir {
		return "", true
	}
	if strings.HasPrefix(p, dir) && p[len(dir)] == '/' {
		return p[len(dir)+1:], true
	}
	return "", false
}

// cleanCallPath makes a tool's path argument absolute and clean (spec §8:
// compare cleaned, slash-separated paths). ok is false when it cannot be
// resolved (relative path without an absolute cwd).
func cleanCallPath(p, cwd, home string) (string, bool) {
	if p == "" {
		return "", false
	}
	p = filepath.ToSlash(p)
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", false
		}
		p = filepath.ToSlash(home) + p[1:]
	case !strings.HasPrefix(p, "/"):
		c := filepath.ToSlash(cwd)
		if !strings.HasPrefix(c, "/") {
			return "", false
		}
		p = c + "/" + p
	}
	return path.Clean(p), true
}
