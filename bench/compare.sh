#!/usr/bin/env bash
# Triad against its peer, boardgame.io (bench/peer), on this machine, one after the other:
# the same seeded games, the same pinning (server on CPU 0, load generator on CPU 1), a
# fresh server for every point. Prints the table of ratios Triad / peer and draws the chart.
#
#   cargo build --release -p triad
#   bench/compare.sh                      # concurrency 1,10,100,500; 1000 games; 2 repeats
#   CONC=100 GAMES=500 REPEAT=1 bench/compare.sh
#   OUT=bench/results/x MODES=memory CONC=500 REPS=2 SKIP_PEER=1 bench/compare.sh  # redo a point
#   BENCH_ARGS=--login-per-game SKIP_PEER=1 CONC=100 bench/compare.sh  # two logins per game
#
# Triad runs twice per point: "durable" (SQLite on disk, synchronous=FULL, every move
# committed before it is acknowledged: the default) and "memory" (the same server with its
# SQLite file on /dev/shm, a tmpfs where fsync does nothing: the like-for-like comparison
# with boardgame.io, which keeps matches in memory and never makes a move durable).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEER=$ROOT/bench/peer
CONC=${CONC:-1,10,100,500}
GAMES=${GAMES:-1000}
REPEAT=${REPEAT:-2}
SEED=${SEED:-1}
TRIAD=${TRIAD:-${CARGO_TARGET_DIR:-$ROOT/target}/release/triad}
OUT=${OUT:-$ROOT/bench/results/$(date -u +%Y%m%dT%H%M%SZ)}
DISK_DIR=${DISK_DIR:-$OUT/db}
SHM_DIR=${SHM_DIR:-/dev/shm/triad-bench-$$}
SKIP_PEER=${SKIP_PEER:-0}
MODES=${MODES:-durable memory}
# More `triad bench` options, e.g. BENCH_ARGS=--login-per-game (two fresh logins per game;
# by default each client logs in once and plays its slot's games).
BENCH_ARGS=${BENCH_ARGS:-}
REPS=${REPS:-$(seq "$REPEAT")}

[ -x "$TRIAD" ] || { echo "no $TRIAD: run cargo build --release -p triad (or set TRIAD)" >&2; exit 1; }
command -v taskset >/dev/null || { echo "taskset is missing (apt-get install util-linux)" >&2; exit 1; }
if [ "$SKIP_PEER" != 1 ] && [ ! -d "$PEER/node_modules/boardgame.io" ]; then
  (cd "$PEER" && npm ci --no-audit --no-fund --loglevel=error)
fi
mkdir -p "$OUT" "$DISK_DIR" "$SHM_DIR"
# 2 sockets per game on each side; the 10,000-game hold needs far more than the default.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# shellcheck source=bench/node_lib.sh
. "$ROOT/bench/node_lib.sh"
cleanup() {
  server_stop
  rm -rf "$SHM_DIR"
}
trap cleanup EXIT

run_triad() {
  local label=$1 dir=$2 c rep status=0
  for c in ${CONC//,/ }; do
    for rep in $REPS; do
      rm -f "$dir"/triad.db*   # a fresh database for every point
      server_start 0 "$dir/triad.db" "$dir"
      echo "triad $label: concurrency $c, repeat $rep ($URL, pid $SERVER_PID)" >&2
      taskset -c 1 "$TRIAD" bench --server "$URL" --server-pid "$SERVER_PID" \
        --concurrency "$c" --games "$GAMES" --seed "$SEED" --label "triad $label" \
        --json "$OUT/triad-$label-c$c-r$rep.json" $BENCH_ARGS >/dev/null || status=1
      server_stop
    done
  done
  return $status
}

# The peer, point by point as Triad: a fresh boardgame.io server pinned to CPU 0 (it prints
# its port on its first line), its load generator pinned to CPU 1.
run_peer() {
  local c rep port status=0 dir=$OUT/peer-server
  mkdir -p "$dir"
  for c in ${CONC//,/ }; do
    for rep in $REPS; do
      NODE_ENV=production taskset -c 0 node "$PEER/server.js" --port 0 >"$dir/server.out" 2>"$dir/server.log" &
      SERVER_PID=$!
      port=
      for _ in $(seq 200); do
        port=$(sed -n 's/.*"ready":true,"port":\([0-9]*\).*/\1/p' "$dir/server.out" | head -1)
        [ -n "$port" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || { cat "$dir/server.log" >&2; return 1; }
        sleep 0.1
      done
      [ -n "$port" ] || { echo "the peer did not start" >&2; return 1; }
      echo "peer: concurrency $c, repeat $rep (http://127.0.0.1:$port, pid $SERVER_PID)" >&2
      NODE_ENV=production taskset -c 1 node "$PEER/loadgen.js" --url "http://127.0.0.1:$port" \
        --server-pid "$SERVER_PID" --concurrency "$c" --games "$GAMES" --seed "$SEED" \
        | tail -1 >"$OUT/peer-c$c-r$rep.json" || status=1
      server_stop
    done
  done
  rm -rf "$dir"
  return $status
}

status=0
for mode in $MODES; do
  case $mode in
    durable) run_triad durable "$DISK_DIR" || status=1 ;;
    memory) run_triad memory "$SHM_DIR" || status=1 ;;
    *) echo "unknown mode $mode (durable, memory)" >&2; exit 2 ;;
  esac
done
if [ "$SKIP_PEER" != 1 ]; then
  run_peer || status=1
fi
node "$ROOT/bench/compare.js" "$OUT" | tee "$OUT/table.md"
"$TRIAD" bench --chart-from "$OUT/combined.json" --svg "$OUT/chart.svg"
echo "results in $OUT" >&2
exit $status
