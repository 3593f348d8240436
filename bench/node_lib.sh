# Sourced by bench/compare.sh and bench/pg_lib.sh: a `triad serve` for a benchmark's load
# generator, started and stopped. The caller sets TRIAD, and stops it on exit
# (`server_stop` in its EXIT trap).

SERVER_PID=

# server_start CPU DATABASE DIR: `triad serve` pinned to CPU on DATABASE, with rate limits
# and per-IP caps off (one IP, thousands of clients; the caps are still at most a quarter of
# the connection limit) and everything else as shipped; its output in DIR/server.out and
# DIR/server.log. Sets SERVER_PID and URL once it listens.
server_start() {
  local cpu=$1 database=$2 dir=$3
  rm -f "$dir/server.out"
  URL=
  TRIAD_KEY_FILE=/nonexistent TRIAD_LOG=warn taskset -c "$cpu" "$TRIAD" serve \
    --addr 127.0.0.1:0 --database "$database" \
    --rate-per-ip 1000000000 --rate-per-address 1000000000 --rate-burst 1000000000 --ws-rate 1000000000 \
    --max-connections-per-ip 1000000000 --max-websockets-per-ip 1000000000 --replay-events-per-ip 1000000000 \
    >"$dir/server.out" 2>"$dir/server.log" &
  SERVER_PID=$!
  for _ in $(seq 300); do
    URL=$(sed -n 's/^Triad is listening on \(http:[^ ]*\).*/\1/p' "$dir/server.out" | head -1)
    [ -n "$URL" ] && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || { cat "$dir/server.log" >&2; return 1; }
    sleep 0.1
  done
  echo "the server did not start" >&2; return 1
}

# Stops the server SERVER_PID names (a Triad node or the peer), if any, and waits for it.
server_stop() {
  if [ -n "$SERVER_PID" ]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=
}
