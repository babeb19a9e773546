#!/usr/bin/env bash
# Builds the OpenTelemetry Collector that the fleet tests export to: the module in
# test/fleet/otelcol (otlp receiver + file exporter, versions pinned in its go.mod and
# go.sum), compiled with the Go toolchain from the Go module proxy. The binary is
# cached under $HOOKD_OTELCOL_CACHE (default test/fleet/.cache), keyed by the hash of
# the module's files, so a second run — or a changed pin — costs nothing / one build.
#
#   test/fleet/build-otelcol.sh              build if needed, print nothing on success
#   test/fleet/build-otelcol.sh --print-bin  ... and print the binary's path
#
# The build is heavy (a few minutes on two cores, ~1 GB of module downloads the first
# time); it runs at low priority.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/otelcol"
cache="${HOOKD_OTELCOL_CACHE:-$here/.cache}"
key="$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)"
bin="$cache/otelcol-$key"
if [ ! -x "$bin" ]; then
	mkdir -p "$cache"
	echo "build-otelcol: building the collector into $bin (first time: several minutes)" >&2
	# -mod=readonly: the pinned go.sum is the contract; a module the proxy no longer
	# serves fails the build loudly rather than silently moving a version.
	(cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 10 go build -trimpath -ldflags '-s -w' -o "$bin.tmp" .)
	mv "$bin.tmp" "$bin"
fi
if [ "${1:-}" = "--print-bin" ]; then
	echo "$bin"
fi
