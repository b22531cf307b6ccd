#!/usr/bin/env bash
# (hpromote, 2026-12-07: the ring is the default since call 32 ran this script: `ring` 0.277 ms err 0 against
# `new` 2.89 ms. `ring` keeps TILEC_INT8_RING=1; `smem` is TILEC_INT8_RING=0, the old default (`new` below).)
# (lead, landing L3: the int8 ring is opt-in, `TILEC_INT8_RING=1`, until this script has run: the `ring` arm is it;
# `new` is the default, int8 mma through `mma_int8_tensor_core`, call 27's 2.85 ms; `fma` the scalar FMAs, 4.88 ms.
# huser18_paths' case `w8a8` sets TILEC_INT8_MMA=0 and `w8a8 int8mma` 1: the arms before this edit timed those.)
# hcliff6 (2026-12-06): user programs far from PyTorch on the GPU, each with hcliff6's change on (the default) and
# off, one process an arm, each cut at 30 s; one step, ~120 s on an H100 (most of it compiling; 240 s if every
# process ran to its cut).
#
#     bash benchmarks/hcliff6_device.sh
#
# 'gpu tests': the int8 ring's t17 and test_int8_mma's j11 on the card, exactly as the interpreter (2 passed).
# Lines are huser17_paths.py's / huser18_paths.py's (ours, torch's, ratio = torch / ours; err), prefixed by the arm.
# Expected, and why:
# - w8a8 (tests/user t17 at 4096^3, 64 x 64 x 64 tiles, against torch._int_mm + the same epilogue; call 27:
#   FMAs 4.88 ms 0.27x, TILEC_INT8_MMA=1 through shared memory 2.85 ms 0.47x):
#   `new w8a8 int8mma` = int8 GEMM loops on sm_80's cp.async ring (the default now): 1-byte rings, ldmatrix
#   (.trans + prmt for the row-major B), mma.sync.m16n8k32 on an accumulator in registers across the loop; ptxas
#   128 registers, 0 spills, 16 IMMA.16832 and 8 LDSM a warp an iteration. Expect 0.6-1.4 ms, >= 0.8x (goal),
#   err 0 or a bf16 rounding (~4e-3). `new w8a8` = TILEC_INT8_MMA=0 (the FMA loop: ~4.9 ms as call 27).
#   `old w8a8 int8mma` = TILEC_SM80_FALLBACK=0 (no ring on sm_90a: call 27's int8 path, ~2.85 ms).
# - blur rows / cols (tests/user a03, 4096^2 f32, [32, 64] tiles, against F.conv2d [1,5] / [5,1]; call 27: cols
#   0.325 ms 2.66x with hcliff4's stencils, 0.220 ms 3.91x with the FMA loop before them):
#   `new` = the stencils with hcliff6's column counts (a lane a column: the warp-a-column count read 32 rows
#   256 B apart, one bank, 32-way conflicts: ~3/4 of the kernel's time by a count of shared wavefronts) and a
#   warp-uniform fast path where no line of the warp's outputs holds an infinity or a NaN (no count of the
#   band's own non-finite values), and the band matrices' own ops (their conversions' barriers) not emitted;
#   ptxas cols 164 -> 72 registers, rows 95 -> 72, 0 spills. Expect cols 0.12-0.20 ms (>= 3.91x), rows at or
#   below hcliff4's (>= 1x).
#   `old` = TILEC_SHIFT_DOT=0 (the FMA loop over the band, call 27's 3.91x cols baseline, same run).
# - maxpool (a05, 512 planes of 112 x 112; call 27: 0.106 ms, 0.28x): the same shift_dot change (its shift on the
#   right, one diagonal; 17 -> 11 barriers a window row): expect 0.07-0.1 ms. `old`: TILEC_SHIFT_DOT=0.
# - resize (huser18 t09; call 27: 1.009 ms, 0.21x): unchanged by hcliff6 (its one-hot weight-matrix product is
#   the missing gather's cost), timed as the control: expect ~1.0 ms.
set -u
. "$(dirname "$0")/arms.sh"
: "${ARM_TIMEOUT:=30}"
run() { local a=$1 script=$2 case=$3 reps=$4; shift 4  # arm, script, case (--only), reps, env...
  arm $a "$@" -- python3 "benchmarks/$script" --only "$case" --reps "$reps"; }
# first the exactness of the int8 ring on the card (t17 against the interpreter, `-m gpu`), then the timings
TEST_TIMEOUT=30 TESTS_TAIL=2 gpu_tests tests/backend/test_int8_ring.py tests/backend/test_int8_mma.py
run ring huser18_paths.py "w8a8 int8mma" 10 TILEC_INT8_RING=1
run smem huser18_paths.py "w8a8 int8mma" 10 TILEC_INT8_RING=0
run fma huser18_paths.py w8a8 5
run new huser17_paths.py blur 20
run old huser17_paths.py blur 20 TILEC_SHIFT_DOT=0
run new huser17_paths.py maxpool 20
run old huser17_paths.py maxpool 20 TILEC_SHIFT_DOT=0
run ctl huser18_paths.py resize 10
