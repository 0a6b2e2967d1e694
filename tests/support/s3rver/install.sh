#!/usr/bin/env bash
# Installs the test S3 server (s3rver, pinned by package-lock.json) and its SigV4-checking wrapper
# (server.js) into DEST with `npm ci`, from the npm registry npm is configured for. Skips the
# install when DEST already holds this exact lock file. Usage: install.sh DEST
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dest="${1:?usage: install.sh DEST}"
command -v node >/dev/null || { echo "install.sh: node is not installed (scripts/install-deps.sh)" >&2; exit 1; }
command -v npm >/dev/null || { echo "install.sh: npm is not installed (scripts/install-deps.sh)" >&2; exit 1; }
mkdir -p "$dest"
cp "$here/server.js" "$dest/server.js"
if [[ -f "$dest/node_modules/s3rver/package.json" ]] && cmp -s "$here/package-lock.json" "$dest/package-lock.json"; then
  exit 0
fi
cp "$here/package.json" "$here/package-lock.json" "$dest/"
npm ci --prefix "$dest" --omit=dev --no-audit --no-fund --loglevel=error
