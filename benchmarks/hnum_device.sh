#!/usr/bin/env bash
# hnum (2026-12-07): the f32 `atan2` of correctly rounded operations only (`tilelang/interp/atan32.py`, emitted by
# `f32exact.atan2`), the default on both engines (`asin`, `acos`, `atan` through it): the card must give the
# interpreter's bits. ~50-90 s on an H100 (most of it the interpreter's half and the compiles); at most 120.
#
#     bash benchmarks/hnum_device.sh
#
# Expected (RESULTS.md 'hnum'; CPU-only, not yet measured):
# 1. `bits`: benchmarks/hnum_device.py bits: f32 atan2 of ~4.8 million pairs (hnum_atan2.py's ten classes: 400k
#    of each random one, every 2048th f32 of [0, 1) for its sweeps), f16 and bf16 atan2 of 2^20 random bit pairs
#    each, f32 asin and acos of 2^20 values of [-1.1, 1.1]: "0 differ" on all five lines (llsim: 0 of each).
# 2. `gpu tests`: the gpu cases of tests/backend/test_atan2_32.py and test_inverse_trig.py: "2 passed".
# 3. `time`: an f32 atan2 of 2^24 pairs alone in a kernel (12 bytes an element), median of 20. new: ~67 SASS
#    instructions an element (sm_90a, ptxas 13: one div.rn with its slow path's branch, 7 FFMA, no FP64), ~0.04
#    ms of issue at 1.75 GHz under the ~0.065 ms the 201 MB take at ~3 TB/s: **memory-bound, ~0.07-0.09 ms**.
#    old (`TILEC_ATAN2_F32=0`): ~183 an element, ~57 of them FP64 (an H100 SXM runs FP64 at half FP32's rate:
#    ~0.065 ms of FP64 issue alone): **~0.09-0.14 ms, 1.2-1.8x the new**; the gap is the compute's where atan2 is
#    one op among many in a fused kernel (herf's erf MLP: 2.8x).
set -u
. "$(dirname "$0")/arms.sh"
ARM_TIMEOUT=45 ARM_TAIL=6 arm bits -- python3 benchmarks/hnum_device.py bits
TEST_TIMEOUT=45 gpu_tests -n 0 tests/backend/test_atan2_32.py tests/backend/test_inverse_trig.py
ARM_TIMEOUT=15 ARM_TAIL=1 arm time TILEC_ATAN2_F32=1 -- python3 benchmarks/hnum_device.py time
ARM_TIMEOUT=15 ARM_TAIL=1 arm time TILEC_ATAN2_F32=0 -- python3 benchmarks/hnum_device.py time
