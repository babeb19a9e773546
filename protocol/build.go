package protocol

import (
	"runtime/debug"

	"github.com/hookd/hookd/protocol/lite"
)

// BuildInfo is this binary's build identity (lite.Build): what the release build set at
// link time, else what the Go toolchain recorded — the module version of
// `go install github.com/hookd/hookd/cmd/hookd@v0.4.0`, or the commit and its time of a
// build in a git checkout (unless -buildvcs=false).
func BuildInfo() lite.Build {
	b := lite.BuildInfo()
	if b.Version != "dev" {
		return b
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && b.Commit != "" {
		b.Commit += "-dirty"
	}
	return b
}
