#!/usr/bin/env bash
# hookc's own cost per forwarded event (issue 14): page faults, task-clock (CPU) and wall
# time of one hookc process — connect, send the event, read the answer, print it, exit —
# against a running hookd with one trivial hook (`true` on PreToolUse/Bash, in hookd.json
# as `hookd install` leaves it), side by side in one run with the floors: a C program and
# a Go program that read stdin and print "{}" (no socket). With BASE=<git rev>, the hookc
# of that revision is measured too (the "before").
#
#   test/bench/hookc-cost.sh                 # N=50 runs each, perf stat -r N
#   BASE=origin/main~3 N=100 test/bench/hookc-cost.sh
#   GAP=0.3 test/bench/hookc-cost.sh        # 0.3 s idle before every run
#
# Needs perf (linux-tools) and gcc. perf stat's stdin is the payload file, rewound before
# every run (--pre), so every run forwards the same event; the decision log's line count
# at the end shows they did. Figures are noisy on a shared
# machine; page faults are the stable number.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-50}
w=$(mktemp -d)
trap 'kill $(cat "$w/hookd.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$w"' EXIT
flags=(-trimpath -ldflags '-s -w')
CGO_ENABLED=0 go build "${flags[@]}" -o "$w/hookd" ./cmd/hookd
CGO_ENABLED=0 go build "${flags[@]}" -o "$w/hookc" ./cmd/hookc
bins=("$w/hookc")
if [ -n "${BASE:-}" ]; then
	git worktree add -q --detach "$w/base" "$BASE"
	(cd "$w/base" && CGO_ENABLED=0 go build "${flags[@]}" -o "$w/hookc-base" ./cmd/hookc)
	git worktree remove --force "$w/base"
	bins=("$w/hookc-base" "$w/hookc")
fi
printf '#include <unistd.h>\nint main(void){char b[65536];while(read(0,b,sizeof b)>0);return write(1,"{}\\n",3)!=3;}\n' >"$w/hello.c"
gcc -O2 -o "$w/hello-c" "$w/hello.c"
printf '#include <unistd.h>\nint main(void){return lseek(0,0,SEEK_SET)<0;}\n' >"$w/rewind.c"
gcc -O2 -o "$w/rewind" "$w/rewind.c"
mkdir -p "$w/go" && cat >"$w/go/main.go" <<'GO'
package main

import (
	"io"
	"os"
)

func main() {
	_, _ = io.Copy(io.Discard, os.Stdin)
	_, _ = os.Stdout.WriteString("{}\n")
}
GO
(cd "$w/go" && printf 'module hello\ngo 1.21\n' >go.mod && CGO_ENABLED=0 go build "${flags[@]}" -o "$w/hello-go" .)

home=$w/home proj=$w/home/proj
mkdir -p "$proj/.claude" "$home/.claude" "$w/managed" "$w/state" "$w/sock"
chmod 700 "$w/sock"
echo '{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"true"}]}]}}' >"$proj/.claude/hookd.json"
printf '{"session_id":"s1","transcript_path":"%s/.claude/projects/p/s1.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"toolu_1"}\n' "$home" "$proj" >"$w/payload.json"
export HOME=$home HOOKD_SOCKET=$w/sock/s CLAUDE_PROJECT_DIR=$proj CLAUDECODE=1 LANG=C.UTF-8
"$w/hookd" --socket "$HOOKD_SOCKET" --managed-dir "$w/managed" --user-dir "$home/.claude" --state-dir "$w/state" serve >"$w/hookd.log" 2>&1 &
echo $! >"$w/hookd.pid"
for _ in $(seq 100); do [ -S "$HOOKD_SOCKET" ] && break; sleep 0.1; done
"$w/hookc" --debug <"$w/payload.json" >/dev/null # warm the daemon's caches; fails loudly if it does not answer

ls -l "${bins[@]}" "$w/hello-go" "$w/hello-c" | awk '{print $5, $NF}'
# Interleaved: ROUNDS rounds, each running every binary N/ROUNDS times under perf stat, so
# that load changes during the run hit all of them alike. GAP=0.3 sleeps that long before
# every run (idle gaps instead of back to back; the sleep is not counted).
pre=$w/rewind
if [ -n "${GAP:-}" ]; then
	printf '#!/bin/sh\n%s\nsleep %s\n' "$w/rewind" "$GAP" >"$w/pre.sh"
	chmod +x "$w/pre.sh"
	pre=$w/pre.sh
fi
ROUNDS=${ROUNDS:-5}
per=$(((N + ROUNDS - 1) / ROUNDS))
all=("$w/hello-c" "$w/hello-go" "${bins[@]}")
: >"$w/stats"
for r in $(seq "$ROUNDS"); do
	for b in "${all[@]}"; do
		perf stat -x, -r "$per" --pre "$pre" -e page-faults,task-clock "$b" <"$w/payload.json" 2>&1 >/dev/null |
			awk -F, -v b="$(basename "$b")" '$3=="page-faults"||$3 ~ /^task-clock/{print b, $3, $1}' >>"$w/stats"
		# perf's "elapsed" would include the --pre process; wall time is measured apart, as
		# back-to-back runs from this shell (fork+exec from bash included for all).
		s=$(date +%s%N)
		for _ in $(seq "$per"); do "$b" <"$w/payload.json" >/dev/null; done
		e=$(date +%s%N)
		echo "$(basename "$b") wall-us $(((e - s) / per / 1000))" >>"$w/stats"
	done
done
echo "mean over $ROUNDS interleaved rounds of $per runs (page faults, task-clock ms, wall us per run incl. the shell's fork+exec):"
for b in "${all[@]}"; do
	awk -v b="$(basename "$b")" '$1==b{s[$2]+=$3; n[$2]++} END{printf "%-12s faults %6.1f  task-clock %6.2f ms  wall %6.0f us\n", b, s["page-faults"]/n["page-faults"], s["task-clock"]/n["task-clock"], s["wall-us"]/n["wall-us"]}' "$w/stats"
done
echo "decisions logged: $(wc -l <"$w/state/audit/decisions.jsonl") (every hookc run above forwarded the event)"
