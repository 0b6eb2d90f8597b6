# Sourced by the bench scripts (scripts/bench-peers.sh, scripts/soak.sh): servers started in the
# background and stopped at the end. Needs $work, a directory for their logs.

pids=()

# Starts "$@" and waits until its card is served on port $1 (its output in
# $work/server-PORT.log); its pid is added to `pids`.
start() {
  local port=$1; shift
  "$@" >"$work/server-$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do
    curl -fsS "http://127.0.0.1:$port/.well-known/agent-card.json" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the server on port $port did not start: $(cat "$work/server-$port.log")" >&2
  exit 1
}
