#!/usr/bin/env bash
# herf (2026-12-07): the f32 `erf` of correctly rounded operations only (`tilelang/interp/erf32.py`, emitted by
# `f32exact.erf`), the default on both engines: the card must give the interpreter's bits. ~100-150 s on an
# H100 (most of it compiling the MLP variants and the interpreter's half of the sweep).
#
#     bash benchmarks/herf_device.sh
#
# Expected (RESULTS.md 'herf'; CPU-only, not yet measured):
# 1. `erf_pow`: tests/run/erf_pow.tile printed by `python3 -m tilelang run` on the card and on the interpreter:
#    "same" (call 35's miss: hcliff10's MUFU erf printed 0.15729916 against 0.15729922).
# 2. `sweep`: benchmarks/herf_sweep.py, erf of ~11.9 million f32 (every 101st of [0, 4.5), every 1009th of its
#    negation, the subnormal band, the specials) and of every f16 and every bf16 value on the card against the
#    interpreter; f32 pow (herf's fix: the interpreter's in f64, the GPU's x * x where y == 2) on 3 x 2^20
#    operand pairs (random, exact ties of x^2, integer powers of negative x) and by the constants 2, 0.5 and -1
#    (one f32 operation each, `f32exact.pow_const`): "0 differ" on all nine lines.
# 3. `gpu tests`: the gpu cases of tests/backend/test_erf32.py and test_pow_f32_bits.py (the same, smaller): 2 passed.
# 4. `mlp erf` / `mlp inner erf` (huser16_paths.py: the natural fused exact-GELU MLP, T = 16384, D = 128, H = 512,
#    f16; ratio = torch time / ours): new (the default) ~29 SASS instructions an element on the FP32 pipe, like
#    hcliff10's MUFU form (~31, measured 2.26x and 1.54x in call 35): expect **~2.1-2.4x** and **~1.4-1.6x**;
#    old (`TILEC_ERF_F32=0`, the f64 series, ~122 an element, half on the FP64 pipe): ~0.83x and ~0.48x as
#    in call 35.
set -u
. "$(dirname "$0")/arms.sh"
T=$(mktemp -d)
timeout 60 python3 -m tilelang run tests/run/erf_pow.tile --device cpu > "$T/cpu.txt" 2>&1
timeout 60 python3 -m tilelang run tests/run/erf_pow.tile --device gpu > "$T/gpu.txt" 2>&1
if [ ! -s "$T/cpu.txt" ]; then echo "erf_pow: the interpreter printed nothing (not a comparison)"
elif cmp -s "$T/cpu.txt" "$T/gpu.txt"; then echo "erf_pow: same ($(head -1 "$T/cpu.txt"))"
else echo "erf_pow: DIFFERS"; diff "$T/cpu.txt" "$T/gpu.txt" | head -10; fi
timeout 90 python3 benchmarks/herf_sweep.py 2>&1 | tail -10
TEST_TIMEOUT=60 gpu_tests -n 0 tests/backend/test_erf32.py tests/backend/test_pow_f32_bits.py
ARM_TIMEOUT=60 arm new TILEC_ERF_F32=1 -- python3 benchmarks/huser16_paths.py --only erf --reps 20
ARM_TIMEOUT=60 arm old TILEC_ERF_F32=0 -- python3 benchmarks/huser16_paths.py --only erf --reps 20
