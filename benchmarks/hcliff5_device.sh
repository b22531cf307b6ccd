#!/usr/bin/env bash
# hcliff5 (2026-12-06): FlashAttention-2's backward as a user writes it (tests/user a01's dQ pass, a13's dK/dV pass)
# through the Python API against torch SDPA's backward on the same shapes (H = 32 on 8 KV heads, S = 4096, D = 128,
# f16, causal), one process an arm, each cut at 40 s (the first, two cases, at 70 s); one step, <= 230 s on an H100, ~120 s
# when every arm compiles in a few seconds.
#
#     bash benchmarks/hcliff5_device.sh
#
# Lines are hcliff5_paths.py's (ours, SDPA's whole backward, ratio = SDPA / ours, err against SDPA's gradients; a
# 'share' line against the part of SDPA's backward that case's products are: dq 3/5, dkdv 4/5; a 'pair' line
# dq + dkdv against the whole). Expected, and why:
# - new dq (64 x 64): the products pipeline as in call 25: 0.70-0.72 ms, share ~0.70x.
# - new dkdv (64 x 64): the products pipeline with the warps splitting the columns (hcliff5: 4 row blocks x 2
#   column halves, 8 warps; P^T and dS^T through shared memory, one barrier an iteration more; ptxas 240 registers,
#   0 spills, 112 KB: one CTA an SM). 4 products a (key, query) block pair, 275 GFLOP: at dq's ~290 TFLOP/s,
#   ~0.95 ms, share ~0.55-0.7x; below 200 TFLOP/s (> 1.4 ms) would say the extra barrier or one CTA an SM costs.
# - rows dkdv: TILEC_PRODUCTS_COLS=1, the layout before (4 warps, rows only: 255 registers, ~350 B of spills a
#   thread, 96 KB, two CTAs an SM): expect new dkdv faster, by 1.2-2x if the spills were the cost.
# (128 x 64 dK/dV, `--tile dkdv=128x64`: 255 registers, 88 B of spills on mma.sync; not in this step.)
# - wgmma dq (TILEC_PRODUCTS_WGMMA=1, opt-in: hcliff5's first step of dQ on Hopper's warpgroup MMA): S and dP as
#   wgmma from shared memory issued together, dQ += dS K as wgmma with dS in registers, every tile in wgmma's
#   128-byte swizzle by cp.async (ptxas 168 registers at 64 x 64, 4 warps, 96 KB: 2 CTAs an SM; 206 at 128 x 64).
#   Expect 64 x 64 faster than mma.sync's 0.70 ms by 10-40 % (0.5-0.65 ms, share 0.75-1.0x): the products were
#   ~60 % of the kernel's issue slots; the per-product waits (no overlap of dQ's product with the next S) and the
#   cp.async copies (no TMA) are what is left. 128 x 64: two warpgroups, the same or better. Slower than the
#   mma.sync line would mean the waits serialise the warpgroup more than wgmma saves: then keep it off.
# - wgmma dkdv (64 x 64, the same switch): two warpgroups, each a column half of every product (198 registers,
#   0 spills, 112 KB): expect faster than new dkdv by the same 10-40 %.
set -u
. "$(dirname "$0")/arms.sh"
run() { local a=$1 cut=$2 args=$3; shift 3  # arm, seconds, args for hcliff5_paths.py, env...
  ARM_TIMEOUT=$cut arm $a "$@" -- python3 benchmarks/hcliff5_paths.py $args; }
run new 70 "--reps 10"
run rows 40 "--only dkdv --reps 5" TILEC_PRODUCTS_COLS=1
run wgmma 40 "--only dq --reps 10" TILEC_PRODUCTS_WGMMA=1
run wgmma 40 "--only dq --reps 10 --tile dq=128x64" TILEC_PRODUCTS_WGMMA=1
run wgmma 40 "--only dkdv --reps 10" TILEC_PRODUCTS_WGMMA=1
