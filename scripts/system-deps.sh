#!/usr/bin/env bash
# Installs the Debian packages the test suite drives for real, when they are missing:
# the PostgreSQL 15 server binaries, nginx (the load balancer of the multi-process tests),
# PgBouncer (the connection pooler of test/pgbouncer.test.ts) and Chromium (the end-to-end tests
# of the web interface). With `bench`, also wrk (the load generator
# of bench/) and perf (its profiles). Needs root (or sudo) only when something is missing.
set -euo pipefail
missing=()
[ "${1:-}" = bench ] && { [ -x /usr/bin/wrk ] || missing+=(wrk); [ -x /usr/bin/perf ] || missing+=(linux-perf); }
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql-15)
[ -x /usr/sbin/nginx ] || missing+=(nginx)
[ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "Installing Debian packages: ${missing[*]}"
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
