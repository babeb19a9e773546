package lite

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// Paths are where hookd and Claude Code keep their files for one user on one OS. Every
// path decision of hookd is made by PathsFor, which takes the OS as a parameter, so the
// answers for macOS are tested on Linux (docs/platforms.md).
type Paths struct {
	// Socket is the daemon's socket ($HOOKD_SOCKET overrides it). Its directory is
	// per-user, created 0700 by the daemon; clients check it (CheckSocket) whatever it is.
	Socket string
	// StateDir holds the decision log, session files and the http endpoint.
	StateDir string
	// ConfigFile is hookd's own configuration (a missing file means the embedded default).
	ConfigFile string
	// LogDir is where a service manager sends hookd's log when it runs as a service
	// (launchd's StandardErrorPath on macOS; on Linux systemd's journal is used and this
	// is a fallback for other supervisors).
	LogDir string
	// UserDir is Claude Code's user settings directory (~/.claude).
	UserDir string
	// ManagedDir is where Claude Code reads managed-settings.json and
	// managed-settings.d/ on this OS.
	ManagedDir string
	// MDMProfiles are the managed-preferences plists of the com.anthropic.claudecode
	// domain that Claude Code reads, the first present one winning: the user's, then the
	// device's (macOS only; nil elsewhere).
	MDMProfiles []string
	// MaxSocketPath is the longest socket path the OS's sockaddr_un takes (bytes, without
	// the terminating NUL).
	MaxSocketPath int
}

// OS names PathsFor understands; any other Unix gets Linux's conventions.
const (
	Linux = "linux"
	MacOS = "darwin"
)

// MDMDomain is the managed-preferences domain of Claude Code's MDM profile.
const MDMDomain = "com.anthropic.claudecode"

// PathsFor resolves Paths for goos ("linux", "darwin"; runtime.GOOS for this machine)
// from the environment read through getenv: HOOKD_SOCKET, HOME, USER, TMPDIR and, on
// Linux, XDG_RUNTIME_DIR, XDG_STATE_HOME and XDG_CONFIG_HOME. uid names the per-user
// socket directory used when HOME is unset.
//
// Linux follows the XDG base directories. macOS follows Apple's: state and configuration
// under ~/Library/Application Support/hookd, logs under ~/Library/Logs/hookd, and the
// socket under ~/Library/Caches/hookd — not $TMPDIR, which a launchd agent may not have
// in its environment (so daemon and clients could disagree) and whose files macOS
// deletes after days unused; XDG variables are ignored there for the same reason. When
// the macOS socket path would not fit sockaddr_un (a very long HOME), it falls back to
// $TMPDIR/hookd-<uid>/hookd.sock.
func PathsFor(goos string, getenv func(string) string, uid int) Paths {
	home := getenv("HOME") // os.UserHomeDir on Unix
	tmp := getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	tmpSocket := filepath.Join(tmp, "hookd-"+strconv.Itoa(uid), "hookd.sock")
	var p Paths
	switch goos {
	case MacOS:
		p.MaxSocketPath = 103 // sun_path[104]
		p.ManagedDir = "/Library/Application Support/ClaudeCode"
		if home != "" {
			support := filepath.Join(home, "Library", "Application Support", "hookd")
			p.StateDir, p.ConfigFile = support, filepath.Join(support, "config.json")
			p.LogDir = filepath.Join(home, "Library", "Logs", "hookd")
			p.Socket = filepath.Join(home, "Library", "Caches", "hookd", "hookd.sock")
		}
		if p.Socket == "" || len(p.Socket) > p.MaxSocketPath {
			p.Socket = tmpSocket
		}
		managed := "/Library/Managed Preferences"
		if user := getenv("USER"); user != "" && user != "." && user != ".." && filepath.Base(user) == user {
			p.MDMProfiles = append(p.MDMProfiles, filepath.Join(managed, user, MDMDomain+".plist"))
		}
		p.MDMProfiles = append(p.MDMProfiles, filepath.Join(managed, MDMDomain+".plist"))
	default:
		p.MaxSocketPath = 107 // sun_path[108]
		p.ManagedDir = "/etc/claude-code"
		state, config := getenv("XDG_STATE_HOME"), getenv("XDG_CONFIG_HOME")
		if state == "" && home != "" {
			state = filepath.Join(home, ".local", "state")
		}
		if config == "" && home != "" {
			config = filepath.Join(home, ".config")
		}
		if state != "" {
			p.StateDir = filepath.Join(state, "hookd")
			p.LogDir = filepath.Join(p.StateDir, "log")
		}
		if config != "" {
			p.ConfigFile = filepath.Join(config, "hookd", "config.json")
		}
		switch d := getenv("XDG_RUNTIME_DIR"); {
		case d != "":
			p.Socket = filepath.Join(d, "hookd", "hookd.sock")
		case home != "":
			p.Socket = filepath.Join(home, ".hookd", "run", "hookd.sock")
		default:
			p.Socket = tmpSocket
		}
	}
	if home != "" {
		p.UserDir = filepath.Join(home, ".claude")
	}
	if s := getenv(EnvSocket); s != "" {
		p.Socket = s
	}
	return p
}

// PathsHere is PathsFor this machine's OS, environment and effective uid.
func PathsHere(getenv func(string) string) Paths {
	return PathsFor(runtime.GOOS, getenv, os.Geteuid())
}
