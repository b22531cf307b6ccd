#!/usr/bin/env bash
# Issue 14's GEMM checks in ONE device call, at most TOTAL seconds (default
# 200) whatever happens: every step runs under `timeout` capped by what is
# left of TOTAL, and a step is skipped when less than its minimum is left.
# In order of importance:
#   1. the GPU GEMM tests against the interpreter (Hopper TMA + register-copy
#      producer, odd shapes, sm_80 path)                              cap 55 s
#   2. 8191^3 f16 and bf16 (edges everywhere, odd strides: the register-copy
#      producer; two tile configs) vs cuBLAS and Triton               cap 45 s
#      then square 8192^3 and 4096^3 f16 (TMA) vs cuBLAS, Triton      cap 25 s
#   3. first launch of a 128x256x64 wgmma GEMM, fresh process, empty
#      cache (with a profile and per-phase stamps)                    cap 25 s
#   4. the sm_80 path (TILEC_ARCH=sm_80) at 8192^3 f16 vs cuBLAS     cap 30 s
#   5. compute-sanitizer memcheck, racecheck, synccheck over
#      benchmarks/gemm_sanitize.py (TMA, register-copy, bf16, sm_80-sized
#      tiles; odd shapes)                                        cap 20 s each
# Writes 2 files to $OUT: gemm_device_summary.txt and gemm_device_logs.tgz
# (gemm_tests.log, gemm_bench.log, gemm_first.log, gemm_sm80.log,
# sanitizer_gemm.log with all three tools, gemm.json).
# STEPS (default all) picks steps by name: tests, edge, square, first, sm80,
# memcheck, racecheck, synccheck (comma-separated).
# usage, from the repository root on the device: bash benchmarks/gemm_device.sh
#   e.g. STEPS=first,sm80,memcheck TOTAL=60 bash benchmarks/gemm_device.sh
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} TILEC_CACHE_DIR=/tmp/tilec-gemm
FINAL=${OUT:-/tmp/out}; mkdir -p "$FINAL"
OUT=/tmp/gemm_device; rm -rf "$OUT"; mkdir -p "$OUT"  # the logs, tarred into $FINAL at the end
TOTAL=${TOTAL:-200}
STEPS=${STEPS:-tests,edge,square,first,sm80,memcheck,racecheck,synccheck}
want() { [[ ",$STEPS," == *",$1,"* ]]; }
T0=$SECONDS
left() { echo $(( TOTAL - (SECONDS - T0) )); }
# cap MIN CAP: the timeout for the next step (0 = skip it)
cap() { local l; l=$(left); if (( l < $1 )); then echo 0; elif (( l < $2 )); then echo "$l"; else echo "$2"; fi; }
SUMMARY=()
if ls .whl/*.whl >/dev/null 2>&1 && ! python3 -c "import lark" 2>/dev/null; then
  timeout 20 python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
# an installed tilec has its bytecode compiled; a fresh copy of the tree has not
timeout 15 python3 -m compileall -q tilelang tests/backend/gemm_cases.py > /dev/null 2>&1

t=$(cap 20 55); want tests || t=-1
if (( t > 0 )); then
  timeout "$t" python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_gpu_gemm.py \
    tests/backend/test_odd_gemm.py tests/backend/test_sm80.py > "$OUT/gemm_tests.log" 2>&1
  SUMMARY+=("GPU GEMM tests (rc $?, 124 = timeout after $t s): $(tail -1 "$OUT/gemm_tests.log")")
else SUMMARY+=("GPU GEMM tests: skipped (budget or STEPS)"); fi

t=$(cap 25 45); want edge || t=-1
if (( t > 0 )); then
  timeout "$t" python3 benchmarks/gemm.py --only edge --dtypes f16,bf16 --configs 3 --out "$OUT" \
    > "$OUT/gemm_bench.log" 2>&1
  SUMMARY+=("8191^3 rc $? (124 = timeout after $t s): $(grep -E '^\[.*\] tile' "$OUT/gemm_bench.log" | tr '\n' ';')")
else SUMMARY+=("8191^3 bench: skipped (budget or STEPS)"); fi

t=$(cap 15 25); want square || t=-1
if (( t > 0 )); then
  timeout "$t" python3 benchmarks/gemm.py --only square --dtypes f16 --configs 1 >> "$OUT/gemm_bench.log" 2>&1
  SUMMARY+=("square rc $? (124 = timeout after $t s): $(grep -E '^\[f16 NN (8192|4096)\^3\] tile' "$OUT/gemm_bench.log" | tr '\n' ';')")
else SUMMARY+=("8192^3 bench: skipped (budget or STEPS)"); fi

t=$(cap 15 25); want first || t=-1
if (( t > 0 )); then
  timeout "$t" python3 benchmarks/gemm.py --only first > "$OUT/gemm_first.log" 2>&1
  SUMMARY+=("$(grep -E '^\[first\] first launch' "$OUT/gemm_first.log" || echo "first launch: rc $?")")
else SUMMARY+=("first launch: skipped (budget or STEPS)"); fi

t=$(cap 20 30); want sm80 || t=-1
if (( t > 0 )); then
  TILEC_ARCH=sm_80 timeout "$t" python3 benchmarks/gemm.py --only square80 > "$OUT/gemm_sm80.log" 2>&1
  SUMMARY+=("sm_80 rc $?: $(grep -E '^\[.*\] tile|kernels built' "$OUT/gemm_sm80.log" | tr '\n' ';')")
else SUMMARY+=("sm_80 8192^3: skipped (budget or STEPS)"); fi

: > "$OUT/sanitizer_gemm.log"
for tool in memcheck racecheck synccheck; do
  want $tool || continue
  t=$(cap 12 20)
  if (( t == 0 )); then SUMMARY+=("compute-sanitizer $tool: skipped (budget)"); continue; fi
  extra=(); [[ $tool == memcheck ]] && extra=(--report-api-errors no)  # cuda-python's binding init probes cuGetProcAddress
  echo "== $tool" >> "$OUT/sanitizer_gemm.log"
  r=$(timeout "$t" compute-sanitizer --tool $tool "${extra[@]}" --print-limit 20 python3 benchmarks/gemm_sanitize.py 2>&1 \
      | tee -a "$OUT/sanitizer_gemm.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY|Traceback" | tail -1)
  SUMMARY+=("compute-sanitizer $tool (cap $t s): ${r:-no summary (timeout?), see sanitizer_gemm.log}")
done
echo "== summary ($((SECONDS - T0)) s of $TOTAL)"
printf '%s\n' "${SUMMARY[@]}" | tee "$FINAL/gemm_device_summary.txt"
tar czf "$FINAL/gemm_device_logs.tgz" -C "$OUT" .
