#!/usr/bin/env bash
# make release: a snapshot release of the current commit (docs/releasing.md) — hookd and
# hookc for linux and darwin × amd64 and arm64 (a platform that does not build fails the
# release: none is left out), tar.gz archives with LICENSE and README.md, SHA256SUMS, and
# SHA256SUMS.sig signed with ssh-keygen.
#
#   DIST=dir                where the release goes (default: dist)
#   HOOKD_SIGNING_KEY=file  the release's ssh private key; without it an ephemeral key is
#                           made and its allowed_signers line written beside the release
#                           (a snapshot's signature then proves only the mechanism)
#   GORELEASER=path         a goreleaser binary (default: v2.15.1 built through the Go
#                           module proxy, cached in ${XDG_CACHE_HOME:-~/.cache}/hookd/tools)
#
# Reproducible: the same commit gives the same bytes (SOURCE_DATE_EPOCH is the commit's
# time; -trimpath, no build id, no VCS stamp; archive entries owned by root and dated by
# the commit). test/release checks it by building twice.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dist=${DIST:-dist}
case $dist in /*) ;; *) dist=$root/$dist ;; esac

GORELEASER_VERSION=v2.15.1
if [ -z "${GORELEASER:-}" ]; then
	tools=${XDG_CACHE_HOME:-$HOME/.cache}/hookd/tools
	GORELEASER=$tools/goreleaser-$GORELEASER_VERSION
	if [ ! -x "$GORELEASER" ]; then
		echo "release: building goreleaser $GORELEASER_VERSION through the Go module proxy (once; minutes)" >&2
		mkdir -p "$tools"
		GOBIN=$tools/.bin-$$ go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
		mv "$tools/.bin-$$/goreleaser" "$GORELEASER"
		rmdir "$tools/.bin-$$"
	fi
fi

# The build identity, from git alone: a tagged commit is its tag's version; any other is
# a semver pre-release of the next patch after the last tag (0.0.0 before the first):
# 0.4.1-dev.12.gabc1234 (12 commits after v0.4.0), .dirty for a modified tree.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export TZ=UTC LC_ALL=C
export HOOKD_COMMIT=${HOOKD_COMMIT:-$(git rev-parse HEAD)}
export HOOKD_DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
if [ -z "${HOOKD_VERSION:-}" ]; then
	if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
		HOOKD_VERSION=${tag#v}
	else
		last=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || echo v0.0.0)
		n=$(git rev-list --count "$( [ "$last" = v0.0.0 ] && echo HEAD || echo "$last..HEAD")")
		IFS=. read -r major minor patch <<<"${last#v}"
		[ "$last" = v0.0.0 ] || patch=$((patch + 1))
		HOOKD_VERSION=$major.$minor.${patch%%-*}-dev.$n.g$(git rev-parse --short=12 HEAD)
	fi
	git diff --quiet HEAD 2>/dev/null || HOOKD_VERSION=$HOOKD_VERSION.dirty
fi
export HOOKD_VERSION

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "${HOOKD_SIGNING_KEY:-}" ]; then
	ssh-keygen -q -t ed25519 -N '' -C "snapshot@hookd.invalid" -f "$work/snapshot-key"
	export HOOKD_SIGNING_KEY=$work/snapshot-key
	ephemeral=1
	echo "release: HOOKD_SIGNING_KEY unset: signing with an ephemeral key (its allowed_signers line goes to $dist/allowed_signers.snapshot)" >&2
fi

# The config, with the output directory.
cfg=$work/goreleaser.yaml
{ echo "dist: $dist"; cat .goreleaser.yaml; } >"$cfg"

# --parallelism 1: goreleaser puts a platform's binaries into its archive in the order their
# builds finish; run in parallel, hookd and hookc swapped places from one build to the next
# (test/release caught it: one archive in four differed). Each `go build` still compiles its
# packages in parallel.
"$GORELEASER" release --snapshot --clean --parallelism 1 --config "$cfg" --skip=before >"$work/goreleaser.log" 2>&1 || {
	cat "$work/goreleaser.log" >&2
	exit 1
}
if [ -n "${ephemeral:-}" ]; then
	printf 'release@hookd.dev namespaces="hookd-release" %s\n' "$(cut -d' ' -f1-2 "$HOOKD_SIGNING_KEY.pub")" >"$dist/allowed_signers.snapshot"
fi
echo "release: $dist:"
(cd "$dist" && ls -1 ./*.tar.gz SHA256SUMS SHA256SUMS.sig | sed 's|^\./|  |')
