#!/usr/bin/env bash
# Blocking `SendMessage` side by side: the fight_club example against the same agent written on
# the strongest independent Rust A2A framework (`a2a-protocol-server` 0.15, in
# ../shared/bench-peers), in memory and on SQLite, with the same load generator (wrk, 16
# connections, one thread) and the same request (bench-peers/send.lua). Rounds alternate between
# the two servers so that the machine's drift hits both; the ratio of the summed rates is printed,
# and each server's resident memory after the whole load (read from /proc), with their ratio.
# Then the card route (GET /.well-known/agent-card.json, wrk) in the same rounds, and streams:
# the counting agent (examples/count) against the same agent on the peer (benches/peers/count),
# SendStreamingMessage read by curl (16 streams of 10,000 chunks at once, and one of 100,000):
# chunks per second, every chunk counted, and the time to the first chunk (a one-chunk stream,
# median of 20). Then MCP: `tools/call` of the fight tool (benches/peers/mcp.lua, wrk) on
# fight_club's /mcp, on the same tool served by bare rmcp (benches/peers/mcp-rmcp) and by the
# official MCP Python SDK (benches/peers/mcp-python, pinned in its requirements.txt, in a venv
# under target/bench-peers), each way: self-contained (2026-07-28, no session) and in a session
# (2025-06-18, one session opened before the load).
#
#   scripts/bench-peers.sh [PEERS_DIR] [SECONDS_PER_ROUND] [ROUNDS]
#   BENCH_ROUTES=mcp scripts/bench-peers.sh    # some routes only (blocking,streams,mcp; the
#                                              # blocking rounds time the card route too)
#
# Builds both in release (the peer outside the checkout's target, under target/bench-peers);
# installs wrk with apt when it is missing and this runs as root.
set -euo pipefail
cd "$(dirname "$0")/.."
peers="${1:-../shared/bench-peers}"
seconds="${2:-10}"
rounds="${3:-2}"
routes=",${BENCH_ROUTES:-blocking,streams,mcp},"
# Whether route $1 is measured in this run.
measured() { [[ "$routes" == *",$1,"* ]]; }
work="$PWD/target/bench-peers"
mkdir -p "$work"

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing wrk (apt)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null
  else
    echo "wrk is needed: apt-get install wrk" >&2
    exit 2
  fi
fi

echo "building the peer (release)..." >&2
CARGO_TARGET_DIR="$work/peer-target" cargo build --release --locked --quiet \
  --manifest-path "$peers/a2a-protocol-server/Cargo.toml"
CARGO_TARGET_DIR="$work/peer-target" cargo build --release --locked --quiet \
  --manifest-path benches/peers/count/Cargo.toml
CARGO_TARGET_DIR="$work/peer-target" cargo build --release --locked --quiet \
  --manifest-path benches/peers/mcp-rmcp/Cargo.toml
if [ ! -x "$work/mcp-venv/bin/python" ]; then
  echo "installing the MCP Python SDK (venv under $work)..." >&2
  python3 -m venv "$work/mcp-venv"
  "$work/mcp-venv/bin/python" -m pip install --quiet -r benches/peers/mcp-python/requirements.txt
fi
echo "building fight_club and count (release)..." >&2
cargo build --release --quiet --example fight_club --example count

ours_bin="$PWD/target/release/examples/fight_club"
peer_bin="$work/peer-target/release/peer_tomtom"
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# shellcheck source=scripts/servers.sh
source scripts/servers.sh

# The resident memory of process $1, in MiB.
rss_mib() {
  awk '/^VmRSS:/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"
}

# Requests per second of one wrk round against port $1 (fails on any answer that is not a
# completed task).
round() {
  local out
  out=$(wrk -t1 -c16 -d"${seconds}s" -s "$peers/send.lua" "http://127.0.0.1:$1/")
  if ! grep -q "not-completed: 0" <<<"$out"; then
    echo "answers that were not a completed task on port $1:" >&2
    echo "$out" >&2
    exit 1
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}

# Requests per second of the card route on port $1 (fails on any answer that is not a 200).
card_round() {
  local out
  out=$(wrk -t1 -c16 -d"${seconds}s" -H 'A2A-Version: 1.0' \
    "http://127.0.0.1:$1/.well-known/agent-card.json")
  if grep -q "Non-2xx" <<<"$out"; then
    echo "card answers that were not 200 on port $1:" >&2
    echo "$out" >&2
    exit 1
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}

# Rounds of `$1 PORT ARG` (a function printing requests per second) on each server of "$3"...
# (each NAME=PORT or NAME=PORT=ARG, NAME without spaces), one after the other in each round so
# that the machine's drift hits them all; prints each one's rates and the ratio of the first's
# sum to each other's, labelled $2.
alternate() {
  local fn=$1 label=$2; shift 2
  local -a names=() ports=() args=() sums=() lists=()
  local server name port arg i r rate line
  for server in "$@"; do
    IFS='=' read -r name port arg <<<"$server"
    names+=("$name") ports+=("$port") args+=("$arg") sums+=(0) lists+=("")
  done
  for r in $(seq "$rounds"); do
    echo "  $label: round $r of $rounds..." >&2
    for i in "${!names[@]}"; do
      rate=$("$fn" "${ports[$i]}" "${args[$i]}")
      sums[i]=$(awk -v a="${sums[$i]}" -v b="$rate" 'BEGIN {print a + b}')
      lists[i]="${lists[$i]} ${rate%.*}"
    done
  done
  line="$label:"
  for i in "${!names[@]}"; do
    line="$line ${names[$i]}${lists[$i]} req/s;"
  done
  for i in "${!names[@]}"; do
    [ "$i" = 0 ] && continue
    [ "$i" -gt 1 ] && line="$line,"
    line="$line $(awk -v a="${sums[0]}" -v b="${sums[$i]}" 'BEGIN {printf "%.2f", a / b}')x ${names[$i]}"
  done
  echo "$line"
}

for store in memory sqlite; do
  measured blocking || break
  rm -f "$work"/ours.db* "$work"/peer.db*
  ours_tasks=memory peer_tasks=memory
  if [ "$store" = sqlite ]; then
    ours_tasks="sqlite://$work/ours.db" peer_tasks="sqlite://$work/peer.db"
  fi
  start 18182 "$ours_bin" --port 18182 --tasks "$ours_tasks"
  ours_pid=${pids[-1]}
  start 18183 "$peer_bin" --port 18183 --tasks "$peer_tasks"
  peer_pid=${pids[-1]}
  # A short warm-up of each.
  wrk -t1 -c16 -d2s -s "$peers/send.lua" http://127.0.0.1:18182/ >/dev/null
  wrk -t1 -c16 -d2s -s "$peers/send.lua" http://127.0.0.1:18183/ >/dev/null
  alternate round "blocking SendMessage, $store" fight_club=18182 a2a-protocol-server=18183
  alternate card_round "card route, $store run" fight_club=18182 a2a-protocol-server=18183
  ours_rss=$(rss_mib "$ours_pid") peer_rss=$(rss_mib "$peer_pid")
  rss_ratio=$(awk -v a="$ours_rss" -v b="$peer_rss" 'BEGIN {printf "%.2f", a / b}')
  echo "resident memory after the load, $store: fight_club $ours_rss MiB, a2a-protocol-server $peer_rss MiB: ${rss_ratio}x"
  cleanup; pids=()
  sleep 0.5
done

# Streams: the counting agent on both frameworks, in memory.
stream_body() {
  printf '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-%s-%s","role":"ROLE_USER","parts":[{"text":"%s"}]}}}' \
    "$RANDOM" "$RANDOM" "$1"
}

# One stream of $2 chunks from port $1, read by curl into the file $3 (nothing else done while
# it streams: the client is curl alone, not the shell).
stream_fetch() {
  curl -sN "http://127.0.0.1:$1/" -H 'Content-Type: application/json' \
    -H 'A2A-Version: 1.0' -d "$(stream_body "$2")" -o "$3"
}

# The chunks the stream read into file $1 delivered (one SSE line each; a line that carries the
# whole artifact again is not counted), and 1 if the task completed, else 0 (the error that
# ended the stream goes to $work/stream-error).
stream_count() {
  local done=1
  if ! tail -c 400 "$1" | grep -q TASK_STATE_COMPLETED; then
    done=0
    grep -o '"message":"[^"]*"' "$1" | tail -1 >"$work/stream-error" || true
  fi
  echo "$(grep -c '"parts":\[{"text":"chunk [0-9]*"}\]' "$1" || true) $done"
}

# Chunks per second of $2 streams of $3 chunks at once from port $1, the chunks delivered,
# and how many streams ended before their task completed. The clock stops when the last
# stream ends; the chunks are counted after.
stream_round() {
  local start end delivered=0 early=0 n done
  start=$(date +%s.%N)
  for i in $(seq "$2"); do
    stream_fetch "$1" "$3" "$work/stream-$i.out" &
  done
  wait
  end=$(date +%s.%N)
  for i in $(seq "$2"); do
    read -r n done <<<"$(stream_count "$work/stream-$i.out")"
    rm -f "$work/stream-$i.out"
    delivered=$((delivered + n)) early=$((early + 1 - done))
  done
  awk -v n="$delivered" -v s="$start" -v e="$end" -v x="$early" \
    'BEGIN {printf "%.0f %d %d", n / (e - s), n, x}'
}

# The median time to the whole of a one-chunk stream from port $1, in milliseconds.
first_chunk() {
  for _ in $(seq 20); do
    curl -sN -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$1/" \
      -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d "$(stream_body 1)"
  done | sort -n | awk '{t[NR] = $1} END {printf "%.2f", t[int((NR + 1) / 2)] * 1000}'
}

if measured streams; then
  start 18184 "$PWD/target/release/examples/count" --port 18184 --tasks memory
  start 18185 "$work/peer-target/release/count_peer" --port 18185
  for load in "16 10000" "1 100000"; do
    set -- $load
    ours_sum=0 peer_sum=0 ours_list="" peer_list="" ours_got="" peer_got="" early=""
    rm -f "$work/stream-error"
    for r in $(seq "$rounds"); do
      echo "  streams ($1 x $2): round $r of $rounds..." >&2
      read -r o og oe <<<"$(stream_round 18184 "$1" "$2")"
      read -r p pg pe <<<"$(stream_round 18185 "$1" "$2")"
      ours_sum=$((ours_sum + o)) peer_sum=$((peer_sum + p))
      ours_list="$ours_list $o" peer_list="$peer_list $p"
      ours_got="$ours_got $og" peer_got="$peer_got $pg"
      early="$early $oe/$pe"
    done
    ratio=$(awk -v a="$ours_sum" -v b="$peer_sum" 'BEGIN {printf "%.2f", a / b}')
    echo "streams, $1 x $2 chunks: count${ours_list} chunks/s (delivered${ours_got} of $(($1 * $2)) a round), peer${peer_list} chunks/s (delivered${peer_got}): ${ratio}x; streams ended early (count/peer):${early}"
    if [ -s "$work/stream-error" ]; then
      echo "  a stream ended early with $(cat "$work/stream-error")"
    fi
  done
  echo "time to a one-chunk stream's end (median of 20): count $(first_chunk 18184) ms, peer $(first_chunk 18185) ms"
fi

# MCP: the fight tool on fight_club, on bare rmcp and on the Python SDK (stateless, and a server
# of its own with sessions).
measured mcp || exit 0
cleanup; pids=()
start 18186 "$ours_bin" --port 18186 --tasks memory
start_mcp() {
  local port=$1; shift
  "$@" >"$work/server-$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    # Listening (a GET of /mcp may open an event stream that does not end).
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "the MCP server on port $port did not start: $(cat "$work/server-$port.log")" >&2
  exit 1
}
start_mcp 18187 "$work/peer-target/release/mcp_rmcp_peer" --port 18187
start_mcp 18188 "$work/mcp-venv/bin/python" benches/peers/mcp-python/server.py --port 18188 --stateless
start_mcp 18189 "$work/mcp-venv/bin/python" benches/peers/mcp-python/server.py --port 18189

# A session (2025-06-18) opened on port $1: its id.
mcp_session() {
  local id
  id=$(curl -s -D - -o /dev/null "http://127.0.0.1:$1/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' |
    awk 'tolower($1) == "mcp-session-id:" {print $2}' | tr -d '\r')
  curl -s -o /dev/null "http://127.0.0.1:$1/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $id" \
    -H 'MCP-Protocol-Version: 2025-06-18' \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo "$id"
}

# Calls per second of one wrk round of `tools/call` on port $1, in session $2 (empty: none);
# fails on any answer that is not the verdict.
mcp_round() {
  local out
  out=$(MCP_SESSION="$2" wrk -t1 -c16 -d"${seconds}s" -s benches/peers/mcp.lua "http://127.0.0.1:$1/mcp")
  if ! grep -q "not-answered: 0" <<<"$out"; then
    echo "answers that were not the verdict on port $1:" >&2
    echo "$out" >&2
    exit 1
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}

for way in stateless session; do
  ours_port=18186 rmcp_port=18187 py_port=18188
  ours_s="" rmcp_s="" py_s=""
  if [ "$way" = session ]; then
    py_port=18189
    ours_s=$(mcp_session 18186) rmcp_s=$(mcp_session 18187) py_s=$(mcp_session 18189)
  fi
  mcp_round "$ours_port" "$ours_s" >/dev/null
  alternate mcp_round "MCP tools/call, $way" "fight_club=$ours_port=$ours_s" \
    "bare-rmcp=$rmcp_port=$rmcp_s" "python-sdk=$py_port=$py_s"
done
