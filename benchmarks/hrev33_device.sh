#!/usr/bin/env bash
# hrev33 (2026-12-07, no device time of its own): benchmarks/reduce_diff.py's random reduction kernels (sum / max /
# min / prod / argmax / argmin / a mean, axes 0-2 and all, keepdim reshapes, softmax rows, loops over tiles, mma
# and Slice-layout inputs, ragged edges, 1-8 warps; small-integer inputs, so all but the mean and the softmax must
# agree bit for bit) on a real GPU against the interpreter, with NaNs among the floats (`--nan`). No timing: a
# correctness check, so no ratio against PyTorch applies.
# Expected before it runs: **0 problems** in ~1,000-1,500 programs (8 processes x ~80 s). On the CPU, llsim at
# sm_90a and sm_80 agreed on every case tried (RESULTS.md "hrev33": 3,000+ cases, default and forced paths, 0
# disagreements). A card adds ptxas's and the hardware's view: the shuffles' and barriers' real timing (a
# missing barrier llsim's race check should have seen), ex2.approx's and division's real rounding (within the
# 32-ulp tolerance of the softmax). Any DISAGREE line is a bug to minimise (the program is in the .tgz).
# From the repo root after the lead's preamble; ~120 s warm.
# usage: bash benchmarks/hrev33_device.sh      (ARCH=sm_90a N=1 BUDGET=20: the same through llsim, a dry run)
set -uo pipefail
. benchmarks/device_env.sh hrev33
. benchmarks/diff_search_device.sh
export REDUCE_DIFF_NAN=1  # (`--nan`: diff_search passes no options of its own)
diff_search hrev33 benchmarks/reduce_diff.py 50000
