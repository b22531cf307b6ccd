#!/usr/bin/env bash
# huser10 (2026-12-05, no device time of its own): benchmarks/wgmma_diff.py's random tensor-core programs on a
# real GPU against the interpreter: the Hopper GEMM pipeline (TMA or the register-copy producer, MN-/K-major
# descriptors, 64/128 x 8..256 tiles, edges in M, N and K, element-wise/cast epilogues, hints) and the attention
# pipeline (S = Q K^T, a random body, the register-A second product, carried row statistics, rescales, 3-D
# heads), with near-misses on mma.sync. Integer inputs, powers of two: all but the softmax rows must agree bit
# for bit. On the CPU they agree with llsim at sm_90a (and sm_80 for a quarter) on every program tried
# (RESULTS.md, "huser10"); a card adds what llsim does not model: the real wgmma, TMA and swizzle hardware,
# ptxas, the mbarrier ring's timing (llsim runs one thread at a time), real pointers' alignment.
# From the repo root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller; ~100 s on a warm
# machine: N (8) processes side by side, each starting programs for BUDGET (80) s.
# usage: bash benchmarks/huser10_device.sh      (ARCH=sm_90a runs the same through llsim, for a dry run)
# Prints one line a disagreement or error and one summary line a process; writes $OUT/huser10.tgz (the programs).
set -uo pipefail
. benchmarks/device_env.sh huser10
. benchmarks/diff_search_device.sh
diff_search huser10 benchmarks/wgmma_diff.py 20000
