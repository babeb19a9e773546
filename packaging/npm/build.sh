#!/usr/bin/env bash
# The npm packages of a release (docs/releasing.md, "npm"): one per platform with its two
# binaries (@hookd/<os>-<cpu>: "os" and "cpu" set, so npm installs only the matching one)
# and `hookd`, whose optionalDependencies name them and whose bin shims run them.
#
#   packaging/npm/build.sh DIST OUT
#
# DIST is a release directory (make release): its archives are unpacked into the platform
# packages, its version (from the archive names) is every package's. OUT receives the
# `npm pack` tarballs. Platforms without an archive in DIST are left out of
# optionalDependencies.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dist=$(cd "${1:?usage: build.sh DIST OUT}" && pwd)
out=${2:?usage: build.sh DIST OUT}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

version=
deps=
for archive in "$dist"/hookd_*_*_*.tar.gz; do
	base=$(basename "$archive" .tar.gz)          # hookd_<version>_<os>_<arch>
	arch=${base##*_}; rest=${base%_*}
	os=${rest##*_}; v=${rest%_*}; v=${v#hookd_}
	[ -z "$version" ] && version=$v
	[ "$v" = "$version" ] || { echo "npm: archives of two versions in $dist ($version, $v)" >&2; exit 1; }
	case $arch in amd64) cpu=x64 ;; arm64) cpu=arm64 ;; *) echo "npm: no npm cpu for $arch" >&2; exit 1 ;; esac
	name=@hookd/$os-$cpu
	pkg=$work/$os-$cpu
	mkdir -p "$pkg/bin"
	tar -xzf "$archive" -C "$pkg/bin" hookd hookc
	tar -xzf "$archive" -C "$pkg" LICENSE
	cat >"$pkg/package.json" <<JSON
{
  "name": "$name",
  "version": "$version",
  "description": "hookd and hookc for $os/$cpu (installed by the hookd package)",
  "license": "Apache-2.0",
  "repository": "github:hookd/hookd",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/hookd", "bin/hookc"],
  "preferUnplugged": true
}
JSON
	printf 'The %s binaries of hookd %s. Install `hookd` instead: npm install -g hookd\n' "$os/$cpu" "$version" >"$pkg/README.md"
	(cd "$pkg" && npm pack --silent --pack-destination "$out" >/dev/null)
	deps="$deps${deps:+,}
    \"$name\": \"$version\""
done
[ -n "$version" ] || { echo "npm: no hookd_*.tar.gz in $dist" >&2; exit 1; }

main=$work/hookd
mkdir -p "$main/bin"
cp "$here/hookd/bin/"*.js "$main/bin/"
tar -xzf "$(ls "$dist"/hookd_*.tar.gz | head -1)" -C "$main" LICENSE README.md
cat >"$main/package.json" <<JSON
{
  "name": "hookd",
  "version": "$version",
  "description": "Run AI-coding-agent hooks (Claude Code, Codex, Gemini CLI) from a long-lived daemon: hot-loaded, audited, never failing open",
  "license": "Apache-2.0",
  "repository": "github:hookd/hookd",
  "keywords": ["claude-code", "hooks", "codex", "gemini-cli", "daemon", "audit"],
  "bin": {
    "hookd": "bin/hookd.js",
    "hookc": "bin/hookc.js"
  },
  "files": ["bin/", "LICENSE", "README.md"],
  "engines": { "node": ">=18" },
  "optionalDependencies": {$deps
  }
}
JSON
(cd "$main" && npm pack --silent --pack-destination "$out" >/dev/null)
ls -1 "$out"/*.tgz
