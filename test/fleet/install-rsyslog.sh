#!/usr/bin/env bash
# Makes sure Debian's rsyslog is installed for the syslog export test and prints the
# path of rsyslogd. Installs it with apt-get when missing (CI runs as root on Debian).
# The test runs its own rsyslogd with a config in a temp dir; the package's service is
# not started by this script.
set -euo pipefail
bin="$(command -v rsyslogd || true)"
[ -z "$bin" ] && [ -x /usr/sbin/rsyslogd ] && bin=/usr/sbin/rsyslogd
if [ -z "$bin" ]; then
	echo "install-rsyslog: installing rsyslog from Debian's packages" >&2
	export DEBIAN_FRONTEND=noninteractive
	# policy-rc.d 101: the package must not start (or fail to start) a system service
	# inside a container; the test starts its own rsyslogd.
	prc=/usr/sbin/policy-rc.d
	made=
	if [ ! -e "$prc" ]; then printf '#!/bin/sh\nexit 101\n' >"$prc"; chmod +x "$prc"; made=1; fi
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends rsyslog >&2
	[ -n "$made" ] && rm -f "$prc"
	bin=/usr/sbin/rsyslogd
fi
echo "$bin"
