#!/usr/bin/env bash
# The floor (BENCHMARKS.md, "The physical floor"): what a WebSocket server must spend on this
# machine to carry the frames of the benchmark's games and do nothing else, with the same
# pinning as bench/compare.sh (server on CPU 0, clients on CPU 1), against which Triad's
# and boardgame.io's CPU per game can be read.
#
#   bench/floor.sh        # 100 pairs x 50 games; moves only, and with the setup frames;
#                         # in memory, and durable (every move fsynced first); 3 repeats
#   PAIRS=100 GAMES=50 REPEAT=3 bench/floor.sh
# The durable log goes to bench/floor/target/, on the same disk as bench/compare.sh's
# durable databases (bench/results/...), unless LOG_DIR says otherwise.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PAIRS=${PAIRS:-100}
GAMES=${GAMES:-50}
REPEAT=${REPEAT:-3}
TARGET=${FLOOR_TARGET_DIR:-$ROOT/bench/floor/target}
command -v taskset >/dev/null || { echo "taskset is missing (apt-get install util-linux)" >&2; exit 1; }
CARGO_TARGET_DIR=$TARGET cargo build --release --locked --quiet --manifest-path "$ROOT/bench/floor/Cargo.toml"
FLOOR=$TARGET/release/triad-floor
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
LOG_DIR=${LOG_DIR:-$TARGET}
OUT=$(mktemp); LOG=$LOG_DIR/floor-$$.log; SERVER=
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -f "$OUT" "$LOG"' EXIT
for rep in $(seq "$REPEAT"); do
  for variant in memory "memory --setup" durable "durable --setup"; do
    set -- $variant
    durable=(); [ "$1" = durable ] && durable=(--durable "$LOG")
    setup=${2:-}
    : > "$OUT"; rm -f "$LOG"
    taskset -c 0 "$FLOOR" server 127.0.0.1:0 "${durable[@]}" > "$OUT" & SERVER=$!
    for _ in $(seq 100); do ADDR=$(awk '/^listening/{print $2}' "$OUT"); [ -n "$ADDR" ] && break; sleep 0.05; done
    [ -n "$ADDR" ] || { echo "the floor server did not start" >&2; exit 1; }
    echo -n "repeat $rep, $1: "
    taskset -c 1 "$FLOOR" client "$ADDR" "$PAIRS" "$GAMES" $setup --server-pid "$SERVER"
    kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=
  done
done
