#!/usr/bin/env bash
# Bundles the multi-file contract into one document and generates the TypeScript types from it.
# Usage: scripts/generate.sh [OUT_DIR]   (default: generated/; the lint drift check passes a temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-generated}
mkdir -p "$out"
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
npx --no-install redocly bundle main --ext json -o "$out/openapi.json" 2>&1 | grep -v -e '^\s*$' -e '║' -e '╔' -e '╚' >&2 || true
test -s "$out/openapi.json"
# Run from the output folder: openapi-typescript would otherwise pick up redocly.yaml's `apis`.
bin=$PWD/node_modules/.bin
(cd "$out" && "$bin/openapi-typescript" openapi.json -o openapi.d.ts --root-types --root-types-no-schema-prefix >/dev/null)
