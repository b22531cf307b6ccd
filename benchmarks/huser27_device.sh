#!/usr/bin/env bash
# huser27 (2026-12-07, round 26; no device time of its own): round 26's user programs (tests/user/programs/q01-q21,
# a scientific-computing user's: stencils, Gauss-Seidel, FFT, Monte Carlo, LBM, SPH, CG, quadrature, images)
# on a real GPU, each run once: its tensors against the interpreter's (floats with tests/user/test_user_gpu.py's
# tolerances, f32 2e-3 and f64 1e-6; integers and bools exact, else "ok~ N differ" where a discrete decision
# sits on a hardware-approximated value: q05's gamma through ex2/lg2.approx, q10's Metropolis test against
# exp, q02's nearest-root test, q17's rounding of DCT coefficients) and its own NumPy check
# (test_user_programs26.CHECKS) on the GPU's tensors; then benchmarks/huser27_bench.py: seven kernels with a
# PyTorch equivalent on CUDA tensors through the Python API, each compared with NumPy/PyTorch and timed against
# PyTorch (a table: Tile ms, torch ms, torch / Tile).
# Expected (written before any run): 21 "ok" lines (llsim agreed at sm_90a on q01-q04, q06-q21: integers exact,
# floats within 1e-5, q04 2e-14, q09's naive sum 6e-5), q05 perhaps "ok~" (a pixel or two one level apart).
# Ratios, guesses: q04's DGEMM (32 x 32 x 16 f64 tiles, no f64 tensor-core path assumed) 0.1-0.5x cuBLAS; q07's
# FFT-32 + inverse in one kernel vs two cuFFT calls 0.5-2x (memory-bound, 5 stages in registers, the bit reversal
# a 32 x 32 product); q09 Dot2 (f32, ~4x the flops of a dot) vs PyTorch's f64 multiply+sum 1-3x (PyTorch makes
# two f64 copies); q14's Gray-Scott step ([16, 16] tiles, 8 small shift products a tile) vs six rolls + arithmetic
# in PyTorch 1-4x (PyTorch makes ~15 full-size temporaries); q19 SPH density (all pairs, 16384) vs cdist +
# where 2-10x (no n^2 matrix); q17 JPEG block 1-3x vs batched 8 x 8 matmuls; q08 Harris (24 x 32 images, one a
# block) vs conv2d 0.5-2x. ~90-150 s, mostly compiles.
# usage (on the device, from the checkout's root): bash benchmarks/huser27_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser27
nvidia-smi -L
echo "=== each program on the GPU: against the interpreter, then its NumPy check"
timeout 110 python3 benchmarks/user_programs_gpu.py test_user_programs26 q --count-int-differ --bf16-tol 2e-3
echo "=== the kernels with a PyTorch equivalent, timed against it"
timeout 60 python3 benchmarks/huser27_bench.py 2>&1 | tail -22
