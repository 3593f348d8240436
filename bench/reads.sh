#!/usr/bin/env bash
# API reads on one node whose PostgreSQL is RTT_MS away: `wrk` sends GET PATH at each
# concurrency of CONCS to one `triad serve` per build of BUILDS (alternating, the order
# swapped each round), its database behind `triad bench-proxy` holding each byte RTT_MS/2
# each way. Prints, per point, requests/s, p50 and p99, and from pg_stat_statements the
# reads of the log (`Core::catch_up`, the statement `EVENTS_AFTER`) and all statements per
# request. Needs root (PostgreSQL runs as the `postgres` user) and wrk (apt-get install -y
# wrk).
#
#   cargo build --release -p triad
#   sudo bench/reads.sh                                    # this build: RTT_MS=1 CONCS="1 16 64"
#   BUILDS="/tmp/triad-old /tmp/triad-new" ROUNDS=4 OUT=bench/results/reads-1 sudo -E bench/reads.sh
#
# Pinning: the node on CPU 0; PostgreSQL, the proxy and wrk on CPU 1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TRIAD_BUILT=${CARGO_TARGET_DIR:-$ROOT/target}/release/triad
BUILDS=${BUILDS:-$TRIAD_BUILT}
RTT_MS=${RTT_MS:-1}
CONCS=${CONCS:-1 16 64}
ROUNDS=${ROUNDS:-1}
SECONDS_PER_POINT=${SECONDS_PER_POINT:-6}
REQUEST_PATH=${REQUEST_PATH:-/api/matches?limit=20}
OUT=${OUT:-$ROOT/bench/results/reads-$(date -u +%Y%m%dT%H%M%SZ)}

for build in $BUILDS; do
  [ -x "$build" ] || { echo "no $build: run cargo build --release -p triad (or set BUILDS)" >&2; exit 1; }
done
# shellcheck source=bench/pg_lib.sh
. "$ROOT/bench/pg_lib.sh"
pg_require taskset wrk python3
mkdir -p "$OUT"
PGROOT=$(mktemp -d /tmp/triad-reads.XXXX)
TRIAD=${BUILDS%% *}
PROXY=
cleanup() {
  [ -n "$PROXY" ] && kill "$PROXY" 2>/dev/null
  pg_cleanup
}
trap cleanup EXIT

pg_start 1 max_connections=200 shared_preload_libraries=pg_stat_statements
psql "$PGURL/postgres" -qc "CREATE DATABASE reads"
psql "$PGURL/reads" -qc "CREATE EXTENSION pg_stat_statements"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
taskset -c 1 "$TRIAD" bench-proxy --listen "127.0.0.1:$port" --upstream "127.0.0.1:${PGURL##*:}" \
  --delay-us "$(python3 -c "print(round($RTT_MS * 500))")" 2>"$OUT/proxy.log" &
PROXY=$!
sleep 0.5
database="postgres://postgres@127.0.0.1:$port/reads"
sql() { psql "$PGURL/reads" -qAtc "$1"; }

echo "build round c requests_per_s p50 p99 log_reads_per_request statements_per_request" | tee "$OUT/results.txt"
for round in $(seq "$ROUNDS"); do
  order=$BUILDS
  [ $((round % 2)) = 0 ] && order=$(echo "$BUILDS" | tr ' ' '\n' | tac | tr '\n' ' ')
  for build in $order; do
    TRIAD=$build
    server_start 0 "$database" "$PGROOT"
    taskset -c 1 wrk -t1 -c4 -d2s "$URL$REQUEST_PATH" >/dev/null
    for c in $CONCS; do
      sql "SELECT pg_stat_statements_reset()" >/dev/null
      raw=$(taskset -c 1 wrk -t1 -c"$c" -d"${SECONDS_PER_POINT}s" --latency "$URL$REQUEST_PATH")
      echo "$raw" >"$OUT/$(basename "$build")-r$round-c$c.wrk"
      sql "SELECT calls, round(total_exec_time::numeric, 1), query FROM pg_stat_statements \
           ORDER BY calls DESC" >"$OUT/$(basename "$build")-r$round-c$c.statements"
      requests=$(echo "$raw" | awk '/requests in/{print $1}')
      log_reads=$(sql "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements \
                       WHERE query LIKE 'SELECT e.seq, e.body, e.match_id,%'")
      statements=$(sql "SELECT sum(calls) FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'")
      echo "$(basename "$build") $round $c $(echo "$raw" | awk '/Requests\/sec/{print $2}') \
$(echo "$raw" | awk '$1=="50%"{print $2}') $(echo "$raw" | awk '$1=="99%"{print $2}') \
$(python3 -c "print(f'{$log_reads / $requests:.2f} {$statements / $requests:.2f}')")" | tee -a "$OUT/results.txt"
    done
    server_stop
  done
done
