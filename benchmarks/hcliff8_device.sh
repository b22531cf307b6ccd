#!/usr/bin/env bash
# hcliff8 (2026-12-07): t09's bilinear resize with `gather_dot` (the default) and without (TILEC_GATHER_DOT=0, the
# FMA loop over the [128, 128] weight matrix), each against F.interpolate in the same process; one process an arm,
# each cut at 40 s; ~60-100 s on an H100 (most of it compiling).
#
#     bash benchmarks/hcliff8_device.sh
#
# 'gpu tests': tests/backend/test_gather_dot.py's `gpu` case (six one-hot products: t09's weighted pair, a nested
# `where` on the left, a transpose, i64 indices on one line, y10's neighbour sum; inf/NaN/-0.0 rows; on the card ==
# the interpreter): expect "1 passed".
# Lines are huser18_paths.py's (ours ms, torch ms, ratio = torch / ours; err), prefixed by arm.
# Expected, and why (tests/user t09 via huser18_paths: 512 channels of 100 x 100 -> 120 x 120, resize_row::<128>,
# 61,440 CTAs of 4 warps; call 27 (H100, main 103ded4d): 1.009 ms, 0.21x F.interpolate, torch ~0.21 ms):
# - `old` = TILEC_GATHER_DOT=0: the [128, 128] matrix built in registers (283 setp, 271 selp of 1,000 PTX
#   instructions), staged in 64 KB of shared memory, 128 FMAs an output; 13 barriers; ptxas 255 registers (8 B
#   stack). Expect ~1.0 ms, 0.21x (call 27).
# - `new`: each output's two source columns sorted, read from the row staged once in shared memory (512 B), 2 FMAs;
#   515 PTX instructions (~300 on the path that runs), 1 barrier, 1 st.shared, ptxas 32 registers (sm_90a; 31 at
#   sm_80): 16 CTAs an SM where the old kernel fit 2. The kernel is then its two 512 B row loads (L2) and a 480 B
#   store a CTA, ~50 MB of DRAM traffic, 29 waves of short CTAs: expect 0.03-0.10 ms, ~2-7x F.interpolate, err
#   <= 1e-6 (the old arm's values bit for bit).
# - `new2` = `new` again (drift between the first and last arms).
set -u
. "$(dirname "$0")/arms.sh"
: "${ARM_TIMEOUT:=40}"
run() { local a=$1 script=$2 case=$3 reps=$4; shift 4  # arm, script, case (--only), reps, env...
  arm $a "$@" -- python3 "benchmarks/$script" --only "$case" --reps "$reps"; }
TEST_TIMEOUT=40 gpu_tests tests/backend/test_gather_dot.py
run new huser18_paths.py resize 20
run old huser18_paths.py resize 10 TILEC_GATHER_DOT=0
run new2 huser18_paths.py resize 20
