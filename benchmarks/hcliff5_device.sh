#!/usr/bin/env bash
# hcliff5 (2026-12-06): FlashAttention-2's backward as a user writes it (tests/user a01's dQ pass, a13's dK/dV pass)
# through the Python API against torch SDPA's backward on the same shapes (H = 32 on 8 KV heads, S = 4096, D = 128,
# f16, causal), one process an arm, each cut at 50 s; one step, <= 200 s on an H100.
#
#     bash benchmarks/hcliff5_device.sh
#
# Lines are hcliff5_paths.py's (ours, SDPA's whole backward, ratio = SDPA / ours, err against SDPA's gradients; a
# 'share' line against the part of SDPA's backward that case's products are: dq 3/5, dkdv 4/5; a 'pair' line
# dq + dkdv against the whole). Expected, and why:
# - new dq (64 x 64): the products pipeline as in call 25: 0.70-0.72 ms, share ~0.70x.
# - new dkdv (64 x 64): the products pipeline with the warps splitting the columns (hcliff5: 4 row blocks x 2
#   column halves, 8 warps; P^T and dS^T through shared memory, one barrier an iteration more; ptxas 228 registers,
#   0 spills, 112 KB: one CTA an SM). 4 products a (key, query) block pair, 275 GFLOP: at dq's ~290 TFLOP/s,
#   ~0.95 ms, share ~0.55-0.7x; below 200 TFLOP/s (> 1.4 ms) would say the extra barrier or one CTA an SM costs.
# - rows dkdv: TILEC_PRODUCTS_COLS=1, the layout before (4 warps, rows only: 255 registers, ~350 B of spills a
#   thread, 96 KB, two CTAs an SM): expect new dkdv faster, by 1.2-2x if the spills were the cost.
# - new dkdv 128 x 64 (BM = 128 queries an iteration: half the iterations and barriers; 8 warps, 252 registers,
#   0 spills, 192 KB): expect within +-15 % of 64 x 64.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
run() {  # arm, args for hcliff5_paths.py, env...
  local arm=$1 args=$2; shift 2
  env "$@" timeout 50 python3 benchmarks/hcliff5_paths.py $args 2>&1 | grep -v '^#' | sed "s/^/$arm /"
}
run new "--reps 10"
run rows "--only dkdv --reps 5" TILEC_PRODUCTS_COLS=1
run new "--only dkdv --reps 10 --tile dkdv=128x64"
