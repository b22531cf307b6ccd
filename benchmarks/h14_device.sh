#!/usr/bin/env bash
# h14's batched device call: GEMM diagnostics, GPU GEMM tests, benchmarks.
# usage (on the device, from the checkout copy): bash benchmarks/h14_device.sh STEP...
set -uo pipefail
export PYTHONUNBUFFERED=1 TILEC_CACHE_DIR=/tmp/tilec-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi -L
for step in "$@"; do
  echo "=== $step"
  case $step in
    debug) timeout 120 python3 benchmarks/gemm_debug.py 2>&1 | tee "$OUT/debug.log" ;;
    gemmtests) timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/backend/test_gpu_gemm.py 2>&1 | tail -25 | tee "$OUT/pytest_gemm.log" ;;
    gputests) timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend tests/examples 2>&1 | tail -25 | tee "$OUT/pytest_gpu.log" ;;
    bench1) timeout 240 python3 benchmarks/gemm.py --only square,nt --dtypes f16 --configs 2 --out "$OUT" 2>&1 | tee "$OUT/bench.log" ;;
    bench) timeout 330 python3 benchmarks/gemm.py --out "$OUT" 2>&1 | tee "$OUT/bench.log" ;;
    sanitize)
      for tool in memcheck racecheck synccheck; do
        echo "== compute-sanitizer --tool $tool: GEMM paths"
        timeout 150 compute-sanitizer --tool $tool --print-limit 20 python3 benchmarks/gemm_sanitize.py 2>&1 \
          | tee "$OUT/sanitizer_gemm_$tool.log" | grep -E "SUMMARY|Hazard|Invalid|sanitize\]|Error" | head -12
        for ex in softmax layernorm rmsnorm; do
          r=$(timeout 90 compute-sanitizer --tool $tool --print-limit 10 python3 -m tilelang run examples/$ex.tile --device gpu 2>&1 | tee -a "$OUT/sanitizer_rows_$tool.log" | grep -E "SUMMARY" | tail -1)
          echo "$tool $ex: ${r:-no summary (see log)}"
        done
      done ;;
  esac
done
