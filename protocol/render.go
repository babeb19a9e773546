package protocol

import (
	"io"

	"github.com/hookd/hookd/protocol/lite"
)

// Render writes r as a Claude Code command hook would answer: Output (a JSON object) or
// Stdout (plain text) on stdout, Stderr on stderr, and returns the exit code to use. It is
// lite.Result.Render, the one hookc links, so the daemon-side clients and hookc render alike.
func (r *Result) Render(stdout, stderr io.Writer) int {
	lr := lite.Result{Output: r.Output, Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode}
	return lr.Render(stdout, stderr)
}
