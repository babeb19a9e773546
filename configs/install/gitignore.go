package install

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hookd/hookd/configs/settings"
)

// GitIgnoreLine keeps hookd's local-scope file out of every repository, as Claude Code
// keeps its own: Claude Code 2.1.332 adds "**/.claude/settings.local.json" to git's global
// excludes file when it starts in a project (seen: $XDG_CONFIG_HOME/git/ignore in a
// scratch HOME), so `git status` never offers the local file for a commit. hookd.local.json
// holds the same hooks once installed, and must not be offered either.
const GitIgnoreLine = "**/.claude/" + settings.HookdLocalFile

// InGitWorkTree reports whether dir is inside a git work tree (a .git file or directory
// in it or above it).
func InGitWorkTree(dir string) bool {
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		up := filepath.Dir(d)
		if up == d {
			return false
		}
		d = up
	}
}

// GlobalExcludesFile is git's global excludes file: core.excludesFile of the global git
// configuration when git is installed and sets it (a leading ~/ is the home directory),
// else git's default, $XDG_CONFIG_HOME/git/ignore, or ~/.config/git/ignore without
// XDG_CONFIG_HOME.
func GlobalExcludesFile() (string, error) {
	home, herr := os.UserHomeDir()
	if git, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command(git, "config", "--global", "--get", "core.excludesFile").Output()
		var exit *exec.ExitError
		switch {
		case err == nil:
			f := strings.TrimSpace(string(out))
			if rest, ok := strings.CutPrefix(f, "~/"); ok {
				if herr != nil {
					return "", fmt.Errorf("core.excludesFile %s: %w", f, herr)
				}
				f = filepath.Join(home, rest)
			}
			if f != "" {
				return f, nil
			}
		case errors.As(err, &exit) && exit.ExitCode() == 1: // not set
		default:
			return "", fmt.Errorf("git config --global --get core.excludesFile: %w", err)
		}
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "git", "ignore"), nil
	}
	if herr != nil {
		return "", herr
	}
	return filepath.Join(home, ".config", "git", "ignore"), nil
}

// EnsureGitIgnored adds GitIgnoreLine to git's global excludes file (GlobalExcludesFile)
// unless one of its lines already is it, keeping what the file holds. It reports the file
// and whether it added the line.
func EnsureGitIgnored() (file string, added bool, err error) {
	file, err = GlobalExcludesFile()
	if err != nil {
		return "", false, err
	}
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return file, false, err
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if string(bytes.TrimSpace(line)) == GitIgnoreLine {
			return file, false, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return file, false, err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return file, false, err
	}
	line := GitIgnoreLine + "\n"
	if len(data) > 0 && data[len(data)-1] != '\n' {
		line = "\n" + line
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return file, err == nil, err
}
