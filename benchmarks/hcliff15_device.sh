#!/usr/bin/env bash
# hcliff15 (2026-12-07; no device time of its own): K loops whose `mma` operand is dequantised from loaded tiles
# (W4A16 / W8A16), their raw loads (u8/i8 weights, scale and zero rows, A tiles) through per-thread cp.async rings
# 3 steps ahead (`passes/stream_mma.py`), against the same kernels with `TILEC_MMA_RING=0` (before: ldmatrix +
# mma.sync with no pipeline, plain ld.global each step), torch's f16 dense GEMM of the dequantised weight, and a
# dequantise-then-matmul torch baseline. benchmarks/hcliff15_bench.py (correctness "same" first for each row).
# Call 42b (H100, before): n06 W4A16 tile 0.217 ms, torch f16 dense 0.022 ms (0.10x).
# Expected (written before any run; H100): n06 rings (4 stages) "same", tile 0.035-0.08 ms, dense/Tile 0.3-0.6
# (hcliff14 wrote 0.4-0.8; the ring hides the global round trip of each of the 128 K steps, but each step still
# stages A and B through shared memory with ~8 CTA barriers: ~0.3-0.6 us a step), dequant+mm/Tile 0.8-2;
# stages = 6 within 10 % of 4; stages = 3 within 15 % of 4; stages = 2 slower than 3 (one step in flight); conversions kept (RELAY=0) 10-30 %
# slower than the rings' row (4 more CTA barriers a step); no ring 0.18-0.25 ms (call 42b's);
# W8A16 32 x 32 rings 0.03-0.07 ms (one product a step), 64 x 64 0.05-0.12 ms (64 blocks on 132 SMs), no ring
# 0.15-0.25 ms. ~40-90 s, mostly compiles. usage (on the device, from the checkout's root):
#   bash benchmarks/hcliff15_device.sh
set -uo pipefail
. benchmarks/device_env.sh hcliff15
nvidia-smi -L
TILEC_EXPLAIN=1 timeout 150 python3 benchmarks/hcliff15_bench.py 2> "$D/explain.txt" | tail -16
grep -E "w4a16|w8a16" "$D/explain.txt" | sort -u | head -12
grep -v "^tilec: \|^  note: \|^  help: " "$D/explain.txt" | tail -8  # anything else on stderr (a traceback)
