#!/usr/bin/env bash
# huser19 (2026-12-06, round 19; no device time of its own): round 19's user programs x01-x15 on a real GPU against
# the interpreter (tests/user/test_user_gpu.py, whose glob takes them; `-k "x0 or x1"` selects exactly those 15),
# then this round's new operations on hardware: `to_bits` / `from_bits` of f32, f64, f16 and bf16 (specials,
# subnormals, random bit patterns) and `asin` / `acos` / `atan` / `atan2` (f32, f16, f64).
# One step each, ~60-120 s warm (15 programs of 1-7 kernels; two small programs).
# Expected (written before any run): 15 passed, then 2 passed. Why: each program's interpreter run matches NumPy
# and its llsim runs at sm_90a and sm_80 leave the interpreter's tensors exactly or to 1e-5; the bit casts and
# the f32 angles are bit-identical to the interpreter in llsim (f64 angles within 2 ulp: f64math.atan2 against
# NumPy's arctan2). What a card adds: the real f64 units for atan2's series (x14's slerp angles, the trig test),
# `bitcast`/`lshr` of bf16 in f32 registers and `fptrunc`/`fpext` through `half` (x13, the bits test), the
# atomics of x11 (`atomic_max` of f32 tiles) and x15 (`atomic_max` of i32 flag tiles), x02's last-block LUT.
# A failure names the program (or the operation) and the tensor.
# usage: bash benchmarks/huser19_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser19
python3 -m pytest -q -p no:cacheprovider -m gpu tests/user/test_user_gpu.py -k "x0 or x1" 2>&1 | tail -15
python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_bitcast.py tests/backend/test_inverse_trig.py 2>&1 | tail -8
