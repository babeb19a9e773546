package lite

import "runtime"

// The build identity. A release build sets these at link time (the Makefile's `build` and
// `release` targets, .goreleaser.yaml):
//
//	-X github.com/hookd/hookd/protocol/lite.version=v0.4.0
//	-X github.com/hookd/hookd/protocol/lite.commit=<full commit hash>
//	-X github.com/hookd/hookd/protocol/lite.date=2026-11-27T12:00:00Z
//
// A plain `go build` leaves them empty; protocol.BuildInfo then fills what the Go
// toolchain recorded (`go install …@v0.4.0` records the module version). hookc cannot
// read that record without linking runtime/debug (and with it fmt and reflect), so a
// hookc built without these flags says "dev".
var version, commit, date string

// Pin is one harness version a build was checked against: the version the end-to-end
// suite runs (test/e2e/install-*.sh) when this build's commit was made.
type Pin struct {
	Name, Version string
}

// Build says what a binary is: its version, the commit and date it was built from, the
// Go toolchain, and the harness versions its commit was tested against.
type Build struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Date    string `json:"date,omitempty"` // RFC 3339, UTC: the commit's time in a release build
	Go      string `json:"go"`             // runtime.Version() and GOOS/GOARCH
	// Checked are the harness versions the end-to-end suite ran at this commit.
	Checked []Pin `json:"checked_against"`
}

// BuildInfo is this binary's build identity as the linker set it ("dev" for a version
// it did not set).
func BuildInfo() Build {
	v := version
	if v == "" {
		v = "dev"
	}
	return Build{Version: v, Commit: commit, Date: date, Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		Checked: append([]Pin(nil), checkedAgainst[:]...)}
}

// Client is how a forwarder names itself in a request (protocol.Options.Client):
// "prog/version", the version as BuildInfo says it.
func Client(prog string) string {
	if version == "" {
		return prog + "/dev"
	}
	return prog + "/" + version
}

// CheckedVersion is the version of the named harness ("Claude Code", "Codex CLI",
// "Gemini CLI") this build was checked against, "" for another name.
func CheckedVersion(name string) string {
	for _, p := range checkedAgainst {
		if p.Name == name {
			return p.Version
		}
	}
	return ""
}

// Text is what `prog --version` prints: the version on the first line, then one line per
// field.
func (b Build) Text(prog string) string {
	s := prog + " " + b.Version + "\n"
	if b.Commit != "" {
		s += "  commit  " + b.Commit + "\n"
	}
	if b.Date != "" {
		s += "  built   " + b.Date + "\n"
	}
	s += "  go      " + b.Go + "\n"
	if len(b.Checked) > 0 {
		s += "  checked against"
		for i, p := range b.Checked {
			if i > 0 {
				s += ","
			}
			s += " " + p.Name + " " + p.Version
		}
		s += "\n"
	}
	return s
}
