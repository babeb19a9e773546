#!/bin/sh
# Verify a hookd release with tools every Linux and macOS has (docs/releasing.md):
#
#   packaging/verify.sh DIR [ALLOWED_SIGNERS]
#
# 1. SHA256SUMS.sig is a signature by the release key over SHA256SUMS (ssh-keygen -Y
#    verify; ALLOWED_SIGNERS defaults to the project's packaging/allowed_signers);
# 2. every archive in DIR has the sum SHA256SUMS lists.
# Exit 0 only when both hold. The same two commands by hand are in docs/releasing.md.
set -eu
dir=${1:?usage: verify.sh DIR [ALLOWED_SIGNERS]}
signers=${2:-$(dirname "$0")/allowed_signers}
cd "$dir"
ssh-keygen -Y verify -f "$signers" -I release@hookd.dev -n hookd-release -s SHA256SUMS.sig <SHA256SUMS
if command -v sha256sum >/dev/null 2>&1; then
	sha256sum --strict -c SHA256SUMS
else
	shasum -a 256 -c SHA256SUMS
fi
