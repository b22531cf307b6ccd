#!/usr/bin/env bash
# The sm_80 GEMM path (issue 14 item 4: cp.async ring + ldmatrix + mma.sync)
# forced on the H200 (TILEC_ARCH=sm_80: sm_80 PTX, which the driver JITs), in
# one device call, <= 90 s with every step under `timeout`:
#   1. f16 8192^3 against cuBLAS, best of benchmarks/gemm.py's SM80_CONFIGS
#      (each checked against torch first), cap 40 s
#   2. its GPU tests vs the interpreter (tests/backend/test_sm80.py -m gpu:
#      3 configs x 5 shapes incl. edges, K < tile, one row/column), cap 45 s
#   3. only with time left of the 90 s: compute-sanitizer racecheck, then
#      memcheck, over benchmarks/gemm_sanitize.py with TILEC_ARCH=sm_80 (its
#      four GEMMs, odd shapes and bf16 included, all on the sm_80 path)
# Writes sm80_tests.log, sm80_bench.log, sm80/gemm.json, sm80_summary.txt to $OUT.
# usage, from the repository root on the device: bash benchmarks/sm80_device.sh
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} TILEC_CACHE_DIR=/tmp/tilec-sm80
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1 && ! python3 -c "import lark" 2>/dev/null; then
  timeout 20 python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
T0=$SECONDS
SUMMARY=()
TILEC_ARCH=sm_80 timeout 40 python3 benchmarks/gemm.py --only square80 --out "$OUT/sm80" > "$OUT/sm80_bench.log" 2>&1
rc=$?
SUMMARY+=("sm_80 8192^3 bench (rc $rc, 124 = timeout, $((SECONDS - T0)) s): $(grep -E '^\[|^  \[|kernels built' "$OUT/sm80_bench.log" | tr '\n' ';')")
timeout 45 python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_sm80.py > "$OUT/sm80_tests.log" 2>&1
rc=$?
SUMMARY+=("sm_80 GPU tests (rc $rc, 124 = timeout, $((SECONDS - T0)) s): $(tail -1 "$OUT/sm80_tests.log")")
for tool in racecheck memcheck; do
  left=$(( 88 - (SECONDS - T0) ))
  if (( left < 15 )); then SUMMARY+=("sanitizer $tool: skipped ($left s left of 90)"); continue; fi
  r=$(TILEC_ARCH=sm_80 timeout $left compute-sanitizer --tool $tool --print-limit 20 python3 benchmarks/gemm_sanitize.py 2>&1 \
      | tee "$OUT/sm80_sanitizer_$tool.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | tail -1)
  SUMMARY+=("sanitizer $tool on the sm_80 path: ${r:-no summary (timeout?), see sm80_sanitizer_$tool.log}")
done
echo "== summary ($((SECONDS - T0)) s)"
printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/sm80_summary.txt"
