#!/usr/bin/env bash
# hstream (2026-12-07 11:51 session; written before any run, CPU-only so far). ~100-140 s on an H100.
#
#     bash benchmarks/hstream_device.sh        (TESTS=0 skips part 0; ARMS="rule off on" picks arms; REPS)
#
# `TILEC_STREAM_AUTO`'s rule (backend/stream_rule.py, the new default): an unhinted kernel's loop of a run-time trip
# count streams its loads where the launch's resident CTAs x bytes a step < BDP = 3.02 TB/s x 0.742 us = 2.24 MB,
# with the fewest stages (3..8) that reach it. benchmarks/hstream_paths.py (call 39's hcliff12 rows, hcliff11's
# natural kernels; ours ms, torch ms, ratio = torch / ours, err, then the launch's decision), an arm a process:
#   rule   unset (the rule)            off   TILEC_STREAM_AUTO=0 (main before hstream)
#   on     TILEC_STREAM_AUTO=1 (hcliff11's override: every such loop, 3 stages, GEMVs without a pipeline too)
# 0. -m gpu tests/backend/test_stream_rule.py (col_sum on the card as a launch decides: 4 CTAs streamed with 8
#    stages, 128 CTAs of 4 KB with 6) and test_stream_loads.py -k auto_switch, against the interpreter:
#    EXPECTED 4 passed.
# EXPECTED (H100; call 39 measured off and on (3 stages) on these rows; the rule's column is the model's reading):
#   case                 CTAs x step      decision      off     on (call 39)   rule
#   col_sum              64 x 16 KB       stream=(4,)   ~0.51   ~0.88          ~0.88-1.0 (3 MiB in flight vs 2)
#   col_sum_bn32         256 x 4 KB       stream=(4,)   ~0.50   ~0.84          ~0.84-1.0
#   col_sum_bm128        64 x 64 KB       asked         ~0.87   ~1.03          ~0.87 (= off: the gain it leaves)
#   col_sum_bm128_bn32   256 x 16 KB      asked         ~0.99   ~0.90          ~0.99 (= off: the loss it avoids)
#   gemv, gemv_bk256     (FMA pipeline)   -             ~0.76 / ~0.46 in every arm (the pipeline takes the loop)
#   gemv_bm16, _bk256    (no pipeline)    -             ~0.13-0.14 off and rule; on: streamed FMA loop (~0.13-0.2)
#   gemv_nb8             (mma.sync)       -             ~0.39 in every arm
#   softmax 1k/8k/64k, transpose, dwconv, cumsum: `-` (no loop, or dwconv's constant taps): the same code in all
#     three arms, call 38's ratios within the spread: 1.01 / 1.64 / 1.13, 2.88, 3.55, 1.70.
#   err < 1e-2 (f16 GEMV) / < 1e-5 (col_sum) / the natural kernels' own as in call 38.
# Verdict: the rule is a good default if rule >= off - 3 % on every row and col_sum / col_sum_bn32 >= on's.
set -u
. "$(dirname "$0")/arms.sh" TILEC_STREAM_AUTO TILEC_FMA_PIPELINE
: "${TEST_TIMEOUT:=40}" "${ARM_TIMEOUT:=45}"
gpu_tests tests/backend/test_stream_rule.py tests/backend/test_stream_loads.py -k "on_the_gpu and (rule or auto_switch)"
for a in ${ARMS:-rule off on}; do
  case $a in
    rule) sw="" ;;
    off) sw="TILEC_STREAM_AUTO=0" ;;
    on) sw="TILEC_STREAM_AUTO=1" ;;
  esac
  arm $a $sw -- python3 benchmarks/hstream_paths.py --reps ${REPS:-10}
done
