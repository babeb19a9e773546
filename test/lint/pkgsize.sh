#!/usr/bin/env bash
# Fails when a Go package has more than PKGSIZE_MAX (default 3,500) non-test lines: the lines
# of the .go files of one directory that are not _test.go, tracked or new but not ignored (the
# count issue 12 uses). A package that outgrows this holds more than one idea: split it behind
# a small exported API, as rules/shell was split from rules. Run by `make lint`; names every
# package over the limit with its count. PKGSIZE_MAX=3000 shows it failing.
set -euo pipefail
cd "$(dirname "$0")/../.."
max=${PKGSIZE_MAX:-3500}
seen=0 over=0
while read -r n dir; do
	seen=$((seen + 1))
	if [ "$n" -gt "$max" ]; then
		echo "pkgsize: package ./$dir has $n non-test lines (limit $max): split it"
		over=$((over + 1))
	fi
done < <(git ls-files --cached --others --exclude-standard '*.go' | grep -v '_test\.go$' |
	while read -r f; do
		if [ -f "$f" ]; then printf '%s %s\n' "$(wc -l <"$f")" "$(dirname "$f")"; fi
	done | awk '{s[$2] += $1} END {for (d in s) print s[d], d}' | sort -rn)
if [ "$seen" -eq 0 ]; then
	echo "pkgsize: found no Go files (is this a git checkout?)"
	exit 1
fi
[ "$over" -eq 0 ]
