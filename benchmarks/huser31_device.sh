#!/usr/bin/env bash
# huser31 (2026-12-07, round 30; no device time of its own): round 30's user programs (tests/user/programs/v26-v39,
# a sparse / irregular-data engineer's kernels: CSR SpMV scalar and vector, CSR SpMM with a dense right side, COO
# scatter-add three ways (atomics; a counting sort by row, then a block a row; a row owner bisecting sorted rows),
# segment sum / max / softmax over run-time offsets, EmbeddingBag mean and weighted sum, histograms three ways,
# stream compaction, two LSD radix passes, per-segment top-3, block-sparse attention over run-time block lists,
# gather / index_add at run-time indices checked by the kernel's `assert`, SDDMM, COO -> CSR, a GAT layer) on a
# GPU, each run once: its tensors against the interpreter's (the runner's tolerances) and its own NumPy check
# (test_user_programs30.CHECKS);
# then benchmarks/huser31_bench.py: six of them on CUDA tensors through the Python API, each checked, then timed
# against PyTorch (a table: Tile ms, torch ms, torch / Tile).
# Expected (written before any run): 14 "ok" lines (llsim sm_90a agreed on every tensor of v26-v39; the float
# atomics of v28 and v31 add in the blocks' arrival order, within the runner's float tolerance; v34's ties and
# v33's stability are integer decisions on exact values). Ratios torch / Tile, guesses: v26 CSR SpMV scalar
# 0.1-0.4x (one block a row walking its nonzeros one `item()` load at a time, a dependent load chain; cuSPARSE
# spreads a row over a warp); v27 SpMM 0.3-1x (a [1, 64] row of B a nonzero, coalesced, but one row a block);
# v28 COO atomics 0.2-0.6x (64 serial scalar atomics a block against index_add_'s one thread a nonzero); v29
# segment softmax 1-3x (two launches against PyG's four-op chain with a gather and two scatters); v30
# EmbeddingBag mean 0.5-1.5x (a [1, 128] row gather a nonzero, as PyTorch's kernel); v31 histogram 0.3-1x (a
# [256, 64] one-hot compare a block and one tile atomic, against bincount's shared-memory atomics). A change
# becomes a default only where it is "same" and at least 1.0x; these rows are the baseline for the next round's
# warp-per-row SpMV and gather work (a vector gather does not exist: the one-hot and the `item()` loop are the
# only forms). ~60-120 s, mostly compiles.
# usage (on the device, from the checkout's root): bash benchmarks/huser31_device.sh
set -uo pipefail
. benchmarks/device_env.sh huser31
nvidia-smi -L
echo "=== each program on the GPU: against the interpreter, then its NumPy check"
timeout 100 python3 benchmarks/user_programs_gpu.py test_user_programs30 v
echo "=== six kernels timed against PyTorch"
timeout 90 python3 benchmarks/huser31_bench.py 2>&1 | tail -16
