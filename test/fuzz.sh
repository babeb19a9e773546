#!/usr/bin/env bash
# Runs every fuzz target in the tracked _test.go files for FUZZTIME each (make fuzz), then
# the real-bash oracle of the Bash rules for HOOKD_ORACLE_N commands (below).
#
# A target fails when the fuzzer finds an input that fails it ("Failing input written to
# testdata/fuzz/…", kept for the maintainer to commit as a seed) or when the test fails
# any other way. One outcome is not a finding and is run again instead: Go 1.26's fuzz
# coordinator can report its own -fuzztime deadline as the target's failure, a bare
# "context deadline exceeded" with no input written (go.dev/issue/75804, fixed in Go 1.27).
# A target that shows only that signature three times in a row is reported as such and
# not counted as a failure; every other failure is.
set -uo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-20s}
cd "$(dirname "$0")/.."
log=$(mktemp); trap 'rm -f "$log"' EXIT
passed=0 failed=0 raced=0
for dir in $(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | xargs -n1 dirname | sort -u); do
	for f in $(grep -h '^func Fuzz' "$dir"/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do
		for try in 1 2 3; do
			echo "== ./$dir $f (try $try)"
			if "$GO" test -run '^$' -fuzz "^$f\$" -fuzztime "$FUZZTIME" "./$dir" 2>&1 | tee "$log"; then
				passed=$((passed + 1)); continue 2
			fi
			if grep -q 'Failing input written' "$log" || ! grep -qx '[[:space:]]*context deadline exceeded' "$log"; then
				failed=$((failed + 1)); echo "fuzz: $f in ./$dir FAILED"; continue 2
			fi
			echo "fuzz: $f: the -fuzztime deadline race of go.dev/issue/75804 (no failing input); again"
		done
		raced=$((raced + 1))
		echo "fuzz: $f in ./$dir: three runs ended only in the go.dev/issue/75804 race; not a finding"
	done
done
# The real-bash oracle (rules/realbash_test.go, docs/rules.md "How it is tested"): generated
# commands each run by real bash in a sandbox; a miss is a command bash ran rm in and hookd
# did not deny. HOOKD_ORACLE_N (default 100,000), HOOKD_ORACLE_SEED, HOOKD_ORACLE_SLOTS.
n=${HOOKD_ORACLE_N:-100000}
echo "== ./rules TestRealBashOracle ($n commands)"
if HOOKD_ORACLE_N=$n "$GO" test -count=1 -run '^TestRealBashOracle$' -timeout "${HOOKD_ORACLE_TIMEOUT:-8h}" -v ./rules/ 2>&1 |
	grep -v '^=== ' | tee "$log" | grep -E '^(---|    realbash|ok|FAIL)'; [ "${PIPESTATUS[0]}" -eq 0 ]; then
	passed=$((passed + 1))
else
	failed=$((failed + 1)); cat "$log"; echo "fuzz: the real-bash oracle FAILED"
fi
[ "$raced" -eq 0 ] || echo "fuzz: $raced target(s) ended only in the Go 1.26 deadline race (go.dev/issue/75804)"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
