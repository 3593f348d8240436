#!/usr/bin/env bash
# The cluster's write statement alone: what PostgreSQL spends executing one batch's write,
# per event, with the match topics' rows stored (schema 7) and without them (schema 8,
# where a match's topic is derived from `events.match_id`). This is most of the work a
# command does under the cluster lock (BENCHMARKS.md, "Nodes on separate hosts").
#
#   cargo build --release -p triad
#   sudo bench/pg_write.sh                 # GAMES=3000 BATCHES=300 ROUNDS=6
#
# 1. A throwaway PostgreSQL pinned to PG_CPU (durable as shipped), and a log: `triad serve`
#    on it with `triad bench --concurrency 256 --games GAMES` against it, on OTHER_CPU.
# 2. BATCHES batches of 100 consecutive events of that log, as the statement's JSON arrays
#    with their keys shifted past the log's (`pg_write/build.sql`).
# 3. Two copies of the database: `schema8` as the log is; `schema7` without the index
#    `events_by_match` and with a topic row for each event of a match, as version 7 kept
#    them.
# 4. Each copy writes the same batches (`pg_write/write.sql`), one transaction each, in
#    ROUNDS chunks, the two alternating and the order swapped each round; the statement's
#    time and the commit's are recorded apart.
# Prints, per variant, the batches, the mean and median statement µs, µs per event and the
# mean commit µs, and the ratio of the means; everything goes to OUT.
# Needs root (PostgreSQL runs as the `postgres` user), Debian's postgresql package, psql.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GAMES=${GAMES:-3000}
BATCHES=${BATCHES:-300}
ROUNDS=${ROUNDS:-6}
PG_CPU=${PG_CPU:-1}
OTHER_CPU=${OTHER_CPU:-0}
TRIAD=${TRIAD:-${CARGO_TARGET_DIR:-$ROOT/target}/release/triad}
OUT=${OUT:-$ROOT/bench/results/pg-write-$(date -u +%Y%m%dT%H%M%SZ)}

die() { echo "pg_write.sh: $*" >&2; exit 1; }
[ -x "$TRIAD" ] || die "no $TRIAD: run cargo build --release -p triad (or set TRIAD)"
# shellcheck source=bench/pg_lib.sh
. "$ROOT/bench/pg_lib.sh"
pg_require taskset
[ $((BATCHES % ROUNDS)) = 0 ] || die "BATCHES ($BATCHES) must be a multiple of ROUNDS ($ROUNDS)"
mkdir -p "$OUT"

PGROOT=$(mktemp -d /tmp/triad-pgwrite.XXXXXX)
trap pg_cleanup EXIT
pg_start "$PG_CPU"
psql_() { taskset -c "$OTHER_CPU" psql -X -v ON_ERROR_STOP=1 -qAt "$@"; }
echo "PostgreSQL $(psql_ "$PGURL/postgres" -c 'SHOW server_version') on CPU $PG_CPU; $(nproc) cores" | tee "$OUT/setup.txt" >&2

# 1. The log.
psql_ "$PGURL/postgres" -c "CREATE DATABASE log"
server_start "$OTHER_CPU" "$PGURL/log" "$OUT" || die "the server did not start"
taskset -c "$OTHER_CPU" "$TRIAD" bench --server "$URL" --concurrency 256 --games "$GAMES" \
  --no-progress >/dev/null 2>"$OUT/bench.log" || die "triad bench failed: $(cat "$OUT/bench.log")"
server_stop
events=$(psql_ "$PGURL/log" -c "SELECT count(*) FROM events")
need=$((1000 + BATCHES * 100))
[ "$events" -ge "$need" ] || die "the log has $events events, $need needed: raise GAMES or lower BATCHES"
echo "log: $events events from $GAMES games" | tee -a "$OUT/setup.txt" >&2

# 2. The batches.
psql_ "$PGURL/log" -v off=1000000000 -v batches="$BATCHES" -f "$ROOT/bench/pg_write/build.sql"

# 3. The two schemas.
for v in schema7 schema8; do
  psql_ "$PGURL/postgres" -c "CREATE DATABASE $v TEMPLATE log"
done
psql_ "$PGURL/schema7" -c "DROP INDEX events_by_match" \
  -c "INSERT INTO event_topics (topic, seq) SELECT 'match:' || match_id, seq FROM events WHERE match_id IS NOT NULL"
for v in schema7 schema8; do
  psql_ "$PGURL/$v" -c "VACUUM ANALYZE" -f "$ROOT/bench/pg_write/write.sql"
done

# 4. The writes, alternating.
chunk=$((BATCHES / ROUNDS))
for r in $(seq 0 $((ROUNDS - 1))); do
  lo=$((r * chunk)) hi=$((r * chunk + chunk - 1))
  order="schema7 schema8"; [ $((r % 2)) = 1 ] && order="schema8 schema7"
  for v in $order; do
    all=false; [ "$v" = schema7 ] && all=true
    psql_ "$PGURL/$v" -c "CALL write_batches('$v', $lo, $hi, $all)"
  done
done

for v in schema7 schema8; do
  psql_ "$PGURL/$v" -F ' | ' -c "SELECT variant, count(*), round(avg(us)), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY us)::numeric),
    round((avg(us) / 100)::numeric, 1), round(avg(commit_us)) FROM timings GROUP BY variant"
done >"$OUT/timings.txt"
{
  echo "| variant | batches | statement µs, mean | median | µs per event | commit µs, mean |"
  echo "|---|---:|---:|---:|---:|---:|"
  sed 's/^/| /; s/$/ |/' "$OUT/timings.txt"
  awk -F' [|] ' '{m[$1] = $3} END { printf "\nschema8 / schema7, statement: %.2f\n", m["schema8"] / m["schema7"] }' "$OUT/timings.txt"
} | tee "$OUT/table.md"
