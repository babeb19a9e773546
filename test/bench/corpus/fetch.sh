#!/bin/sh
# Fetch the real-world hook corpus (manifest.tsv) into a cache, idempotently, and print the
# cache directory. Nothing fetched here is committed: the manifest pins each package by
# version and by the SHA-256 of its registry tarball, and a tarball whose hash differs is
# refused.
#
#   test/bench/corpus/fetch.sh              fetch and install what is missing
#   test/bench/corpus/fetch.sh --print-dir  the same, then print the cache directory
#
# HOOKD_CORPUS_CACHE overrides the cache directory (default test/bench/corpus/.cache).
#
# Layout of the cache:
#   tarballs/<file>.tgz       the pinned tarballs (verified)
#   prefix/lib/node_modules/  the packages installed as `npm install -g` would (--ignore-scripts:
#                             no postinstall, so none of them edits a shell profile or a HOME)
#   homes/ecc/.claude/        what ECC's own installer (`install-apply.js --target claude
#                             --profile core`) writes into a HOME; the bench copies it
#
# The packages' npm dependencies are resolved by npm at install time (their own semver
# ranges), not pinned here; block-no-verify and ecc-universal have some.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${HOOKD_CORPUS_CACHE:-$here/.cache}
manifest=$here/manifest.tsv
command -v npm >/dev/null 2>&1 || { echo "fetch.sh: npm not found (install nodejs and npm)" >&2; exit 1; }
command -v curl >/dev/null 2>&1 || { echo "fetch.sh: curl not found" >&2; exit 1; }
registry=${npm_config_registry:-https://registry.npmjs.org}
registry=${registry%/}

stamp=$cache/installed.sha256
want=$(sha256sum "$manifest" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	[ "${1:-}" = "--print-dir" ] && echo "$cache"
	exit 0
fi

mkdir -p "$cache/tarballs"
# shellcheck disable=SC2034 # setup, licence, source and languages are documentation here
grep -v '^#' "$manifest" | while IFS="$(printf '\t')" read -r setup name version sha licence source langs; do
	[ -n "$name" ] || continue
	base=${name##*/}
	file=$cache/tarballs/$(echo "$name" | tr -d @ | tr / -)-$version.tgz
	if [ ! -f "$file" ] || [ "$(sha256sum "$file" | cut -d' ' -f1)" != "$sha" ]; then
		echo "fetch.sh: $name@$version" >&2
		curl -fsSL --retry 3 -o "$file.part" "$registry/$name/-/$base-$version.tgz"
		got=$(sha256sum "$file.part" | cut -d' ' -f1)
		if [ "$got" != "$sha" ]; then
			rm -f "$file.part"
			echo "fetch.sh: $name@$version: sha256 $got, manifest says $sha: refusing it" >&2
			exit 1
		fi
		mv "$file.part" "$file"
	fi
done
tarballs=$(ls "$cache"/tarballs/*.tgz)

rm -rf "$cache/prefix" "$cache/homes"
mkdir -p "$cache/prefix" "$cache/homes/ecc"
# One npm call for all of them: a global install into our own prefix, scripts off.
# shellcheck disable=SC2086
npm install -g --prefix "$cache/prefix" --ignore-scripts --no-audit --no-fund --loglevel=error $tarballs >&2

# ECC's README: "Use the installer ... so hook commands are rewritten against your actual
# Claude root" — run it once into a scratch HOME; the bench copies that .claude into each
# session's HOME.
HOME=$cache/homes/ecc node "$cache/prefix/lib/node_modules/ecc-universal/scripts/install-apply.js" \
	--target claude --profile core >/dev/null
[ -f "$cache/homes/ecc/.claude/hooks/hooks.json" ] || { echo "fetch.sh: ECC's installer wrote no hooks/hooks.json" >&2; exit 1; }

echo "$want" >"$stamp"
[ "${1:-}" = "--print-dir" ] && echo "$cache"
exit 0
