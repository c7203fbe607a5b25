#!/usr/bin/env bash
# Fresh-machine install time: `make install` in a fresh clone of this checkout's HEAD, with an empty pip
# download cache and an empty llama.cpp wheelhouse (so llama.cpp is compiled, as on a new machine).
#
#   benchmarks/bench_install.sh                  # empty pip cache, llama.cpp compiled
#   benchmarks/bench_install.sh --keep-wheels    # empty pip cache, the already built llama.cpp wheel reused
#
# Nothing outside a temporary directory is used or written except the result row appended to
# benchmarks/results/install.csv: the pip cache (PIP_CACHE_DIR), the wheelhouse (WHEELHOUSE) and the
# virtualenv all live in the temporary directory, which is removed at the end (--keep keeps it).
# It downloads every package (~2 GB installed) and compiles for ~10 minutes on 2 cores: run it on an
# otherwise idle machine with a normal network connection; the row records the 1-minute load average.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
keep_wheels=0
keep=0
for arg in "$@"; do
  case "$arg" in
    --keep-wheels) keep_wheels=1 ;;
    --keep) keep=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown option: $arg" >&2; exit 2 ;;
  esac
done

tmp="$(mktemp -d "${TMPDIR:-/tmp}/lcrag-bench-install-XXXXXX")"
cleanup() { if [ "$keep" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi; }
trap cleanup EXIT

git clone --quiet --no-hardlinks "$root" "$tmp/lcrag"
commit="$(git -C "$tmp/lcrag" rev-parse --short HEAD)"
export PIP_CACHE_DIR="$tmp/pip-cache"
mkdir -p "$PIP_CACHE_DIR"
make_args=()
if [ "$keep_wheels" = 0 ]; then
  make_args+=("WHEELHOUSE=$tmp/wheels")
fi

load_before="$(cut -d' ' -f1 /proc/loadavg)"
start="$(date +%s)"
set +e
/usr/bin/time -v -o "$tmp/time.txt" make -C "$tmp/lcrag" install "${make_args[@]}" >"$tmp/install.log" 2>&1
rc=$?
set -e
end="$(date +%s)"
load_after="$(cut -d' ' -f1 /proc/loadavg)"
wall=$((end - start))
venv_mb="$(du -sm "$tmp/lcrag/.venv" 2>/dev/null | cut -f1)"
cache_mb="$(du -sm "$PIP_CACHE_DIR" 2>/dev/null | cut -f1)"
peak_kb="$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time.txt")"
compiled=$([ "$keep_wheels" = 0 ] && echo yes || echo "no (wheel reused)")
# where pip found packages: a local wheel directory or file:// index (a mirror on this machine) is read without
# downloading, so its packages neither take network time nor land in the pip cache
sources="pypi"
if "$tmp/lcrag/.venv/bin/python" -m pip config list 2>/dev/null | grep -Eq "find-links|file://"; then sources="pypi+local-mirror"; fi

mkdir -p "$here/results"
csv="$here/results/install.csv"
[ -f "$csv" ] || echo "timestamp,commit,exit_code,wall_s,llama_cpp_compiled,pip_cache,venv_mb,downloaded_mb,largest_process_mb,cpus,python,loadavg_1m_before,loadavg_1m_after,package_sources" >"$csv"
echo "$(date -u +%Y-%m-%dT%H:%M:%S+00:00),$commit,$rc,$wall,$compiled,empty,$venv_mb,$cache_mb,$((peak_kb / 1024)),$(nproc),$(python3 -c 'import platform; print(platform.python_version())'),$load_before,$load_after,$sources" >>"$csv"

if [ "$rc" != 0 ]; then
  tail -40 "$tmp/install.log"
  echo "make install failed (exit $rc) after ${wall} s" >&2
  exit "$rc"
fi
printf 'make install, empty pip cache, llama.cpp compiled: %s: %d min %02d s (%s MB in the pip cache afterwards, venv %s MB, packages from %s, load %s -> %s)\n' \
  "$compiled" $((wall / 60)) $((wall % 60)) "$cache_mb" "$venv_mb" "$sources" "$load_before" "$load_after"
echo "row appended to $csv"
