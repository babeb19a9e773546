#!/bin/sh
# Install the pinned Codex CLI and Gemini CLI from npm into a cache directory (idempotent)
# and print the command that starts each one. Like install-claude.sh: the e2e suite runs
# the real binaries offline against loopback model mocks (test/e2e/mockmodel).
#
#   test/e2e/install-harnesses.sh codex  --print-bin   path of the codex binary
#   test/e2e/install-harnesses.sh gemini --print-bin   path of gemini.js (run with node)
#
# HOOKD_E2E_CACHE overrides the cache directory (default test/e2e/.cache);
# HOOKD_CODEX_VERSION / HOOKD_GEMINI_VERSION override the pinned versions.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${HOOKD_E2E_CACHE:-$here/.cache}
which=${1:-}
case "$which" in
codex)
	version=${HOOKD_CODEX_VERSION:-0.171.0}
	case "$(uname -s)-$(uname -m)" in
	Linux-x86_64) plat=linux-x64 triple=x86_64-unknown-linux-musl ;;
	Linux-aarch64) plat=linux-arm64 triple=aarch64-unknown-linux-musl ;;
	Darwin-arm64) plat=darwin-arm64 triple=aarch64-apple-darwin ;;
	Darwin-x86_64) plat=darwin-x64 triple=x86_64-apple-darwin ;;
	*) echo "install-harnesses.sh: unsupported platform $(uname -s)-$(uname -m)" >&2; exit 1 ;;
	esac
	dir=$cache/codex-$version
	# The platform package is published as a version alias of @openai/codex
	# (@openai/codex@<v>-<plat>); it carries the native binary.
	bin=$dir/node_modules/@openai/codex/vendor/$triple/bin/codex
	pkg="@openai/codex@$version-$plat"
	check() { [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "$version"; }
	;;
gemini)
	version=${HOOKD_GEMINI_VERSION:-0.61.0}
	dir=$cache/gemini-cli-$version
	bin=$dir/node_modules/@google/gemini-cli/bundle/gemini.js
	pkg="@google/gemini-cli@$version"
	check() { [ -f "$bin" ] && grep -q "\"version\": \"$version\"" "$dir/node_modules/@google/gemini-cli/package.json"; }
	;;
*)
	echo "usage: install-harnesses.sh codex|gemini [--print-bin]" >&2
	exit 2
	;;
esac

if ! check; then
	command -v npm >/dev/null 2>&1 || { echo "install-harnesses.sh: npm not found (install nodejs and npm)" >&2; exit 1; }
	mkdir -p "$dir"
	[ -f "$dir/package.json" ] || printf '{"name":"hookd-e2e-%s","private":true}\n' "$which" >"$dir/package.json"
	(cd "$dir" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error "$pkg") >&2
	check || { echo "install-harnesses.sh: $bin missing or not version $version after npm install" >&2; exit 1; }
fi
if [ "${2:-}" = "--print-bin" ]; then
	echo "$bin"
fi
