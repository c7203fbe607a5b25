#!/usr/bin/env bash
# Same-machine A/B of two commits on a subset of the offline reproduction, interleaved (old, new, old, new …),
# so that a change's effect is measured under the same load rather than against a number from another day.
#
#   benchmarks/bench_ab.sh BASE_REV EMBEDDINGS_SQLITE [ROUNDS] [NN ...]
#
# BASE_REV is checked out in a temporary git worktree; HEAD's working tree is the "new" side. Both sides run
# `lcrag reproduce` with the local model's readers removed (lcrag's own work), the data directory
# (LCRAG_DATA_DIR, default ../shared/data beside the checkout) and a fresh cache directory holding a copy of
# EMBEDDINGS_SQLITE (a warm embedding store, e.g. one a cold `bench_reproduce.py --keep` run left), so no line
# is embedded. Both sides run one notebook at a time (`--jobs ${JOBS:-1}` where the side's CLI has the option), so
# the A/B compares the code, not the scheduling. Prints one line per run: wall seconds and each notebook's time.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
base=$1; store=$2; rounds=${3:-2}; shift $(( $# < 3 ? $# : 3 ))
only=("${@:-01 06 07 12 19}"); only=(${only[@]})
data=${LCRAG_DATA_DIR:-$(cd "$here/.." && pwd)/shared/data}
tmp=$(mktemp -d); trap 'git -C "$here" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$here" worktree add -q --detach "$tmp/old" "$base"
py="$here/.venv/bin/python"
"$py" -c "import sys; sys.path.insert(0, '$here/benchmarks'); from pathlib import Path; from bench_reproduce import without_local_model; without_local_model('$here/params/offline.yaml', Path('$tmp/profile.yaml'))"
for round in $(seq 1 "$rounds"); do
  for side in old new; do
    root=$here; [ "$side" = old ] && root=$tmp/old
    run=$tmp/$side-$round; mkdir -p "$run/cache"; cp "$store" "$run/cache/embeddings.sqlite"
    jobs_arg=(); grep -q '"--jobs"' "$root/lcrag/commands/reproduce.py" && jobs_arg=(--jobs "${JOBS:-1}")
    t0=$(date +%s.%N)
    (cd "$root" && LCRAG_DATA_DIR=$data PYTHONPATH=$root LCRAG_CACHE_DIR=$run/cache HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
      "$py" -m lcrag.cli reproduce --params "$tmp/profile.yaml" --out "$run/figures" --runs "$run/runs" "${jobs_arg[@]}" --only "${only[@]}" > "$run/log" 2>&1)
    t1=$(date +%s.%N)
    printf 'round %s %-3s %s wall %.1f s: %s (load %s)\n' "$round" "$side" "$(git -C "$root" rev-parse --short HEAD)" \
      "$(echo "$t1 - $t0" | bc)" "$(grep -o '[0-9][0-9]_[a-z0-9_]*\.ipynb done in [0-9.]* s' "$run/log" | awk '{printf "%s %s; ", substr($1,1,2), $4}')" \
      "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
