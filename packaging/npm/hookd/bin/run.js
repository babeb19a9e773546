"use strict";
// The npm package `hookd` ships no binary itself: npm installs the one optional dependency
// whose "os" and "cpu" match this machine (@hookd/linux-x64, @hookd/darwin-arm64, …; the
// pattern esbuild and biome use), and these shims run its binaries. `hookd setup` and
// `hookd install` write the real hookc path into Claude Code's settings — never this shim
// — so no event pays for starting node.
const { spawnSync } = require("child_process");

const PACKAGES = {
  "linux x64": "@hookd/linux-x64",
  "linux arm64": "@hookd/linux-arm64",
  "darwin x64": "@hookd/darwin-x64",
  "darwin arm64": "@hookd/darwin-arm64",
};

function fail(msg) {
  process.stderr.write(`hookd (npm): ${msg}\n`);
  process.exit(1);
}

function binary(name) {
  const key = `${process.platform} ${process.arch}`;
  const pkg = PACKAGES[key];
  if (!pkg) {
    fail(`no hookd binary for ${process.platform}/${process.arch} (built for: ${Object.keys(PACKAGES).join(", ")}); build from source: go install github.com/hookd/hookd/cmd/hookd@latest`);
  }
  try {
    return require.resolve(`${pkg}/bin/${name}`);
  } catch (e) {
    fail(`${pkg} is not installed: npm skipped the optional dependency (--omit=optional, or a registry without it?); reinstall with: npm install -g hookd --include=optional`);
  }
}

module.exports = function run(name) {
  const r = spawnSync(binary(name), process.argv.slice(2), { stdio: "inherit" });
  if (r.error) {
    fail(r.error.message);
  }
  if (r.signal) {
    process.kill(process.pid, r.signal);
  }
  process.exit(r.status === null ? 1 : r.status);
};
