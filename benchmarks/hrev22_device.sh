#!/usr/bin/env bash
# hrev22 (2026-12-07, round 22; no device time of its own): GEMM walks and block order with `last_block`,
# `arrive_wait` and clusters on a real GPU (H100/H200: 132 SMs, so the f32 GEMMs of 2 tiles get the split-K
# variant where the kernel may walk). Each case in its own process under a 60 s timeout (before the fixes
# `aw_grouped` and `split_aw` could hang). Expected (written before any run): five lines, each `ok`.
# ~40-60 s warm. usage: bash benchmarks/hrev22_device.sh
set -uo pipefail
. benchmarks/device_env.sh hrev22
for c in aw_grouped split_group_first split_aw cluster_gather_few cluster_12_few; do
    timeout 60 python3 benchmarks/hrev22_device.py "$c" 2>&1 | tail -1 || echo "$c TIMEOUT (a hang)"
done
