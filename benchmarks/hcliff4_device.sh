#!/usr/bin/env bash
# hcliff4 (2026-12-06): three of huser17's natural programs against PyTorch on the GPU, each with hcliff4's rule
# on (the default) and off (as before), one process an arm, each cut at 28 s; one step, <= 115 s on an H100.
#
#     bash benchmarks/hcliff4_device.sh              # dq new/old, maxpool+blur new/old
#     STEP=more bash benchmarks/hcliff4_device.sh    # dq's variants: 3 stages, 128 x 64 blocks (8 warps)
#
# One line a case and arm (huser17_paths.py's: ours, torch's, ratio = torch / ours; maxpool's 'err 0.0' = the
# same values and indices as torch) and a 'dq share' line: ours against 3/5 of SDPA's backward (its dQ
# products' share; hcliff4's goal >= 0.5). Expected, and why:
# - dq (a01: GQA causal attention backward's dQ loop, 3 products a key block, H = 32 on 8 KV heads, S = 4096,
#   D = 128, f16, 64 x 64): new = the products pipeline (`passes/pipeline_products.py`: K/V in a cp.async ring,
#   Q/dO copied once to shared memory, ldmatrix + mma.sync, every value in registers; ptxas 249 registers, no
#   spills, 96 KB: 2 CTAs an SM) vs old (TILEC_PRODUCTS_PIPELINE=0: 0.07x, 11.6 ms in calls 22/23). Call 25
#   (H100, this script's first version): new 0.706 ms, 292 TFLOP/s, 1.16x SDPA bwd, dq share 0.70x; 3 stages
#   0.816 ms, 128 x 64 0.772 ms; old 11.63 ms: expect the same.
# - maxpool (a05, 512 planes of 112 x 112): new = the window's one-element shift as a shift (`codegen/
#   shift_dot.py`: no [1, 64] x [64, 64] FMA product a row, whose matrix went through shared memory) vs old
#   (TILEC_SHIFT_DOT=0, 0.06x in call 23): the product was ~3/4 of the kernel's instructions: expect ~0.1-0.2x.
# - blur rows/cols (a03, 4096^2 f32, [32, 64] tiles): new = the three band products a tile as 5-tap stencils
#   (5 FMAs a band an output, the FMA loop's values bit for bit) vs old (3 x 64 FMAs an output; rows 0.41x,
#   cols 3.91x in call 23): expect rows >= 1x, cols above 4x; the loads of the three neighbour tiles and the
#   shared-memory staging of each then bound them.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# huser17_paths.py's cases in one process (its `main` a case at a time; DQ_TILE set first where given), each
# dq line followed by its 'dq share' (3/5 of SDPA's backward: ratio * 0.6)
run() {  # arm, "case case ..", reps, dq tile ("" = the script's 64x64), env...
  local arm=$1 cases=$2 reps=$3 tile=$4; shift 4
  env "$@" timeout 28 python3 -c "
import sys
sys.path.insert(0, 'benchmarks')
import huser17_paths as h
if '$tile':
    h.DQ_TILE = tuple(int(x) for x in '$tile'.split('x'))
for c in '$cases'.split():
    h.main(['--only', c, '--reps', '$reps'])
" 2>&1 | grep -v '^#' | awk '{ print; if ($1 == "dq" && $0 ~ / ratio /) { for (i = 1; i < NF; i++) if ($i == "ratio")
    printf "dq share   ours vs 3/5 of sdpa bwd: ratio %.2f\n", $(i + 1) * 0.6 } }' | sed "s/^/$arm /"
}
if [ "${STEP:-}" = more ]; then
  run new3 dq 10 "" TILEC_PRODUCTS_STAGES=3
  run new128 dq 10 128x64
  exit 0
fi
run new dq 10 "" TILEC_PRODUCTS_PIPELINE=1
run old dq 3 "" TILEC_PRODUCTS_PIPELINE=0
run new "maxpool blur" 20 "" TILEC_SHIFT_DOT=1
run old "maxpool blur" 20 "" TILEC_SHIFT_DOT=0
