#!/usr/bin/env bash
# GEMM checks for one device call (issue 14, h14), hang-proof and budgeted:
#   1. the register-copy producer (TILEC_COPY_PRODUCER=1) on the GPU GEMM tests,
#      60 s cap: if it hangs or fails, every later step leaves it off
#   2. 8191^3 f16/bf16 (edges everywhere) with it, against cuBLAS and Triton
#   3. first launch of a 128x256x64 wgmma GEMM, fresh process, empty cache (+ profile)
#   4. compute-sanitizer memcheck, racecheck, synccheck on the GEMM paths and
#      the row kernels (softmax, layernorm, rmsnorm examples)
# Stops starting new steps after BUDGET seconds (default 300).
# usage, from the repository root on the device: bash benchmarks/gemm_device.sh
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} TILEC_CACHE_DIR=/tmp/tilec-gemm
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1 && ! python3 -c "import lark" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=$PYTHONPATH:/tmp/site
fi
BUDGET=${BUDGET:-300}
T0=$SECONDS
left() { echo $(( BUDGET - (SECONDS - T0) )); }
step() { if (( $(left) < ${2:-30} )); then echo "== skipped $1: budget"; return 1; fi; echo "== $1 ($(left) s left)"; }
SUMMARY=()

COPY=0
if step "copy producer: GPU GEMM tests" 70; then
  if TILEC_COPY_PRODUCER=1 timeout 60 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/backend/test_gpu_gemm.py \
       > "$OUT/gemm_copy_tests.log" 2>&1; then
    COPY=1; SUMMARY+=("copy producer: GPU GEMM tests PASSED")
  else
    SUMMARY+=("copy producer: GPU GEMM tests FAILED or HUNG (rc $?): left off")
  fi
  tail -5 "$OUT/gemm_copy_tests.log"
fi
if [[ $COPY == 1 ]] && step "8191^3 with the copy producer" 70; then
  TILEC_COPY_PRODUCER=1 timeout 90 python3 benchmarks/gemm.py --only edge --configs 1 > "$OUT/gemm_edge.log" 2>&1
  SUMMARY+=("$(grep '^\[.*8191' "$OUT/gemm_edge.log" | tr '\n' ' ')")
fi
if step "first launch" 40; then
  timeout 60 python3 benchmarks/gemm.py --only first > "$OUT/gemm_first.log" 2>&1
  SUMMARY+=("$(grep '^\[first\] first launch' "$OUT/gemm_first.log")")
fi
export TILEC_COPY_PRODUCER=$COPY
for tool in memcheck racecheck synccheck; do
  step "compute-sanitizer $tool" 60 || continue
  r=$(timeout 120 compute-sanitizer --tool $tool --print-limit 20 python3 benchmarks/gemm_sanitize.py 2>&1 \
      | tee "$OUT/sanitizer_gemm_$tool.log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY" | tail -1)
  SUMMARY+=("$tool GEMM paths (copy producer $COPY): ${r:-no summary, see sanitizer_gemm_$tool.log}")
  for ex in softmax layernorm rmsnorm; do
    r=$(timeout 60 compute-sanitizer --tool $tool --print-limit 10 python3 -m tilelang run examples/$ex.tile --device gpu 2>&1 \
        | tee -a "$OUT/sanitizer_rows_$tool.log" | grep -E "SUMMARY" | tail -1)
    SUMMARY+=("$tool $ex: ${r:-no summary, see sanitizer_rows_$tool.log}")
  done
done
echo "== summary ($((SECONDS - T0)) s)"
printf '%s\n' "${SUMMARY[@]}" | tee "$OUT/gemm_device_summary.txt"
