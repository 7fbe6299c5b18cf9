#!/usr/bin/env bash
# `make install`: `npm ci`, only when the dependencies changed. node_modules/.installed holds a digest
# of package.json and package-lock.json; the same digest means the same install (a copied or kept
# node_modules included), so nothing runs and the marker is left as it is: make re-reads its date
# after this script, finds it unchanged, and rebuilds nothing for a manifest that only got a newer
# date (a fresh clone, a checkout). The check costs a digest on every make.
set -euo pipefail
cd "$(dirname "$0")/.."
marker=node_modules/.installed
want=$(cat package.json package-lock.json | sha256sum | cut -c1-64)
if [ -d node_modules ] && [ "$(cat "$marker" 2>/dev/null)" = "$want" ]; then
  exit 0
fi
npm ci --no-audit --no-fund
echo "$want" > "$marker"
