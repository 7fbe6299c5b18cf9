#!/usr/bin/env bash
# Bundles the multi-file contract into one document, derives the same contract in every other key
# style of x-api-inflection, and generates the TypeScript types of each.
# Usage: scripts/generate.sh [OUT_DIR]   (default: generated/; the lint drift check passes a temp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-generated}
mkdir -p "$out"
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
npx --no-install redocly bundle main --ext json -o "$out/openapi.json" 2>&1 | grep -v -e '^\s*$' -e '║' -e '╔' -e '╚' >&2 || true
test -s "$out/openapi.json"
# The French path names are copies of their English paths, made here (src/contract/path-aliases.ts).
node --import tsx scripts/alias-paths.ts "$out/openapi.json"
# openapi.json is snake_case (the default); openapi.camel.json, .dash and .pascal come from it.
node --import tsx scripts/style-contracts.ts "$out"
# Run from the output folder: openapi-typescript would otherwise pick up redocly.yaml's `apis`.
bin=$PWD/node_modules/.bin
for bundle in openapi openapi.camel openapi.dash openapi.pascal; do
  (cd "$out" && "$bin/openapi-typescript" "$bundle.json" -o "$bundle.d.ts" --root-types --root-types-no-schema-prefix >/dev/null)
done
