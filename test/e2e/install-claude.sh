#!/bin/sh
# Install the pinned Claude Code from npm into a cache directory (idempotent) and, with
# --print-bin, print the path of its platform binary. The e2e suite and `make bench` call
# the platform binary directly: the wrapper package's postinstall may not run here
# (spec §12).
#
#   test/e2e/install-claude.sh               install if missing
#   test/e2e/install-claude.sh --print-bin   print the binary path (installs if missing)
#
# HOOKD_E2E_CACHE overrides the cache directory (default test/e2e/.cache);
# HOOKD_CLAUDE_VERSION overrides the pinned version.
set -eu
version=${HOOKD_CLAUDE_VERSION:-2.1.332}
here=$(cd "$(dirname "$0")" && pwd)
cache=${HOOKD_E2E_CACHE:-$here/.cache}
dir=$cache/claude-code-$version
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) plat=linux-x64 ;;
Linux-aarch64) plat=linux-arm64 ;;
Darwin-arm64) plat=darwin-arm64 ;;
Darwin-x86_64) plat=darwin-x64 ;;
*) echo "install-claude.sh: unsupported platform $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
bin=$dir/node_modules/@anthropic-ai/claude-code-$plat/claude

if [ ! -x "$bin" ] || ! "$bin" --version 2>/dev/null | grep -q "^$version "; then
	command -v npm >/dev/null 2>&1 || { echo "install-claude.sh: npm not found (install nodejs and npm)" >&2; exit 1; }
	mkdir -p "$dir"
	[ -f "$dir/package.json" ] || printf '{"name":"hookd-e2e-claude","private":true}\n' >"$dir/package.json"
	# The platform package is an optional dependency of the wrapper; name it explicitly so
	# npm installs it even where optional dependencies are skipped.
	(cd "$dir" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error \
		"@anthropic-ai/claude-code@$version" "@anthropic-ai/claude-code-$plat@$version") >&2
	[ -x "$bin" ] || { echo "install-claude.sh: $bin missing after npm install" >&2; exit 1; }
fi
if [ "${1:-}" = "--print-bin" ]; then
	echo "$bin"
else
	"$bin" --version >&2
fi
