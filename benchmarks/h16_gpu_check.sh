#!/usr/bin/env bash
# Issue 16's GPU check in one budgeted call (h16): the launch table of
# benchmarks/launch.py (Tile `.launch()`/`.sync()` against torch.add and
# Triton, graphs, the profiler, and where a native `.launch()` spends its host
# time), then every GPU test of tests/api/. Each step runs under `timeout`;
# the whole call takes at most 145 s (launch 40 s, tests 100 s, set-up 5 s).
# usage, from the repository root on the device:
#   OUT=$OUT bash benchmarks/h16_gpu_check.sh
# Writes at most 5 files to $OUT: h16_summary.txt (read this), launch.log,
# launch/launch.json, launch/roofline_launch.png, api_gpu.log.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1 && ! python3 -c "import lark" 2>/dev/null; then
  timeout 30 python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
S="$OUT/h16_summary.txt"
T0=$SECONDS
{ git log -1 --format='commit %h %cd' 2>/dev/null; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > "$S"

# 1. the launch table (<= 40 s; about 15 s measured before)
timeout 40 python3 benchmarks/launch.py --only gpu,graph,profile --out "$OUT/launch" > "$OUT/launch.log" 2>&1
echo "== launch.py rc=$? ($((SECONDS - T0)) s)" >> "$S"
grep -E '^\[gpu\]|^\[graph\]' "$OUT/launch.log" >> "$S"
sed -n '/^measurement/,/^Triton launch + sync/p' "$OUT/launch.log" >> "$S"

# 2. every GPU test of tests/api/ (<= 100 s; each test stops at 45 s: a hang fails one test)
T1=$SECONDS
TILE_GPU_TEST_TIMEOUT=45 XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 100 \
  python3 -m pytest -q -m gpu -p no:cacheprovider --durations=12 tests/api/ > "$OUT/api_gpu.log" 2>&1
echo "== pytest -m gpu tests/api/ rc=$? ($((SECONDS - T1)) s)" >> "$S"
grep -E 'passed|skipped|failed|error|FAILED|ERROR|ran longer' "$OUT/api_gpu.log" | tail -12 >> "$S"
sed -n '/slowest/,/^$/p' "$OUT/api_gpu.log" | head -14 >> "$S"
echo "== done in $((SECONDS - T0)) s" >> "$S"
cat "$S"
