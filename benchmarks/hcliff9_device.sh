#!/usr/bin/env bash
# hcliff9 (2026-12-07): fewer warps for kernels whose tiles are small (`lift.fewer_warps`, `TILEC_FEWER_WARPS=0`
# off): a kernel that names no warps and whose largest built tile gives each thread at most 4 elements at half
# the warps runs 1 warp (<= 128 elements) or 2 (<= 256) instead of 4 replicas of one. Old (`TILEC_FEWER_WARPS=0`)
# and new arms in separate processes, each against PyTorch in the same process; ~100-150 s on an H100.
#
#     bash benchmarks/hcliff9_device.sh
#
# Lines are huser17_paths.py's / huser18_paths.py's (ours ms, torch ms, ratio = torch / ours; err), prefixed by
# arm. Expected, and why (RESULTS.md 'hcliff9'):
# - maxpool (tests/user a05, 512 planes of 112 x 112, WO = 64: 28,672 CTAs of 64 outputs; call 32: 0.0825 ms,
#   0.37x torch). Old: 4 warps each computing the whole [64] row (sm_90a SASS: 312 instructions, 6 barriers a
#   window row; ~2,000 warp-instructions a CTA, ~57 M in all: ~60 us of issue at ~0.95 T warp-instructions/s, the
#   measured 82 us with the loads' latency). New: 1 warp, 296 SASS instructions, 4 barriers (in-warp), ~480
#   warp-instructions a CTA (~14 M: ~15 us of issue); 32 CTAs an SM (the block limit) instead of 16, so 6.8
#   waves of ~3 us (3 dependent row loads) instead of 13.6; DRAM ~38 MB = 13 us at 3 TB/s. Expect new
#   **0.020-0.035 ms, ~0.9-1.5x torch** (old ~0.08 ms, 0.37x), err 0; new/old 0.25-0.45.
# - resize (tests/user t09, 512 channels 100 -> 120, `resize_row::<128>`, 61,440 CTAs; call 32: 0.120 ms, 1.79x
#   F.interpolate): its [1, 128] row was computed by each of 4 warps (hcliff8's note); now 1 warp. Expect new
#   0.04-0.08 ms (~2.5-5x F.interpolate), old ~0.12 ms.
# - `new2` = `new` again (drift between the first and last arms).
# - gpu tests: a05 at WO = 64 on the card (test_fewer_warps.py's gpu case) and every tests/user program on the card
#   against the interpreter (test_user_gpu.py, ~260 programs; most unhinted small kernels now run at 1 or 2 warps):
#   expect all passed.
set -u
. "$(dirname "$0")/arms.sh"
: "${ARM_TIMEOUT:=40}"
run() { local a=$1 script=$2 case=$3 reps=$4; shift 4  # arm, script, case (--only), reps, env...
  arm $a "$@" -- python3 "benchmarks/$script" --only "$case" --reps "$reps"; }
run new huser17_paths.py maxpool 30
run old huser17_paths.py maxpool 30 TILEC_FEWER_WARPS=0
run new2 huser17_paths.py maxpool 30
run new huser18_paths.py resize 20
run old huser18_paths.py resize 20 TILEC_FEWER_WARPS=0
TEST_TIMEOUT=75 TESTS_TAIL=2 gpu_tests -n 14 tests/backend/test_fewer_warps.py tests/user/test_user_gpu.py
