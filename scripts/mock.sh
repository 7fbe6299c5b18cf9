#!/usr/bin/env bash
# Prism serving the contract's examples in one key style of x-api-inflection (default snake), as a
# frontend team develops against it. Usage: scripts/mock.sh [camel|dash|snake|pascal] [PORT]
set -euo pipefail
cd "$(dirname "$0")/.."
style=${1:-snake}
port=${2:-4010}
case "$style" in
  snake) bundle=generated/openapi.json ;;
  camel | dash | pascal) bundle=generated/openapi.$style.json ;;
  *) echo "STYLE must be one of camel, dash, snake, pascal (got '$style')" >&2; exit 2 ;;
esac
exec node_modules/.bin/prism mock "$bundle" --host 127.0.0.1 --port "$port"
