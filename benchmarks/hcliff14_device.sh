#!/usr/bin/env bash
# hcliff14 (2026-12-07; no device time of its own): round 25's GroupNorm forward (n03, [1024, 8, 4096] f32, a
# block a (sample, group), 16 warps) after its [1, C, P] load reshaped to [C, P] keeps the load's blocked layout
# for `t.sum(1)` (layout_assign: `drop_dim`), timed against F.group_norm by huser26_bench.py (all its rows:
# correctness "same" checked first for each). Call 42 (H100, before): n03 tile 4.313 ms, torch 0.254 ms, 0.06x.
# Expected (written before any run): n03 "same", tile 0.2-0.4 ms (the 256 MB in and out at one block an SM:
# 128 registers x 512 threads), torch/tile 0.6-1.3; the other rows as call 42 (n06 W4A16 ~0.10x unchanged).
# ~60-100 s, mostly compiles. usage (on the device, from the checkout's root): bash benchmarks/hcliff14_device.sh
set -uo pipefail
. benchmarks/device_env.sh hcliff14
nvidia-smi -L
timeout 150 python3 benchmarks/huser26_bench.py 2>&1 | tail -20
