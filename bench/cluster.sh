#!/usr/bin/env bash
# Nodes on separate hosts, on one machine: PostgreSQL, every `triad serve` node and the load
# generator each in a network namespace of its own, joined by veth pairs to a bridge in a
# "switch" namespace, with a real round-trip time between them. The kernel here has no tc
# qdiscs (no netem), so the delay is `triad bench-proxy`'s: one in front of PostgreSQL (in
# its namespace) and one in front of each node (in the node's), each holding every byte for
# RTT/2 in each direction. So node <-> PostgreSQL and client <-> node traffic both see the
# RTT (plus the veths' own few tens of microseconds).
#
# For each RTT and each number of nodes: a fresh database, the nodes, `triad bench` spread
# over them (each game's two players on different nodes), then every node's /metrics and
# the CPU each part spent (the nodes, PostgreSQL, the proxies, the rest of the machine). Prints
# the table, with throughput as a ratio to the 1-node point of the same RTT, and the lock's
# figures that the capacity model in BENCHMARKS.md is built from.
#
#   cargo build --release -p triad
#   sudo bench/cluster.sh                          # RTTS="0 0.2 1" NODES="1 2 4"
#   RTTS=1 NODES="1 4" CONC=64 GAMES=400 sudo bench/cluster.sh
#   PG_OPTS="-c synchronous_commit=off" STATEMENTS=1 sudo bench/cluster.sh
#   FOLLOWERS=1 NODES="1 2" sudo bench/cluster.sh
#   NODE_CPU=0.15 CONC=256 sudo bench/cluster.sh
#   PG_CPU=1 NODES=1 STATEMENTS=1 sudo taskset -c 0 bench/cluster.sh
#
# PG_OPTS adds PostgreSQL settings (as `postgres -c` options); STATEMENTS=1 loads
# pg_stat_statements and writes each point's 25 costliest statements to `<point>.statements`.
# FOLLOWERS=k starts k more nodes at each point that no client uses: they only follow the
# others (apply and publish every batch, as any node does), so their CPU per game is what
# following costs a node, apart from serving.
# NODE_CPU=x gives each node (followers too) x cores of CPU time and no more, as a host of its
# own would (a cgroup's CFS quota: 1 ms of CPU per 1/x ms), so that the nodes, not the two
# cores every process here shares, are what runs out as the load grows: N such nodes should
# serve more than one if the cluster adds capacity.
# PG_CPU=k pins PostgreSQL to CPU k, as a host of its own would have it; run the script under
# `taskset -c <another>` to keep everything else off that CPU.
#
# Needs root (namespaces), Debian's postgresql package, curl and python3. Traffic stays in
# the namespaces it creates (a private /24 with no route out); everything is torn down on
# exit, failure or Ctrl-C included.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RTTS=${RTTS:-0 0.2 1}            # round-trip times, ms
NODES=${NODES:-1 2 4}
CONC=${CONC:-64}                 # games in flight
GAMES=${GAMES:-500}              # measured games per point (after max(CONC, 100) warmup)
BENCH_ARGS=${BENCH_ARGS:-}
PG_OPTS=${PG_OPTS:-}
STATEMENTS=${STATEMENTS:-}
FOLLOWERS=${FOLLOWERS:-0}
NODE_CPU=${NODE_CPU:-}
PG_CPU=${PG_CPU:-}
if [ -n "$STATEMENTS" ]; then
  PG_OPTS+=" -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all"
fi
TRIAD=${TRIAD:-${CARGO_TARGET_DIR:-$ROOT/target}/release/triad}
OUT=${OUT:-$ROOT/bench/results/cluster-$(date -u +%Y%m%dT%H%M%SZ)}

die() { echo "cluster.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
[ -x "$TRIAD" ] || die "no $TRIAD: run cargo build --release -p triad (or set TRIAD)"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PGBIN/initdb" ] || die "no PostgreSQL: apt-get install -y postgresql"
for tool in ip curl python3 runuser psql; do
  command -v "$tool" >/dev/null || die "$tool is missing"
done
if [ -n "$NODE_CPU" ]; then
  # cgroup v1's cpu controller (this machine has no v2 one).
  CPU_CGROUP_ROOT=/sys/fs/cgroup/cpu
  [ -f "$CPU_CGROUP_ROOT/cpu.cfs_quota_us" ] || die "NODE_CPU needs cgroup v1's cpu controller at $CPU_CGROUP_ROOT"
  CPU_PERIOD_US=$(python3 -c "x = float('$NODE_CPU'); assert 0 < x <= 1; print(round(1000 / x))") \
    || die "NODE_CPU is a share of one core, in (0, 1]"
fi
mkdir -p "$OUT"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# Names unique to this run, so that two runs (or anything else here) never collide.
TAG=tcl$$
NET=10.213.77
SW=$TAG-sw PG=$TAG-pg LG=$TAG-lg
PG_IP=$NET.2 LG_IP=$NET.3
node_ns() { echo "$TAG-n$1"; }
node_ip() { echo "$NET.$((10 + $1))"; }
MAX_NODES=$(( $(printf '%s\n' $NODES | sort -n | tail -1) + FOLLOWERS ))

NAMESPACES=() PIDS=() CGROUPS=() PGROOT=
cleanup() {
  local status=$?
  set +e
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
  if [ -n "$PGROOT" ] && [ -d "$PGROOT/data" ]; then
    runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGROOT/data" -m immediate -w stop >/dev/null 2>&1
  fi
  [ -n "$PGROOT" ] && rm -rf "$PGROOT"
  for cg in "${CGROUPS[@]}"; do rmdir "$cg" 2>/dev/null; done
  # Deleting a namespace deletes the veth ends in it, and with them their peers.
  for ns in "${NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null; done
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The switch: a bridge; every host: eth0 on the bridge, and its loopback.
add_ns() { ip netns add "$1"; NAMESPACES+=("$1"); ip -n "$1" link set lo up; }
add_ns "$SW"
ip -n "$SW" link add br0 type bridge
ip -n "$SW" link set br0 up
add_host() { # namespace, address, port name on the switch
  add_ns "$1"
  ip link add eth0 netns "$1" type veth peer name "$3" netns "$SW"
  ip -n "$SW" link set "$3" master br0 up
  ip -n "$1" addr add "$2/24" dev eth0
  ip -n "$1" link set eth0 up
}
add_host "$PG" "$PG_IP" ppg
add_host "$LG" "$LG_IP" plg
for i in $(seq "$MAX_NODES"); do add_host "$(node_ns "$i")" "$(node_ip "$i")" "pn$i"; done
inns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# PostgreSQL, listening on its namespace's loopback only: the proxy is its one way in.
PGROOT=$(mktemp -d /tmp/triad-cluster-pg.XXXXXX)
chown postgres: "$PGROOT"
runuser -u postgres -- "$PGBIN/initdb" -D "$PGROOT/data" -U postgres --auth=trust -E UTF8 \
  --locale=C.UTF-8 >/dev/null
inns "$PG" runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGROOT/data" -l "$PGROOT/log" -w -t 30 \
  -o "-c listen_addresses=127.0.0.1 -p 5432 -c unix_socket_directories=$PGROOT -c max_connections=300 $PG_OPTS" \
  start >/dev/null
psql_admin() { inns "$PG" psql -h 127.0.0.1 -p 5432 -U postgres -qAt "$@"; }
echo "PostgreSQL $(psql_admin -c 'SHOW server_version')" \
  "in $PG ($PG_IP), fsync=$(psql_admin -c 'SHOW fsync'); $(nproc) cores" | tee "$OUT/setup.txt"
if [ "$FOLLOWERS" -gt 0 ]; then
  echo "$FOLLOWERS follower node(s) at each point, used by no client" | tee -a "$OUT/setup.txt"
fi
if [ -n "$PG_CPU" ]; then
  # Every PostgreSQL process, and the backends it forks from now on, on that CPU alone.
  pm=$(head -1 "$PGROOT/data/postmaster.pid")
  for pid in $pm $(ps -o pid= --ppid "$pm"); do taskset -apc "$PG_CPU" "$pid" >/dev/null; done
  echo "PostgreSQL pinned to CPU $PG_CPU" | tee -a "$OUT/setup.txt"
fi
if [ -n "$NODE_CPU" ]; then
  echo "each node held to $NODE_CPU cores (1 ms of CPU per $CPU_PERIOD_US us)" | tee -a "$OUT/setup.txt"
fi

# Starts `triad bench-proxy` in namespace $1 (listen $2, upstream $3, one-way $4 us).
# Background processes start with `ip netns exec` itself, not through a function, so that $!
# is the process (ip execs it) and the teardown's kill reaches it.
start_proxy() {
  ip netns exec "$1" "$TRIAD" bench-proxy --listen "$2" --upstream "$3" --delay-us "$4" \
    2>>"$OUT/proxies.log" &
  PIDS+=($!)
}

# Starts `triad serve` in namespace $1 on the database behind PostgreSQL's proxy, writing
# its output to $2.out and $2.log.
start_node() {
  ip netns exec "$1" env TRIAD_KEY_FILE=/nonexistent TRIAD_LOG=warn "$TRIAD" serve \
    --addr 127.0.0.1:8080 --database "postgres://postgres@$PG_IP:6432/triad_bench" \
    --rate-per-ip 1000000000 --rate-per-address 1000000000 --rate-burst 1000000000 \
    --ws-rate 1000000000 --max-connections-per-ip 1000000000 \
    --max-websockets-per-ip 1000000000 --replay-events-per-ip 1000000000 \
    >"$2.out" 2>"$2.log" &
  PIDS+=($!)
  if [ -n "$NODE_CPU" ]; then limit_cpu "$1" "$!"; fi
}

# Holds process $2 (every thread, and any it starts) to NODE_CPU cores, in a CPU cgroup named
# after namespace $1: a CFS quota of 1 ms per period of 1/NODE_CPU ms (the kernel's least
# quota is 1 ms; a short period keeps a node that used its share from stalling for long).
limit_cpu() {
  local cg=$CPU_CGROUP_ROOT/$1
  if [ ! -d "$cg" ]; then
    mkdir "$cg"
    CGROUPS+=("$cg")
    echo "$CPU_PERIOD_US" >"$cg/cpu.cfs_period_us"
    echo 1000 >"$cg/cpu.cfs_quota_us"
  fi
  echo "$2" >"$cg/cgroup.procs"
}

# Stops the processes started since PIDS had $1 entries.
stop_since() {
  local keep=$1 pid
  for pid in "${PIDS[@]:$keep}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]:$keep}"; do wait "$pid" 2>/dev/null || true; done
  PIDS=("${PIDS[@]:0:$keep}")
}

# CPU, in clock ticks: of the processes given (their own and their reaped children's), of
# this PostgreSQL (the postmaster, its reaped children and every live one), and of the whole
# machine (every core's busy time: the load generator and the kernel's network included).
TICK=$(getconf CLK_TCK)
proc_ticks() {
  local total=0 pid t
  for pid in "$@"; do
    t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null || echo 0)
    total=$((total + t))
  done
  echo "$total"
}
pg_ticks() {
  local pm c
  pm=$(head -1 "$PGROOT/data/postmaster.pid")
  # shellcheck disable=SC2046
  echo $(( $(proc_ticks "$pm") + $(proc_ticks $(ps -o pid= --ppid "$pm")) ))
}
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
# One line of CPU ticks: the nodes (each), PostgreSQL, the proxies, the followers (each), the
# machine.
cpu_line() { # node pids..., --, proxy pids..., --, follower pids...
  local nodes=() proxies=() line="" pid
  while [ "$1" != -- ]; do nodes+=("$1"); shift; done
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do proxies+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  for pid in "${nodes[@]}"; do line+="node=$(proc_ticks "$pid") "; done
  line+="postgres=$(pg_ticks) proxies=$(proc_ticks "${proxies[@]}") "
  for pid in "$@"; do line+="follower=$(proc_ticks "$pid") "; done
  echo "${line}machine=$(machine_ticks) tick=$TICK"
}

wait_healthy() { # namespace, URL
  for _ in $(seq 300); do
    inns "$1" curl -sf -o /dev/null "$2/healthz" && return 0
    sleep 0.1
  done
  die "no answer from $2"
}

run_point() { # rtt_ms nodes
  local rtt=$1 n=$2 name="rtt$1-n$2" i
  local delay_us
  delay_us=$(python3 -c "print(round($rtt * 1000 / 2))")
  local base=${#PIDS[@]}
  psql_admin -c 'DROP DATABASE IF EXISTS triad_bench WITH (FORCE)' -c 'CREATE DATABASE triad_bench'
  if [ -n "$STATEMENTS" ]; then psql_admin -d triad_bench -c 'CREATE EXTENSION pg_stat_statements'; fi
  start_proxy "$PG" "$PG_IP:6432" 127.0.0.1:5432 "$delay_us"
  local servers=() node_pids=() proxy_pids=("${PIDS[-1]}")
  for i in $(seq "$n"); do
    local ns ip
    ns=$(node_ns "$i") ip=$(node_ip "$i")
    start_node "$ns" "$OUT/$name-node$i"
    node_pids+=("${PIDS[-1]}")
    start_proxy "$ns" "$ip:9080" 127.0.0.1:8080 "$delay_us"
    proxy_pids+=("${PIDS[-1]}")
    # The first node creates the schema; the others start once it has.
    wait_healthy "$LG" "http://$ip:9080"
    servers+=("http://$ip:9080")
  done
  # Nodes that no client uses (FOLLOWERS): reached by nobody, so no proxy in front.
  local follower_pids=()
  for i in $(seq $((n + 1)) $((n + FOLLOWERS))); do
    start_node "$(node_ns "$i")" "$OUT/$name-follower$i"
    follower_pids+=("${PIDS[-1]}")
    wait_healthy "$(node_ns "$i")" http://127.0.0.1:8080
  done
  local list
  list=$(IFS=,; echo "${servers[*]}")
  echo "== RTT $rtt ms ($delay_us us each way), $n node(s), c=$CONC, $GAMES games" >&2
  date +%s.%N >"$OUT/$name.span"
  cpu_line "${node_pids[@]}" -- "${proxy_pids[@]}" -- "${follower_pids[@]}" >"$OUT/$name.cpu"
  if [ -n "$STATEMENTS" ]; then
    psql_admin -d triad_bench -c 'SELECT pg_stat_statements_reset()' >/dev/null
  fi
  # shellcheck disable=SC2086
  inns "$LG" "$TRIAD" bench --server "$list" --concurrency "$CONC" --games "$GAMES" \
    --no-progress --label "$name" --json "$OUT/$name.json" $BENCH_ARGS \
    >/dev/null 2>"$OUT/$name.bench.log" || { cat "$OUT/$name.bench.log" >&2; die "$name failed"; }
  sed -n 3p "$OUT/$name.bench.log" >&2
  date +%s.%N >>"$OUT/$name.span"
  cpu_line "${node_pids[@]}" -- "${proxy_pids[@]}" -- "${follower_pids[@]}" >>"$OUT/$name.cpu"
  if [ -n "$STATEMENTS" ]; then
    # calls | execution ms | rows | the statement
    psql_admin -d triad_bench -F' | ' -c "SELECT calls, round(total_exec_time::numeric, 1), rows,
      left(regexp_replace(query, '\s+', ' ', 'g'), 160) FROM pg_stat_statements
      ORDER BY total_exec_time DESC LIMIT 25" >"$OUT/$name.statements"
  fi
  for i in $(seq "$n"); do
    inns "$(node_ns "$i")" curl -sf http://127.0.0.1:8080/metrics >"$OUT/$name-node$i.metrics"
  done
  for i in $(seq $((n + 1)) $((n + FOLLOWERS))); do
    inns "$(node_ns "$i")" curl -sf http://127.0.0.1:8080/metrics >"$OUT/$name-follower$i.metrics"
  done
  stop_since "$base"
}

for rtt in $RTTS; do
  for n in $NODES; do
    run_point "$rtt" "$n"
  done
done

python3 "$ROOT/bench/cluster_table.py" "$OUT" | tee "$OUT/table.md"
echo "raw results: $OUT" >&2
