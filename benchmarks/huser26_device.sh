#!/usr/bin/env bash
# huser26 (2026-12-07, round 25; no device time of its own): round 25's user programs (tests/user/programs/n01-n24,
# a PyTorch model's pieces) on a real GPU, each run once: its tensors against the interpreter's
# (tests/user/test_user_gpu.py's tolerances: integers and bools exact, f32 2e-3, f16 2e-3, bf16 1.6e-2) and its
# own NumPy check (test_user_programs25.CHECKS) on the GPU's tensors; then benchmarks/huser26_bench.py: eight
# kernels with a PyTorch equivalent, on CUDA tensors through the Python API, each result compared with PyTorch's
# and timed against it (a table: Tile ms, torch ms, torch / Tile).
# Expected (written before any run): 24 "ok" lines (llsim agreed on every one at sm_90a to 1e-5); then 8 rows
# "same". Guesses for torch / Tile: GroupNorm fwd, SwiGLU bwd, QK-norm + RoPE and add+RMSNorm bwd near PyTorch's
# (0.7-2x: one memory pass each where PyTorch's eager ops take several, its GroupNorm one fused kernel), the
# cross-entropy forward near (0.5-1.5x: one online pass of 32000 columns a row block against PyTorch's
# log_softmax + gather), AdamW near torch's fused AdamW (0.7-1.2x: both one pass of 4 streams), the MoE router
# above (1-3x: one launch against softmax + topk + div), the W4A16 linear below cuBLAS's f16 dense GEMM
# (0.2-0.8x: 32 x 32 tiles, two mmas of K = 16 a group). ~100-150 s, mostly compiles.
# usage (on the device, from the checkout's root): bash benchmarks/huser26_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser26
nvidia-smi -L
echo "=== each program on the GPU: against the interpreter, then its NumPy check"
timeout 110 python3 benchmarks/user_programs_gpu.py test_user_programs25 n
echo "=== the kernels with a PyTorch equivalent, timed against it"
timeout 60 python3 benchmarks/huser26_bench.py 2>&1 | tail -20
