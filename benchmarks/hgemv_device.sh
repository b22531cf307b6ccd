#!/usr/bin/env bash
# hgemv (2026-12-07 11:51 session; written before any run, CPU-only so far). ~90-150 s on an H100.
#
#     bash benchmarks/hgemv_device.sh        (TESTS=0 skips part 0; ARMS="new old" picks arms; REPS)
#
# The GEMV of a few tokens (y = W x, W [8192, 8192], x [8192, NB]; benchmarks/hgemv_paths.py: ours ms, torch ms,
# ratio = torch / ours, err), an arm a process (the switches are read when a kernel is lowered):
#   new   this branch's default: where the accumulator is too small to give each warp its own elements, the FMA
#         pipeline's 4 warps each hold the whole tile and sum a quarter of each stage's k-steps (a 16-row tile: 8
#         parts, the lanes' halves too), then add the copies in order through shared memory (`pipeline_fma._split`)
#   old   TILEC_FMA_KSPLIT=0: call 39's plan (2 warps of 1 x 4 at [64, 4]; a 16-row tile: no pipeline)
# 0. -m gpu tests/backend/test_fma_ksplit.py and test_fma_half.py (split kernels on the card against the
#    interpreter, exact: 4 parts, 16 rows in 8 parts, 256-wide steps; hcliff12's 2 cases): EXPECTED 5 passed.
# EXPECTED (CPU reading: sm_90a SASS, ptxas 13; RESULTS "hgemv"; call 39 on an H100: torch 0.062 ms for the 4-token
# f16 GEMV; ours 0.0785 ms = 0.76x, gemv_bk256 0.46x, gemv_bm16 0.13x, tokens padded to 8 0.39x):
#   gemv (BM 64, BK 64, NB 4; 128 CTAs): old ~0.078 ms, 0.7-0.8x (692 instructions a warp a step, 2 warps);
#     new ~0.045-0.07 ms, 0.9-1.35x (292 a warp a step on 4 warps: issue ~21 us, so W's 128 MB at the bandwidth
#     the 3 stages in flight give, 3 MB over the card); new/old 0.6-0.9
#   gemv_bk256: old ~0.45x (2 warps, 2 stages, 2,706 instructions a step); new 0.7-1.2x (1,077 a warp a step)
#   gemv_bm16 (512 CTAs): old ~0.13x (no pipeline); new 0.7-1.2x (113 a warp a step, 16 warps an SM)
#   gemv_bm16_bk256: old ~0.15-0.4x (no pipeline); new 0.8-1.2x (368 a warp a step, 4 stages of 10.5 KB)
#   f16_n1, f16_n2, bf16_n1, bf16_n2: the FMA loop with no pipeline in both arms (rows of 2 and 4 bytes: under
#     cp.async's 4-byte copies for x's [K, 1] column; NB 2 not yet taken): ~0.1-0.3x, new = old
#   f16_n8, bf16_n8 (mma.sync, no ring): ~0.3-0.45x in both arms (call 39's nb8: 0.39x)
#   bf16_n4, bf16_bk256: as the f16 lines (the same SASS but bf16's widening: PRMT/SHL or HADD2.F32 by ptxas)
#   err in every line < 1e-2.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export TILEC_CACHE_DIR="${TILEC_CACHE_DIR:-$(mktemp -d)}"
unset TILEC_FMA_KSPLIT TILEC_FMA_PIPELINE TILEC_STREAM_AUTO
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
t0=$(date +%s)
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TEST_TIMEOUT:-60} python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_fma_ksplit.py \
    tests/backend/test_fma_half.py 2>&1 | tail -1 | sed "s/^/gpu tests /"
  echo "(tests done at $(( $(date +%s) - t0 )) s)"
fi
for arm in ${ARMS:-new old}; do
  case $arm in
    new) sw="" ;;
    old) sw="TILEC_FMA_KSPLIT=0" ;;
  esac
  env $sw timeout ${ARM_TIMEOUT:-60} python3 benchmarks/hgemv_paths.py --reps ${REPS:-10} 2>&1 \
    | grep -v "^#\|Warn" | sed "s/^/$arm /"
  echo "($arm done at $(( $(date +%s) - t0 )) s)"
done
