#!/usr/bin/env bash
# One node on PostgreSQL against one node on SQLite, on this machine, in one run: the same
# `triad bench` load against a server on an SQLite file and a server on a throwaway
# PostgreSQL (started here, removed at the end), alternating, REPEAT times each. Prints
# games/s, move p50/p99, the server's CPU per game and PostgreSQL's own CPU per game, and
# the ratio PostgreSQL / SQLite. Needs root (PostgreSQL runs as the `postgres` user).
#
#   cargo build --release -p triad
#   bench/pg.sh                               # CONC=100 GAMES=1000 REPEAT=2
#   CONC=100 GAMES=2000 REPEAT=3 OUT=bench/results/pg2 bench/pg.sh
#
# Pinning: the server on CPU 0 (as in compare.sh), the load generator and PostgreSQL on
# CPU 1 (SERVER_CPU, BENCH_CPU, PG_CPU): the node has one core on either backend, and
# PostgreSQL's CPU is counted apart (every postgres process of this cluster, the exited
# ones through the postmaster's children's times; over the whole `triad bench` run, its
# warm-up and logins included, divided by the games played, warm-up included).
# PostgreSQL runs with pg_stat_statements: each repeat's statements (calls, calls per
# game, milliseconds), by total time, go to `postgres-c<CONC>-r<N>.statements`.
# Durability is the same on both sides: SQLite `synchronous=FULL`; PostgreSQL `fsync=on`,
# `synchronous_commit=on` (an acknowledged move survives a crash of either).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CONC=${CONC:-100}
GAMES=${GAMES:-1000}
REPEAT=${REPEAT:-2}
SEED=${SEED:-1}
SERVER_CPU=${SERVER_CPU:-0}
BENCH_CPU=${BENCH_CPU:-1}
PG_CPU=${PG_CPU:-1}
TRIAD=${TRIAD:-${CARGO_TARGET_DIR:-$ROOT/target}/release/triad}
OUT=${OUT:-$ROOT/bench/results/pg-$(date -u +%Y%m%dT%H%M%SZ)}
BENCH_ARGS=${BENCH_ARGS:-}

[ -x "$TRIAD" ] || { echo "no $TRIAD: run cargo build --release -p triad (or set TRIAD)" >&2; exit 1; }
# shellcheck source=bench/pg_lib.sh
. "$ROOT/bench/pg_lib.sh"
pg_require taskset jq curl
mkdir -p "$OUT"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

PGROOT=$(mktemp -d /tmp/triad-pgbench.XXXXXX)
DBDIR=$PGROOT/sqlite
trap pg_cleanup EXIT

# A throwaway PostgreSQL on a free port, pinned to PG_CPU, durable as shipped.
pg_start "$PG_CPU" max_connections=200 full_page_writes=on \
  shared_preload_libraries=pg_stat_statements pg_stat_statements.track=all
PG_VERSION=$(psql "$PGURL/postgres" -qAtc 'SHOW server_version')
echo "PostgreSQL $PG_VERSION at $PGURL (fsync $(psql "$PGURL/postgres" -qAtc 'SHOW fsync'), synchronous_commit $(psql "$PGURL/postgres" -qAtc 'SHOW synchronous_commit'))" >&2

# CPU seconds of this cluster's processes: the postmaster (its own and its reaped
# children's times) and every live child.
pg_cpu_s() {
  local pm ticks=0 c t
  pm=$(head -1 "$PGROOT/data/postmaster.pid")
  ticks=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pm/stat")
  for c in $(ps -o pid= --ppid "$pm"); do
    t=$(awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || echo 0)
    ticks=$((ticks + t))
  done
  awk -v t="$ticks" 'BEGIN { printf "%.2f", t / 100 }'
}

# One point: $1 the label (sqlite, postgres), $2 the repeat.
run_point() {
  local label=$1 rep=$2 database before after json
  json=$OUT/$label-c$CONC-r$rep.json
  case $label in
    sqlite) rm -rf "$DBDIR"; mkdir -p "$DBDIR"; database=$DBDIR/triad.db ;;
    postgres)
      psql "$PGURL/postgres" -qc "CREATE DATABASE triad_r$rep"
      psql "$PGURL/triad_r$rep" -qc "CREATE EXTENSION pg_stat_statements; SELECT pg_stat_statements_reset()" >/dev/null
      database=$PGURL/triad_r$rep ;;
  esac
  server_start "$SERVER_CPU" "$database" "$PGROOT"
  echo "$label: concurrency $CONC, $GAMES games, repeat $rep ($URL, pid $SERVER_PID)" >&2
  before=$(pg_cpu_s)
  taskset -c "$BENCH_CPU" "$TRIAD" bench --server "$URL" --server-pid "$SERVER_PID" \
    --concurrency "$CONC" --games "$GAMES" --seed "$SEED" --label "triad $label" \
    --json "$json" $BENCH_ARGS >/dev/null
  after=$(pg_cpu_s)
  # The batches' metrics: commit time, batch sizes and, on PostgreSQL, the lock's wait and hold.
  curl -sf "$URL/metrics" | grep -E '^triad_(commit|cluster)_' >"$OUT/$label-c$CONC-r$rep.metrics" || true
  server_stop
  if [ "$label" = postgres ]; then
    # Which statements PostgreSQL spent its time on: calls per game and time, by total time.
    psql "$PGURL/triad_r$rep" -qAt -F ' | ' -c "SELECT calls, round((calls::numeric / $GAMES), 2), round(total_exec_time::numeric, 1), left(regexp_replace(query, '\s+', ' ', 'g'), 140)
      FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC LIMIT 25" >"$OUT/$label-c$CONC-r$rep.statements" || true
  fi
  # PostgreSQL's CPU over the run, beside the bench's own figures.
  jq --argjson pg "$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.2f", b - a }')" \
    '.series[0].points[0].postgres_cpu_s = $pg' "$json" >"$json.tmp" && mv "$json.tmp" "$json"
}

for rep in $(seq "$REPEAT"); do
  run_point sqlite "$rep"
  run_point postgres "$rep"
done

# The table: each point, then the means and the ratio PostgreSQL / SQLite.
{
  echo "| backend | repeat | games/s | move p50 ms | move p99 ms | server CPU ms/game | PostgreSQL CPU ms/game | total CPU ms/game |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for label in sqlite postgres; do
    for rep in $(seq "$REPEAT"); do
      jq -r --arg l "$label" --arg r "$rep" '.series[0].points[0] as $p
        | ($p.games_ok + $p.warmup_ok) as $g
        | (($p.postgres_cpu_s // 0) * 1000 / $g) as $pg
        | "| \($l) | \($r) | \($p.games_per_s) | \($p.move_latency_ms.p50) | \($p.move_latency_ms.p99) | \($p.server.cpu_ms_per_game) | \(if $l == "postgres" then ($pg * 1000 | round / 1000) else "–" end) | \(($p.server.cpu_ms_per_game + (if $l == "postgres" then $pg else 0 end)) * 1000 | round / 1000) |"' \
        "$OUT/$label-c$CONC-r$rep.json"
    done
  done
  echo
  echo "| backend | repeat | batches | commands per batch | events per batch | commit ms per batch | lock wait ms | lock hold ms |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  for label in sqlite postgres; do
    for rep in $(seq "$REPEAT"); do
      awk -v l="$label" -v r="$rep" '
        { v[$1] = $2 }
        function per(name, scale) {
          return (v[name "_count"] > 0) ? sprintf("%.3g", v[name "_sum"] / v[name "_count"] * scale) : "–"
        }
        END {
          printf "| %s | %s | %d | %s | %s | %s | %s | %s |\n", l, r, v["triad_commit_batch_commands_count"],
            per("triad_commit_batch_commands", 1), per("triad_commit_batch_events", 1),
            per("triad_commit_seconds", 1000), per("triad_cluster_lock_wait_seconds", 1000),
            per("triad_cluster_lock_hold_seconds", 1000)
        }' "$OUT/$label-c$CONC-r$rep.metrics"
    done
  done
  mean() { jq -s "[.[].series[0].points[0].games_per_s] | add / length" "$OUT"/"$1"-c"$CONC"-r*.json; }
  sqlite=$(mean sqlite)
  postgres=$(mean postgres)
  echo
  echo "Mean games/s: SQLite $sqlite, PostgreSQL $postgres; PostgreSQL / SQLite = $(awk -v p="$postgres" -v s="$sqlite" 'BEGIN { printf "%.2f", p / s }')"
  echo "(PostgreSQL $PG_VERSION, fsync on, synchronous_commit on; server on CPU $SERVER_CPU, load generator on CPU $BENCH_CPU, PostgreSQL on CPU $PG_CPU; concurrency $CONC, $GAMES games)"
} | tee "$OUT/table.md"
echo "results in $OUT" >&2
