#!/usr/bin/env bash
# huser9 (2026-12-05, no device time of its own): benchmarks/layout_diff.py's short random kernels (odd, prime
# and power-of-two tile extents mixed in one body; integer inputs, so all but the approximate math must agree
# bit for bit) on a real GPU against the interpreter. On the CPU they agree with the NVPTX simulator (llsim,
# sm_90a and sm_80) on every program tried (RESULTS.md, "huser9"); a card adds what no simulator sees: ptxas
# and the hardware, the runtime's packing of a launch, real alignment. Seeds 12000..: device call 2 (H100) ran
# 1,000 with 0 disagreements; since 19:00 half the tensor parameters have static widths (vector layouts), and
# seed 12156 is then round 9's mma-accumulator bug (fixed in gpu/passes/convert): expected 0 again.
# From the repo root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller; ~100 s on a warm
# machine: N (8) processes side by side, each starting programs for BUDGET (80) s.
# usage: bash benchmarks/huser9_device.sh      (ARCH=sm_90a runs the same through llsim, for a dry run)
# Prints one line a disagreement or error and one summary line a process; writes $OUT/huser9.tgz (the programs).
set -uo pipefail
. benchmarks/device_env.sh huser9
. benchmarks/diff_search_device.sh
diff_search huser9 benchmarks/layout_diff.py 12000
