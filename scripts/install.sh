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
# The marker of the former `make install` (empty, dated after the manifests): that install is
# current; it gets its digest and keeps its date, so nothing is rebuilt for it.
if [ -d node_modules ] && [ -f "$marker" ] && [ ! -s "$marker" ] && [ "$marker" -nt package.json ] && [ "$marker" -nt package-lock.json ]; then
  touch -r "$marker" "$marker.date"
  echo "$want" > "$marker"
  touch -r "$marker.date" "$marker"
  rm -f "$marker.date"
  exit 0
fi
npm ci --no-audit --no-fund
echo "$want" > "$marker"
