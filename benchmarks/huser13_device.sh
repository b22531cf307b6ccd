#!/usr/bin/env bash
# huser13 (2026-12-06, round 13; no device time of its own): round 13's user programs j01-j10 on a real GPU
# against the interpreter (tests/user/test_user_gpu.py, whose glob takes them; `-k "j0 or j1"` selects exactly those 10).
# One step, ~30-60 s warm (10 programs, each a compile of 1-5 kernels and a run).
# Expected (written before any run): 10 passed. Why: each program's interpreter run matches NumPy and its llsim
# runs at sm_90a and sm_80 leave the interpreter's tensors exactly or to 1e-5. j01 is this round's feature on
# hardware: `dot`/`mma` of i8, u8, i32, i64 and f64 tiles by the FMA path (no tensor cores), integer results
# exact (the i32 sums wrap as the interpreter's do), f64 within GPU_TOL's 1e-6. What a card adds: the real
# approximate exp (j02's online softmax, p rounded to f16: within f32's 2e-3), f64 sin/cos of angles near 4100
# (j04), f16 arithmetic at its range edges (j07: infinities must agree; exp's row within f16's 2e-3), integer
# division by run-time values with 0, -1 and MIN (j06, exact), j08's transposes and masked
# softmax (NaN rows in place), j09's log-softmax and gradient (exp and log within f32's 2e-3), j10's integer
# convolution and requantisation (exact: integer `dot` and shifts only). A failure names the program and tensor.
# usage: bash benchmarks/huser13_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser13
python3 -m pytest -q -p no:cacheprovider -m gpu tests/user/test_user_gpu.py -k "j0 or j1" 2>&1 | tail -15
