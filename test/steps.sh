#!/usr/bin/env bash
# Runs make steps side by side (make test and make unit use it): each STEP is one make
# invocation of one or more targets, run in order ("conformance e2e"). A step's output is
# held back and printed whole when the step ends, under a line with its wall time and exit
# status, so the log reads step by step as it would one after the other; the exit status is
# 1 when any step failed, and the last lines name every step with its status and time.
#
# Why side by side: the black-box tests (./test) and the real-harness sessions (e2e) spend
# much of their wall time waiting on processes, and the race-built package tests and lint's
# compiles fill those idle CPUs (test/README.md, "make test against its 10-minute budget").
# A step written nice:STEP runs at nice 10: the steps that only compute (lint, the package
# tests) then take the CPU the waiting ones leave idle instead of slowing them down, and the
# longest steps set the pace. Nothing is dropped: every step runs to its end even when
# another one failed, as make -k would. The steps must not share state (files, ports, caches
# they write): they are the ones make test names.
#
# usage: MAKE=make steps.sh [nice:]STEP...      (MAKE defaults to make)
set -u
make=${MAKE:-make}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
# A TERM (a CI timeout) reaches every step, not only this script: they share its group.
trap 'trap - TERM; kill -TERM 0' TERM
begin=$(date +%s)
n=0
for step in "$@"; do
	n=$((n + 1))
	(
		start=$(date +%s)
		run=
		case $step in nice:*) step=${step#nice:} run="nice -n 10" ;; esac
		# shellcheck disable=SC2086 # a step is a list of targets
		$run $make --no-print-directory $step </dev/null >"$dir/$n.out" 2>&1
		rc=$?
		echo "$rc $(($(date +%s) - start))" >"$dir/$n.tmp" && mv "$dir/$n.tmp" "$dir/$n.end"
	) &
	case $step in nice:*) echo "steps: started make ${step#nice:} (at nice 10)" ;; *) echo "steps: started make $step" ;; esac
done
status=0 left=$n summary=
while [ "$left" -gt 0 ]; do
	sleep 1
	i=0
	for step in "$@"; do
		i=$((i + 1))
		[ -f "$dir/$i.end" ] || continue
		step=${step#nice:}
		read -r rc secs <"$dir/$i.end"
		rm -f "$dir/$i.end"
		left=$((left - 1))
		word=ok
		if [ "$rc" != 0 ]; then word="FAILED (exit $rc)" status=1; fi
		echo "==== make $step: $word, ${secs}s ===="
		cat "$dir/$i.out"
		echo "==== end of make $step ===="
		summary="$summary
  make $step: $word, ${secs}s"
	done
done
wait
echo "steps: $(($(date +%s) - begin))s in all:$summary"
exit $status
