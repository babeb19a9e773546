#!/usr/bin/env node
// A persistent hookd worker in Node (see docs/workers.md).
//
// hookd starts this once and keeps it running. For each event it writes one line of JSON
// (the payload a command hook would read on stdin) and reads back one line:
//
//     {"exit_code": 0, "stdout": "...", "stderr": "..."}
//
// which hookd interprets exactly as if a command hook had exited with exit_code and
// printed stdout and stderr. Anything written to this process's stderr goes to hookd's log.
//
// Enable it in hookd's configuration (never in Claude Code's settings):
//
//     {"hooks": [{"match": "node /path/to/worker.js", "worker": true}]}
'use strict';
const readline = require('readline');

// handle answers one event: {exit_code, stdout, stderr} as a command hook would.
function handle(event) {
  if (event.hook_event_name === 'PreToolUse' && event.tool_name === 'Bash') {
    const command = (event.tool_input || {}).command || '';
    if (command.includes('rm -rf')) {
      return {
        exit_code: 0,
        stdout: JSON.stringify({
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'deny',
            permissionDecisionReason: 'worker.js: rm -rf is not allowed',
          },
        }),
        stderr: '',
      };
    }
  }
  return { exit_code: 0, stdout: '', stderr: '' };
}

console.error('worker.js ready');
// Lines are handled in order, one answer per line: hookd sends the next event only after
// it has read the answer to the previous one.
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  let answer;
  try {
    answer = handle(JSON.parse(line));
  } catch (e) { // one bad event must not take the worker down
    answer = { exit_code: 1, stdout: '', stderr: `worker.js: ${e}` };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
});
