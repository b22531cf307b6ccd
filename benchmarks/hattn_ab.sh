#!/usr/bin/env bash
# hattn (2026-12-06 09:49 session): std::attention at BM = 192 (three consumer warpgroups) with the producer
# warp at 24 registers (TILEC_ATTN_PRODUCER3=1, the default now) against 40 (=0, as before), in two processes
# of benchmarks/cliffs.py. One step, ~60-100 s on an H100 warm.
#
#     bash benchmarks/hattn_ab.sh
#
# Expected and why: the consumers get 160 registers a thread instead of 152 (`pipeline.role_registers`). ptxas
# 13 for sm_90a: at D = 128 the kernel's spill stores 1,572 B -> 136 B and the key loop's STL/LDL 445 -> 45
# (the C7512 warning, wgmma serialised for want of registers, goes away): 192x128 D=128 well above its 0.33x
# SDPA (call 8), still below 128x128's 0.99x (S, P and O need ~200 registers). At D = 64 the key loop loses
# its 8 spills and C7512, but the tile's code outside it spills more (476 -> 948 B): expected within a few %
# of its 0.79x either way; if it is slower, only D = 128 should keep the 24.
set -e
cd "$(dirname "$0")/.."
for v in 0 1; do
    TILEC_ATTN_PRODUCER3=$v python benchmarks/cliffs.py --only 192x128 | sed "s/^/PRODUCER3=$v  /"
done
