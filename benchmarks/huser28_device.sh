#!/usr/bin/env bash
# huser28 (2026-12-07, round 27; no device time of its own): round 27's user programs (tests/user/programs/w04-w24,
# a systems / data-engineering user's integer and bit-level kernels: radix sort passes, CRC-32 by table, u64
# hashing, unique and RLE by scans, CSR SpMV with i64 offsets, top-k, W8A8 GEMM, Q16.16 CORDIC, EmbeddingBag,
# u16 raw frames, bit packing, rank/select, Base32, RLE, Adler-32, argwhere, xorshift graphs, HyperLogLog,
# sessions, string take, a cluster histogram) on a real GPU, each run once: its tensors against the
# interpreter's (integers and bools exact; floats with tests/user/test_user_gpu.py's tolerances) and its own
# NumPy check (test_user_programs27.CHECKS) on the GPU's tensors; then benchmarks/huser28_bench.py: six kernels
# with a PyTorch equivalent on CUDA tensors through the Python API, each compared with NumPy and timed against
# PyTorch (a table: Tile ms, torch ms, torch / Tile).
# Expected (written before any run): 21 "ok" lines (llsim agreed at sm_90a on all 21, integers exact, floats within
# 1e-5; w09's i8 tiles of 16 x 16 x 32 take the int8 tensor cores). Ratios, guesses: w10 top-8 (K rounds of
# argmax a tile, a row a block) 0.1-0.5x torch.topk; w12 embedding bag (a row load a sample, a block a bag)
# 0.5-1.5x F.embedding_bag; w08 SpMV (a block a row, x gathered one scalar at a time) 0.05-0.3x cuSPARSE; w09
# W8A8 4096^3 (64 x 64 x 64 tiles of mma.sync m16n8k32) 0.2-0.6x torch._int_mm + the scaling; w07 unique
# (three launches, two host copies of the counts) 0.1-0.5x unique_consecutive; w05's histogram (one block for
# the chunk, by design a running total) 0.01-0.05x bincount. ~100-190 s, mostly compiles.
# usage (on the device, from the checkout's root): bash benchmarks/huser28_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser28
nvidia-smi -L
echo "=== each program on the GPU: against the interpreter, then its NumPy check"
timeout 120 python3 benchmarks/user_programs_gpu.py test_user_programs27 w
echo "=== the kernels with a PyTorch equivalent, timed against it"
timeout 75 python3 benchmarks/huser28_bench.py 2>&1 | tail -16
