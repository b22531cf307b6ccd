#!/usr/bin/env bash
# hcliff3 (2026-12-06): tests/user a05's max-pool (0.04x of F.max_pool2d in call 22) and a03's blur (rows 0.29x,
# cols 3.40x of conv2d) with the two backend rules on (the default) and off (as before: TILEC_REMAKE_FREE=0
# TILEC_NESTED_CARRY=0), one process an arm, in turns, on the same card. One step, ~40-60 s on an H100 (each process cut at 29 s: <= 116 s in all).
#
#     bash benchmarks/hcliff3_device.sh
#
# One line a case and arm (huser17_paths.py's: ours, torch's, ratio = torch / ours, same = exact/allclose).
# Expected, and why: the rules take the shared-memory round trips (barriers) out of the kernels' bodies, nothing
# else (same paths: scalar FMAs, 4 warps; the same values, llsim-checked):
# - maxpool: 42 -> 16 barriers in the kernel (the running max and index over the 3 x 3 window were converted
#   into the compare's layout and back at each of the 9 steps). 28,672 blocks of 3 row loads each are latency
#   bound, so the time follows the barriers and round trips on the path: expect ~2x faster (0.04x -> ~0.08x);
#   the rest (a [1, 64] x [64, 64] f32 product a row, 128 threads for 64 outputs) stays.
# - blur rows: 51 -> 15 barriers, 20 conversions of [64, 64] band tiles -> 0 (the same for cols: 57 -> 21).
#   Expect rows ~0.6-1.0x (was 0.29x) and cols above 3.40x; the FMA products (3 x 64 multiply-adds an output)
#   then bound both.
set -u
. "$(dirname "$0")/arms.sh"
for case in maxpool blur; do
  for a in new old; do
    ARM_TIMEOUT=29 arm $a $([ $a = old ] && echo TILEC_REMAKE_FREE=0 TILEC_NESTED_CARRY=0) -- \
      python3 benchmarks/huser17_paths.py --only "$case" --reps 20
  done
done
