#!/usr/bin/env bash
# A soak of the example agents as an operator sees them: the process's resident memory (what
# the OS, a container limit and the OOM killer count, read from /proc) and the files on disk,
# sampled while a steady load runs, on each store.
#
# - Blocking `SendMessage` of the fight comparison (wrk, one thread, 16 connections, the request
#   of ../shared/bench-peers/send.lua) against fight_club for SECONDS on each store (memory,
#   SQLite, Postgres): resident memory every SAMPLE seconds; at a third of the run and at its end,
#   their ratio, and the slope of a line fitted to the samples of the last two thirds (in KiB a
#   minute, and in bytes a request); on SQLite the largest database log (`-wal`) and index
#   (`-shm`) seen, and the database file at the end; on Postgres the WAL written, the tasks
#   table's live and dead rows and its autovacuum runs.
# - Streams on the memory store with its default retention: the counting agent
#   (examples/count) streams STREAM_CHUNKS chunks, STREAMS times one after the other, each read
#   whole by curl: resident memory before, at its peak while each runs, and after each.
#
#   scripts/soak.sh [SECONDS] [SAMPLE]           # 300 and 15 by default
#   SOAK_STORES=sqlite scripts/soak.sh 60 5      # some stores only (memory,sqlite,postgres,streams)
#
# Builds both examples in release; installs wrk with apt when it is missing and this runs as
# root; Postgres runs as a throwaway cluster under target/soak (as the `postgres` user when
# run as root). Exits non-zero when any answer was not a completed task.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-300}"
sample="${2:-15}"
stores=",${SOAK_STORES:-memory,sqlite,postgres,streams},"
stream_chunks="${STREAM_CHUNKS:-100000}"
streams="${STREAMS:-3}"
peers=../shared/bench-peers
work="$PWD/target/soak"
mkdir -p "$work"
measured() { [[ "$stores" == *",$1,"* ]]; }

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing wrk (apt)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null
  else
    echo "wrk is needed: apt-get install wrk" >&2
    exit 2
  fi
fi
echo "building fight_club and count (release)..." >&2
cargo build --release --quiet --example fight_club --example count
bin="$PWD/target/release/examples"

pids=()
pg_stop=""
cleanup() {
  for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "$pg_stop" ]; then eval "$pg_stop" >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

# shellcheck source=scripts/servers.sh
source scripts/servers.sh

# Resident memory of process $1, in KiB.
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# Size of file $1 in bytes (0 when missing).
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }

# A throwaway Postgres cluster (as `postgres` when root); sets $pg_url and $pg_psql.
start_postgres() {
  local bin_dir dir=$work/pg port=15499 as=()
  bin_dir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  rm -rf "$dir" && mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
  "${as[@]}" "$bin_dir/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$work/initdb.log"
  "${as[@]}" "$bin_dir/pg_ctl" -D "$dir/data" -l "$dir/log" -w start \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=100" >/dev/null
  pg_stop="${as[*]} $bin_dir/pg_ctl -D $dir/data -m fast stop"
  pg_url="postgres://postgres@127.0.0.1:$port/postgres"
  pg_psql() { psql -qtA "$pg_url" -c "$1"; }
}

# The soak of store $1 (memory, sqlite or postgres) on port $2.
soak() {
  local store=$1 port=$2 tasks pid db="$work/soak.db" wrk_pid t=0 i
  local -a times=() rss=()
  local wal_max=0 shm_max=0 wal_start="" out
  rm -f "$db" "$db-wal" "$db-shm"
  case "$store" in
    memory) tasks=memory ;;
    sqlite) tasks="sqlite://$db" ;;
    postgres) start_postgres; tasks="$pg_url" ;;
  esac
  start "$port" "$bin/fight_club" --port "$port" --tasks "$tasks"
  pid=${pids[-1]}
  # A warm-up, so that the first sample is not the start-up.
  wrk -t1 -c16 -d3s -s "$peers/send.lua" "http://127.0.0.1:$port/" >/dev/null
  [ "$store" = postgres ] && wal_start=$(pg_psql "SELECT pg_current_wal_lsn()")
  echo "  $store: $seconds s of blocking SendMessage, resident memory every $sample s..." >&2
  wrk -t1 -c16 -d"${seconds}s" -s "$peers/send.lua" "http://127.0.0.1:$port/" >"$work/wrk-$store.out" &
  wrk_pid=$!
  local started=$SECONDS
  while kill -0 "$wrk_pid" 2>/dev/null; do
    sleep 1
    t=$((SECONDS - started))
    if [ "$store" = sqlite ]; then
      i=$(size "$db-wal"); [ "$i" -gt "$wal_max" ] && wal_max=$i
      i=$(size "$db-shm"); [ "$i" -gt "$shm_max" ] && shm_max=$i
    fi
    if [ $((t % sample)) = 0 ] && [ "$t" -le "$seconds" ] && kill -0 "$wrk_pid" 2>/dev/null; then
      times+=("$t") rss+=("$(rss_kib "$pid")")
    fi
  done
  wait "$wrk_pid"
  out=$(cat "$work/wrk-$store.out")
  if ! grep -q "not-completed: 0" <<<"$out"; then
    echo "answers that were not a completed task ($store):" >&2
    echo "$out" >&2
    exit 1
  fi
  local requests
  requests=$(awk '/requests in/ {print $1}' <<<"$out")
  # Resident memory at a third of the run and at its end, and a line fitted to the samples
  # of its last two thirds.
  printf '%s\n' "${times[@]}" >"$work/t" && printf '%s\n' "${rss[@]}" >"$work/r"
  paste "$work/t" "$work/r" | awk -v store="$store" -v secs="$seconds" -v reqs="$requests" '
    { t[NR] = $1; r[NR] = $2 }
    END {
      third = secs / 3; a = 0
      for (i = 1; i <= NR; i++) if (t[i] <= third) a = i
      if (a == 0) a = 1
      n = 0; st = 0; sr = 0; stt = 0; str = 0
      for (i = a; i <= NR; i++) { n++; st += t[i]; sr += r[i]; stt += t[i] * t[i]; str += t[i] * r[i] }
      slope = (n > 1) ? (n * str - st * sr) / (n * stt - st * st) : 0
      rate = reqs / secs
      line = ""
      for (i = 1; i <= NR; i++) line = line sprintf(" %.0f", r[i] / 1024)
      printf "%s: %d requests (%.0f/s); resident MiB every sample:%s\n", store, reqs, rate, line
      printf "%s: resident %.1f MiB at %d s, %.1f MiB at %d s: %.2fx; slope %.1f KiB/min (%.2f bytes a request)\n",
        store, r[a] / 1024, t[a], r[NR] / 1024, t[NR], r[NR] / r[a], slope * 60,
        (rate > 0) ? slope * 1024 / rate : 0
    }'
  case "$store" in
    sqlite)
      sleep 2
      echo "sqlite: the log (-wal) at most $(mib "$wal_max"), its index (-shm) at most $(mib "$shm_max"); after 2 s idle: log $(mib "$(size "$db-wal")"), database $(mib "$(size "$db")")"
      ;;
    postgres)
      local wal_bytes
      wal_bytes=$(pg_psql "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$wal_start')")
      echo "postgres: WAL written $(mib "$wal_bytes") ($(awk -v w="$wal_bytes" -v r="$requests" 'BEGIN {printf "%.0f", w / r}') bytes a request); $(pg_psql "SELECT 'tasks table: ' || n_live_tup || ' live rows, ' || n_dead_tup || ' dead, ' || autovacuum_count || ' autovacuum runs, ' || pg_size_pretty(pg_total_relation_size(relid)) FROM pg_stat_user_tables WHERE relname = 'a2a_card_tasks'"); events table: $(pg_psql "SELECT n_live_tup || ' live rows, ' || n_dead_tup || ' dead, ' || pg_size_pretty(pg_total_relation_size(relid)) FROM pg_stat_user_tables WHERE relname = 'a2a_card_events'")"
      ;;
  esac
  cleanup; pids=(); pg_stop=""
  sleep 0.5
}

measured memory && soak memory 18190
measured sqlite && soak sqlite 18191
measured postgres && soak postgres 18192

if measured streams; then
  port=18193
  start "$port" "$bin/count" --port "$port" --tasks memory
  pid=${pids[-1]}
  line="streams of $stream_chunks chunks on the memory store (default retention): resident $(($(rss_kib "$pid") / 1024)) MiB before"
  for s in $(seq "$streams"); do
    body=$(printf '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"soak-%s-%s","role":"ROLE_USER","parts":[{"text":"%s"}]}}}' "$s" "$RANDOM" "$stream_chunks")
    curl -sN "http://127.0.0.1:$port/" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
      -d "$body" -o "$work/stream.out" &
    curl_pid=$!
    peak=0
    while kill -0 "$curl_pid" 2>/dev/null; do
      r=$(rss_kib "$pid"); [ "$r" -gt "$peak" ] && peak=$r
      sleep 0.05
    done
    wait "$curl_pid"
    if ! tail -c 400 "$work/stream.out" | grep -q TASK_STATE_COMPLETED; then
      echo "stream $s did not complete: $(tail -c 400 "$work/stream.out")" >&2
      exit 1
    fi
    sleep 1
    line="$line; stream $s: peak $((peak / 1024)) MiB, after $(($(rss_kib "$pid") / 1024)) MiB"
  done
  echo "$line"
  cleanup; pids=()
fi
