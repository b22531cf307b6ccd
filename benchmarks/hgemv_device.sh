#!/usr/bin/env bash
# hgemv (2026-12-07 11:51 session; written before any run, CPU-only so far). ~110-150 s on an H100.
#
#     bash benchmarks/hgemv_device.sh   (TESTS=0 skips part 0; ARMS="new nowiden nosplit stages2 old" picks arms; REPS)
#
# The GEMV of a few tokens (y = W x, W [8192, 8192], x [8192, NB]; benchmarks/hgemv_paths.py: ours ms, torch ms,
# ratio = torch / ours, err), an arm a process (the switches are read when a kernel is lowered):
#   new      this branch's default, four changes to a 2-byte product on the FMA pipeline (`pipeline_fma`):
#            split-K among warps where the accumulator is too small to give each warp its own elements (4 warps
#            each holding the whole tile, a quarter of every stage's k-steps; a 16-row tile in 8 parts; the copies
#            added in order through shared memory), x's 2-byte stage widened once a CTA into an f32 buffer (a
#            barrier after) instead of once a thread, at least 3 stages where they fit (a 256-wide step had 2), and
#            1 and 2 tokens on the pipeline (x's [K, 1] column copied as one run of 16-byte chunks; [K, 2] rows by
#            4-byte copies)
#   nowiden  TILEC_FMA_WIDEN=0 (the split and the stages; gemv, gemv_bm16, gemv_bk256)
#   nosplit  TILEC_FMA_KSPLIT=0 (call 39's 2 warps of 1 x 4 with x widened once; gemv, gemv_bk256)
#   stages2  TILEC_FMA_HALF_STAGES=2 (gemv_bk256: the split loop, 14 KB of code, at 2 stages)
#   old      TILEC_FMA_KSPLIT=0 TILEC_FMA_WIDEN=0 TILEC_FMA_HALF_STAGES=2 TILEC_FMA_NARROW=0: call 39's plan (a 16-row
#            tile, 1, 2 and 8 tokens: no ring)
# 0. -m gpu tests/backend/test_fma_ksplit.py and test_fma_half.py (split kernels on the card against the
#    interpreter, exact: 4 parts, 16 rows in 8 parts, 256-wide steps, 1 token's flat copy cut mid-chunk, 2 tokens;
#    hcliff12's 2 cases): EXPECTED 7 passed.
# EXPECTED (CPU reading: sm_90a SASS, ptxas 13, a warp's loop a K step; RESULTS "hgemv"; call 39 on an H100: torch
# 0.062 ms for the 4-token f16 GEMV; ours 0.0785 ms = 0.76x, gemv_bk256 0.46x, gemv_bm16 0.13x, tokens padded to 8
# 0.39x):
#   gemv (BM 64, BK 64, NB 4; 128 CTAs): old ~0.078 ms, 0.7-0.8x (692 instructions a warp a step, 2 warps); nosplit
#     (473, 2 warps) 0.8-1.0x; nowiden (292, 4 warps) and new (246, 4 warps, 2 barriers a step): ~0.045-0.07 ms,
#     0.9-1.35x: issue ~18-21 us, so W's 128 MB at the bandwidth 3 stages in flight give (3 MB over the card) bounds
#     it; new/old 0.6-0.9, new ~ nowiden (memory-bound) or up to 10 % faster
#   gemv_bk256: old ~0.45x (2 warps, 2 stages, 2,706 a step); new 0.8-1.2x (875 a warp a step, 3 stages);
#     stages2 (875, 2 stages) below new by 10-40 % if a stage in flight was the cause, as new if code size was
#   gemv_bm16 (512 CTAs): old ~0.13x (no pipeline); nowiden 0.7-1.2x (113 a warp a step); new 96, as nowiden or
#     better (16 warps an SM: nearer issue-bound than 64 rows)
#   gemv_bm16_bk256: old ~0.15-0.4x (no pipeline); new 0.8-1.2x (269 a warp a step, 4 stages of 10.5 KB)
#   f16_n1, f16_n2, bf16_n1, bf16_n2: old the FMA loop with no pipeline, ~0.1-0.3x; new the split pipeline (150 /
#     173 a warp a step in f16, 168 / 191 bf16; memory-bound as gemv): 0.7-1.2x
#   f16_n8, bf16_n8: old mma.sync with no ring, ~0.3x (call 41, H200: 0.29x); new the split FMA pipeline (409 a
#     warp a step, 256 FFMA), ~0.8-1.1x
#   bf16_n4: as gemv (bf16's widening is a shift: 264 a warp a step at [64, 64], old 852)
#   err in every line < 1e-2.
set -u
. "$(dirname "$0")/arms.sh" TILEC_FMA_KSPLIT TILEC_FMA_WIDEN TILEC_FMA_HALF_STAGES TILEC_FMA_NARROW TILEC_FMA_PIPELINE \
  TILEC_STREAM_AUTO
: "${TEST_TIMEOUT:=60}" "${ARM_TIMEOUT:=70}"
gpu_tests tests/backend/test_fma_ksplit.py tests/backend/test_fma_half.py
for a in ${ARMS:-new nowiden nosplit stages2 old}; do
  case $a in
    new) sw="" ; only="" ;;
    nowiden) sw="TILEC_FMA_WIDEN=0" ; only="gemv,gemv_bm16,gemv_bk256" ;;
    nosplit) sw="TILEC_FMA_KSPLIT=0" ; only="gemv,gemv_bk256" ;;
    stages2) sw="TILEC_FMA_HALF_STAGES=2" ; only="gemv_bk256" ;;
    old) sw="TILEC_FMA_KSPLIT=0 TILEC_FMA_WIDEN=0 TILEC_FMA_HALF_STAGES=2 TILEC_FMA_NARROW=0"
         only="" ;;
  esac
  arm $a $sw HGEMV_CASES="$only" -- python3 benchmarks/hgemv_paths.py --reps ${REPS:-10}
done
