#!/usr/bin/env bash
# Run some tests N times in a row under a parallel CPU load and count the passes (flake hunting).
#   benchmarks/flake_loop.sh [N] [LOAD] [pytest args...]
# N (default 30) runs; LOAD (default 2) busy-looping processes at nice 19 beside the tests; the default tests are the
# SIGINT tests of `lcrag reproduce` (tests/reproduction/test_reproduce_interrupt.py -k sigint). Before the loop, notebook 00 is
# reproduced into a temporary directory, as in a `make reproduce` -> `make test` sequence. Logs of failed runs are
# kept in $LOGDIR (default: a temporary directory, printed). Prints "passed P/N".
# Started in the background of a non-interactive shell (`... &`), the loop and every test child ignore SIGINT: the
# SIGINT tests give their child the default action back (tests/childproc.py sigint_default), so they run as from a
# terminal either way.
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-30}; LOAD=${2:-2}; shift $(( $# > 2 ? 2 : $# ))
ARGS=("$@"); [ ${#ARGS[@]} -eq 0 ] && ARGS=(tests/reproduction/test_reproduce_interrupt.py -k sigint)
PY=${PY:-.venv/bin/python}
LOGDIR=${LOGDIR:-$(mktemp -d)}
work=$(mktemp -d)
export LCRAG_CACHE_DIR="$work/cache" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
"$PY" -m lcrag.cli reproduce --only 00 --out "$work/fig" --runs "$work/runs" >"$LOGDIR/reproduce.log" 2>&1 \
  || echo "reproduce of 00 failed (see $LOGDIR/reproduce.log)"
pids=()
for _ in $(seq "$LOAD"); do nice -n 19 "$PY" -c "while True: pass" & pids+=($!); done
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT
pass=0
for i in $(seq "$N"); do
  t0=$(date +%s)
  if "$PY" -m pytest -q -p no:cacheprovider "${ARGS[@]}" >"$LOGDIR/run$i.log" 2>&1; then
    pass=$((pass + 1)); rm -f "$LOGDIR/run$i.log"; r=pass
  else r=FAIL; fi
  echo "run $i/$N: $r in $(( $(date +%s) - t0 )) s (load average $(cut -d' ' -f1 /proc/loadavg))"
done
echo "passed $pass/$N (logs of failed runs in $LOGDIR)"
