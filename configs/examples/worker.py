#!/usr/bin/env python3
"""A persistent hookd worker in Python (see docs/workers.md).

hookd starts this once and keeps it running. For each event it writes one line of JSON
(the payload a command hook would read on stdin) and reads back one line:

    {"exit_code": 0, "stdout": "...", "stderr": "..."}

which hookd interprets exactly as if a command hook had exited with exit_code and printed
stdout and stderr. Anything this process writes to its own stderr goes to hookd's log.

Enable it in hookd's configuration (never in Claude Code's settings):

    {"hooks": [{"match": "python3 /path/to/worker.py", "worker": true}]}
"""
import json
import sys


def handle(event):
    """Answer one event: return (exit_code, stdout, stderr) as a command hook would."""
    if event.get("hook_event_name") == "PreToolUse" and event.get("tool_name") == "Bash":
        command = (event.get("tool_input") or {}).get("command", "")
        if "rm -rf" in command:
            decision = {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "worker.py: rm -rf is not allowed",
                }
            }
            return 0, json.dumps(decision), ""
    return 0, "", ""


def main():
    print("worker.py ready", file=sys.stderr, flush=True)
    for line in sys.stdin:
        try:
            code, out, err = handle(json.loads(line))
        except Exception as e:  # one bad event must not take the worker down
            code, out, err = 1, "", "worker.py: %s: %s" % (type(e).__name__, e)
        sys.stdout.write(json.dumps({"exit_code": code, "stdout": out, "stderr": err}) + "\n")
        sys.stdout.flush()  # one answer per event, now: hookd is waiting for it


if __name__ == "__main__":
    main()
