#!/usr/bin/env bash
# The sm_80 GEMM path (issue 14 item 4: cp.async ring + ldmatrix + mma.sync)
# forced on the H200 (TILEC_ARCH=sm_80: sm_80 PTX, which the driver JITs), in
# one device call, <= 90 s with every step under `timeout`:
#   1. f16 8192^3 against cuBLAS, best of benchmarks/gemm.py's SM80_CONFIGS
#      (each checked against torch first), cap 40 s
#   2. its GPU tests vs the interpreter (tests/backend/test_sm80.py -m gpu:
#      3 configs x 5 shapes incl. edges, K < tile, one row/column), cap 45 s
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
echo "== summary ($((SECONDS - T0)) s)"
printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/sm80_summary.txt"
