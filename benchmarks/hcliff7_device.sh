#!/usr/bin/env bash
# hcliff7 (2026-12-06): a05's max-pool with hcliff7's in-warp shift and sibling conversion on (the default) and
# off, and t09's bilinear resize as it is, each against torch in the same process; one process an arm, each cut at
# 30 s; ~70-110 s on an H100 (most of it compiling).
#
#     bash benchmarks/hcliff7_device.sh
#
# 'gpu tests': tests/backend/test_shift_dot.py's `gpu` case (a [1, 16] row shifted both ways and under a left band,
# inf/NaN/-0.0 rows, on the card == the interpreter): expect "1 passed".
# Lines are huser17_paths.py's / huser18_paths.py's (ours ms, torch ms, ratio = torch / ours; err), prefixed by arm.
# Expected, and why:
# - maxpool (tests/user a05, 512 planes of 112 x 112, WO = 64, against F.max_pool2d(3, 2, 1, return_indices=True);
#   call 27: 0.106 ms, 0.28x with 17 barriers a window row; hcliff6 took it to 11 (not yet timed)):
#   `new` = hcliff7's two changes: the shift of `odd` by shfl.up inside the warp with the row's non-finite count
#   from its lanes, and `odd`'s second conversion reading the first's registers: 6 barriers a window row, 3
#   shared stores and 3 loads (sm_90a PTX 427 -> 406 instructions, ptxas 48 -> 45 registers). Expect 0.05-0.08 ms
#   (~0.35-0.55x torch), err 0.
#   `warp0` = TILEC_SHIFT_DOT_WARP=0 (the sibling read alone: 9 barriers).
#   `tog` = TILEC_CONVERT_TOGETHER=1 (opt-in: `even` staged with `odd`'s first conversion, 4 barriers a window row,
#   401 PTX instructions): expect 0.9-0.97x of `new`'s time. It changes attn_decode_ring_early's PTX (4 tuned
#   configurations), so it stays off until timed there too.
#   `old` = TILEC_SHIFT_DOT_WARP=0 TILEC_SIBLING_CONVERT=0 (hcliff6's form, 11 barriers): expect 0.07-0.10 ms;
#   new/old ~0.65-0.85 (5 of 11 barriers and their shared round trips gone; 3 layout conversions stay).
#   `new2` = `new` again (drift between the first and last arms of the run).
# - resize (tests/user t09 via huser18_paths: 512 channels 100 -> 120, [1, 128] x [128, 128] weight product; call
#   27: 1.009 ms, 0.21x): unchanged (control; its time is the weight matrix: 128 selects an element a thread, 64 KB
#   of shared stores a CTA, 128 FMAs an output over shared memory, 13 barriers; RESULTS.md hcliff7): expect ~1.0 ms.
set -u
. "$(dirname "$0")/arms.sh"
: "${ARM_TIMEOUT:=30}"
run() { local a=$1 script=$2 case=$3 reps=$4; shift 4  # arm, script, case (--only), reps, env...
  arm $a "$@" -- python3 "benchmarks/$script" --only "$case" --reps "$reps"; }
TEST_TIMEOUT=30 gpu_tests tests/backend/test_shift_dot.py
run new huser17_paths.py maxpool 20
run old huser17_paths.py maxpool 20 TILEC_SHIFT_DOT_WARP=0 TILEC_SIBLING_CONVERT=0
run warp0 huser17_paths.py maxpool 20 TILEC_SHIFT_DOT_WARP=0
run tog huser17_paths.py maxpool 20 TILEC_CONVERT_TOGETHER=1
run new2 huser17_paths.py maxpool 20
run ctl huser18_paths.py resize 10
