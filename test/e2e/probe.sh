#!/bin/sh
# Rerun the hook-output probes against real Claude Code (see FINDINGS.md).
# Installs the pinned Claude Code into /tmp/cc unless HOOKD_CLAUDE_BIN is set.
# Reports land in ${PROBE_OUT:-/tmp/hookd-probe}/<experiment>/report.md and
# ALL.md; PROBE_ONLY=<substring> runs a subset.
set -eu
if [ -z "${HOOKD_CLAUDE_BIN:-}" ]; then
	HOOKD_CLAUDE_BIN=/tmp/cc/node_modules/@anthropic-ai/claude-code-linux-x64/claude
	if [ ! -x "$HOOKD_CLAUDE_BIN" ]; then
		mkdir -p /tmp/cc
		(cd /tmp/cc && npm install --no-audit --no-fund @anthropic-ai/claude-code@2.1.332)
	fi
	export HOOKD_CLAUDE_BIN
fi
"$HOOKD_CLAUDE_BIN" --version
cd "$(dirname "$0")/../.."
exec go test -tags probe ./test/e2e -run 'Probe' -count=1 -v "$@"
