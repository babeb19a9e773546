// Package e2e holds black-box tests that drive the real Claude Code binary
// against the loopback Messages API stand-in in test/claudeapi.
//
// The probes (build tag "probe") record what Claude Code 2.1.330 does with
// each form of hook output; FINDINGS.md is their write-up.
package e2e
