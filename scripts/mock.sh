#!/usr/bin/env bash
# The mock of the contract that frontend teams develop against (scripts/mock-server.ts): Prism
# serving the contract's examples, each request in the key style its x-api-inflection header asks
# for, STYLE when it sends none. Usage: scripts/mock.sh [camel|dash|snake|pascal] [PORT]
set -euo pipefail
cd "$(dirname "$0")/.."
style=${1:-snake}
port=${2:-4010}
case "$style" in
  snake | camel | dash | pascal) ;;
  *) echo "STYLE must be one of camel, dash, snake, pascal (got '$style')" >&2; exit 2 ;;
esac
exec node --import tsx scripts/mock-server.ts "$style" "$port"
