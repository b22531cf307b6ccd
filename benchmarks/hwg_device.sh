#!/usr/bin/env bash
# hwg (2026-12-07): the products pipeline on Hopper's warpgroup MMA (wgmma) after hwg's two changes, on an H100 / H200
# (sm_90 card), ~130-160 s in one step (each part cut: at most ~300 s):
#   1. wgmma is the default on sm_90a where the warps split the rows and every product of two shared operands reads
#      its B K-major (a01's dQ; FA2's dK/dV with the warps on rows); `TILEC_PRODUCTS_WGMMA=0` is the way back,
#      `=1` also takes the columns split (FA2's dK/dV at D = 128) and an MN-major shared B (the gate/up pair's gate).
#   2. the columns split's B descriptors: each warpgroup's offset now goes into the 32-bit address field. Added to
#      the 64-bit descriptor (hcliff5's form), ptxas 13.0 built S^T's and dP^T's B descriptors with their high word
#      (SBO, the 128-byte swizzle: 0x40000040) never added (`tests/ptxas_report.hgmma_desc_faults`: 16 of the 24
#      HGMMAs before, 0 after): call 32's wrong dK/dV, which llsim (running the LLVM IR) could not see.
#
#     bash benchmarks/hwg_device.sh
#
# Expected:
# - gpu tests (test_pipeline_products' test_on_the_gpu_against_the_interpreter, 11 cases): 11 passed. New cases:
#   "... mma.sync" (the way back), "dkdv 64x64 D128 rows" (TILEC_PRODUCTS_COLS=1: one warpgroup on wgmma),
#   "gate_up 64x64 wgmma" (an SS wgmma with an MN-major B: never run before), "dkdv 64x64 D128 wgmma" (the split:
#   failed in call 32 with 8/8 statistics off; expected to pass now). A failure of the split case alone says the
#   descriptor fix was not the (whole) cause; a failure of "gate_up 64x64 wgmma" too points at the MN-major SS form.
# - memcheck on "dkdv 64x64 D128 wgmma": 0 errors (call 32: 0 errors too, the values were wrong).
# - bench rows (hcliff5_paths.py; H = 32 over 8 KV heads, S = 4,096, D = 128, causal, f16; H100):
#     dq   default (now wgmma)         ~0.39-0.42 ms, ~500-520 TFLOP/s (call 32's wgmma arm: 516.8), err ~6e-4
#     dq   TILEC_PRODUCTS_WGMMA=0      ~0.69-0.71 ms, ~290-295 TFLOP/s (call 32: 293.2; call 28: 0.694 ms)
#     dkdv default (mma.sync split)    ~1.13-1.17 ms, 235-243 TFLOP/s (call 28)
#     dkdv TILEC_PRODUCTS_WGMMA=1      call 32: CUDA_ERROR_ILLEGAL_ADDRESS. Now expected right (err ~1e-3) and
#                                      0.75-0.95 ms (1.2-1.5x the split on mma.sync: less than dQ's 1.76x, each
#                                      warpgroup's products are n32 / n64 and ptxas serialises S^T and dP^T, C7517)
#   If the last row is right and faster, the split belongs in `wgmma_rule`'s "auto" (one line, plus the tests).
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
T=tests/backend/test_pipeline_products.py
echo "== gpu tests (test_on_the_gpu_against_the_interpreter)"
timeout 120 python3 -m pytest -q -n 4 -p no:cacheprovider -m gpu "$T" -k test_on_the_gpu_against_the_interpreter 2>&1 \
  | grep -E "passed|failed|FAILED|Error" | cut -c1-400
echo "== compute-sanitizer memcheck: dkdv 64x64 D128 wgmma"
if command -v compute-sanitizer >/dev/null; then
  timeout 90 compute-sanitizer --tool memcheck --target-processes all python3 -m pytest -q -n 0 -p no:cacheprovider -m gpu \
    "$T::test_on_the_gpu_against_the_interpreter[dkdv 64x64 D128 wgmma]" 2>&1 \
    | grep -E "ERROR SUMMARY|passed|failed" | head -4
else
  echo "compute-sanitizer not on PATH"
fi
run() {  # arm, seconds, args for hcliff5_paths.py, env...
  local arm=$1 cut=$2 args=$3; shift 3
  env "$@" timeout "$cut" python3 benchmarks/hcliff5_paths.py $args 2>&1 | grep -v '^#' | grep -v "share\|pair" \
    | sed "s/^/$arm /"
}
echo "== bench rows (hcliff5_paths.py)"
run default 40 "--only dq --reps 10"
run mma.sync 40 "--only dq --reps 10" TILEC_PRODUCTS_WGMMA=0
run default 40 "--only dkdv --reps 10"
run wgmma=1 40 "--only dkdv --reps 10" TILEC_PRODUCTS_WGMMA=1
