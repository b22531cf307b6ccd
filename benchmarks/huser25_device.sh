#!/usr/bin/env bash
# huser25 (2026-12-07, round 24; no device time of its own): round 24's user programs (tests/user/programs/l01-l23)
# on a real GPU, each run once: its tensors against the interpreter's (tests/user/test_user_gpu.py's tolerances:
# integers and bools exact, f32 2e-3, f16 2e-3, bf16 1.6e-2, f64 1e-6) and its own NumPy check
# (test_user_programs24.CHECKS) on the GPU's tensors; then benchmarks/huser25_bench.py: the eight kernels with a
# PyTorch equivalent, on CUDA tensors through the Python API, each result compared with PyTorch's and timed
# against it (a table: Tile ms, torch ms, torch / Tile).
# Expected (written before any run): 23 "ok" lines (llsim agreed at sm_90a to 1e-5, l12 to 1e-3: the GPU's tanh;
# l21's cluster needs sm_90),
# then 8 "same"/"kept" rows. Guesses for the ratios: the masked softmax, RoPE, dropout, slice moments and the
# histogram near PyTorch (0.6-1.5x: memory-bound, one pass each; the dropout's Philox is 10 rounds of u64
# multiplies a lane), the GEMM epilogue below cuBLAS (0.3-0.8x: 128 x 128 x 32 tiles, a generic k-loop), the
# top-5 (5 argmax rounds of a [1, 64] row a block) and the rank sort ([1, 32, 32] compares a row) well below
# (0.05-0.5x: one small row a block). ~100-150 s, mostly compiles.
# usage (on the device, from the checkout's root): bash benchmarks/huser25_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser25
nvidia-smi -L
echo "=== each program on the GPU: against the interpreter, then its NumPy check"
timeout 100 python3 benchmarks/user_programs_gpu.py test_user_programs24 l
echo "=== the kernels with a PyTorch equivalent, timed against it"
timeout 60 python3 benchmarks/huser25_bench.py 2>&1 | tail -22
