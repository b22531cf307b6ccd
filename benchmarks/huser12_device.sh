#!/usr/bin/env bash
# huser12 (2026-12-06, round 12; no device time of its own): round 12's user programs g01-g13 on a real GPU
# against the interpreter (tests/user/test_user_gpu.py, whose glob takes them; `-k "g0 or g1"` selects exactly
# those 13). One step, ~40-90 s warm (13 programs, each a compile of 1-3 kernels and a run).
# Expected (written before any run): 13 passed. Why: each program's interpreter run matches NumPy and its llsim
# runs at sm_90a and sm_80 leave the interpreter's tensors (to 1e-5; g04's y 1e-3: a mean near 100 summed in
# another order moves by an ulp of 100). What a card adds: ptxas, the real approximate exp/sin/cos/rsqrt/tanh
# (g02's twiddles, g04's rsqrt, g08's logs are host-made, g09's exp/log at their documented error, g06/g11's
# SiLU and rotary), all within test_user_gpu's GPU_TOL (f32 2e-3, f16 2e-3, bf16 1.6e-2, f64 1e-6). Integer
# results (g03's u8 boards and u32 atomics, g07's i8, g08's argmax paths) must agree exactly, and g13's running
# maxima to the digit (NaN in place: max.NaN/min.NaN are exact); g07 divides by the
# scale with `/` (exact on both) and g08's argmax compares sums made by the same host logs. A failure names the
# program and tensor.
# usage: bash benchmarks/huser12_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser12
python3 -m pytest -q -p no:cacheprovider -m gpu tests/user/test_user_gpu.py -k "g0 or g1" 2>&1 | tail -15
