#!/usr/bin/env bash
# hcliff4 (2026-12-06): tests/user a01's GQA attention backward dQ loop (3 products a key block: S = Q K^T,
# dP = dO V^T, dQ += dS K; H = 32 on 8 KV heads, S = 4096, D = 128, causal, f16) on the new products pipeline
# (`passes/pipeline_products.py`: K/V tiles in a cp.async ring, Q/dO copied once to shared memory, ldmatrix +
# mma.sync, every value of the body in the mma's C-fragment layout in registers), against the path before it
# (TILEC_PRODUCTS_PIPELINE=0: each product staged through shared memory between barriers, 255 registers and
# ~700 B of spills a thread) and PyTorch's SDPA backward (flash/cuDNN: dQ, dK and dV). One process an arm, each
# cut at 28 s; one step, <= 115 s on an H100.
#
#     bash benchmarks/hcliff4_device.sh
#
# One line a case and arm (huser17_paths.py's: ours, torch's, ratio = torch / ours) and a 'dq share' line: ours
# against 3/5 of SDPA's backward (its dQ products' share; hcliff4's goal >= 0.5).
# Expected, and why (ptxas sm_90a: 64 x 64, 4 warps, 249 registers, no spills, 96 KB shared: 2 CTAs an SM):
# - old: 0.07x (call 22/23: 11.6 ms, 17.8 TFLOP/s).
# - new 64x64 (2 stages, the default): the loop's 192 mma.sync a warp an iteration fed by ldmatrix from shared
#   memory, 8 warps an SM. FA2's dQ-like loops reach ~150-250 TFLOP/s with mma.sync on an H100: expect ~1.2-2.5
#   ms, ratio ~0.35-0.7 (dq share ~0.2-0.4x); not the 0.5x goal yet if the barrier a block and the exposed
#   ldmatrix latency (no fragment prefetch) dominate.
# - new 64x64 stages 3 (TILEC_PRODUCTS_STAGES=3: 128 KB, 1 CTA an SM): likely slower (4 warps an SM).
# - new 128x64 (8 warps, 16 rows a warp, 128 KB with Q/dO: 1 CTA an SM): K/V read once for 128 rows.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
run() {  # arm, env...
  local arm=$1; shift
  env "$@" timeout 28 python3 benchmarks/huser17_paths.py --only dq --reps 10 2>&1 | grep -v '^#' | sed "s/^/$arm /"
}
run new TILEC_PRODUCTS_PIPELINE=1
run new3 TILEC_PRODUCTS_STAGES=3
run new128 HUSER17_DQ_TILE=128x64
env TILEC_PRODUCTS_PIPELINE=0 timeout 28 python3 benchmarks/huser17_paths.py --only dq --reps 3 2>&1 | grep -v '^#' | sed "s/^/old /"
