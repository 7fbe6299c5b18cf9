#!/usr/bin/env bash
# Fails when generated/ is not what `make generate` would produce from openapi/ now.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
scripts/generate.sh "$tmp"
if ! diff -r -q generated "$tmp" >/dev/null; then
  diff -r -u generated "$tmp" | head -40
  echo "generated/ is stale: run 'make generate' and commit the result." >&2
  exit 1
fi
echo "generated/ is up to date."
