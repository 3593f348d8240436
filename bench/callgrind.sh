#!/usr/bin/env bash
# Where the server's CPU goes: runs `triad serve` under callgrind (fresh SQLite file, rate
# limits lifted), drives GAMES games at concurrency CONC with `triad bench` (not under
# valgrind), stops the server with SIGTERM so callgrind writes its file, and annotates it.
# With GAMES=0 it only starts the server, fetches / once and stops it: the start-up cost to
# subtract. Instruction counts are user-space only and repeat within ~1% (two runs of one
# binary: 7.287 M and 7.285 M instructions per game).
#
#   cargo build --release -p triad
#   bench/callgrind.sh /tmp/cg/base 0 && bench/callgrind.sh /tmp/cg/run 200
#   bench/callgrind_categories.py 200 /tmp/cg/run /tmp/cg/base
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:?usage: callgrind.sh DIR GAMES}
GAMES=${2:?usage: callgrind.sh DIR GAMES}
CONC=${CONC:-10}
# More `triad bench` options: BENCH_ARGS=--login-per-game is the mode of the first profile.
BENCH_ARGS=${BENCH_ARGS:-}
PORT=${PORT:-18731}
TRIAD=${TRIAD:-${CARGO_TARGET_DIR:-$ROOT/target}/release/triad}
command -v valgrind >/dev/null || { echo "valgrind is missing: apt-get install valgrind" >&2; exit 1; }
rm -rf "$DIR" && mkdir -p "$DIR"
valgrind --tool=callgrind --callgrind-out-file="$DIR/cg.out" --dump-instr=no \
  "$TRIAD" serve --addr "127.0.0.1:$PORT" --database "$DIR/t.db" \
  --rate-per-ip 1000000000 --rate-per-address 1000000000 --rate-burst 1000000000 --ws-rate 1000000000 \
  --max-connections-per-ip 1000000000 --max-websockets-per-ip 1000000000 --replay-events-per-ip 1000000000 \
  >"$DIR/server.log" 2>"$DIR/valgrind.log" &
VG=$!
for _ in $(seq 120); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 1; done
if [ "$GAMES" != 0 ]; then
  taskset -c 1 "$TRIAD" bench --server "http://127.0.0.1:$PORT" --concurrency "$CONC" \
    --games "$GAMES" --warmup 0 --game-timeout-s 600 --no-progress --json "$DIR/bench.json" $BENCH_ARGS \
    >"$DIR/bench.out" 2>&1
fi
kill -TERM "$VG"
wait "$VG" || true
callgrind_annotate --threshold=100 --auto=no "$DIR/cg.out" >"$DIR/self.txt"
callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$DIR/cg.out" >"$DIR/incl.txt"
grep 'PROGRAM TOTALS' "$DIR/self.txt"
