#!/usr/bin/env bash
# Issue 15, hdec (2026-12-07 20:07 session, written before any run; CPU-only so far): decode at batch 1 and 8,192
# positions toward 80 % of the copy bandwidth, the merge folded into the tensor-core split.
#
# What runs (one process for the bench; ~100 s with a warm compile cache, ~150-190 s cold: ~25 kernel instances;
# the main table prints before the two probes, so a timeout (TEST_TIMEOUT 60, BENCH_TIMEOUT 130) keeps it):
#   1. the GPU tests of the fold (tests/backend/test_decode_fold.py -m gpu: benchmarks/decode_fold.tile's
#      `decode_fused_tcw`, AW = 0 and 1 on a ring of 4 stages (and AW = 1 on 2 told 8,000), against SDPA in f32 at
#      B=1 8k's plan told 8,192 / 8,000 / 1 positions, 200 of 1,024 over 16 shares (fewer key blocks than shares), 3
#      shares at B=2, 17 at B=8; NaN and Inf past the length; each twice: the arrival counters zero again);
#   2. benchmarks/hdec_decode.py: bf16, 32 query / 8 KV heads, D = 128, as CUDA graphs, B=1/8 x 8k/32k, 3 rounds
#      interleaved (REPS=10 a timing), each row: the default pair (attention.py's: tc split at B=1 8k, std's FMA
#      split elsewhere, `decode_combine` on PDL "late"), the tc pair on the same plan where the default is FMA,
#      `fold` (decode_fused_tcw AW = 0: the head's last share to finish merges, `atom.acq_rel`), `fold aw` (AW = 1:
#      the head's last share polls, the others leave after `red.release`), SDPA in a graph; in % of the copy
#      bandwidth measured in the same process; errors vs SDPA in f32 (< 1e-2, also told 8,000 of 8,192); then
#      (SWEEP=1) B=1 8k's `fold aw` at 8 / 12 / 16 / 24 / 32 shares and at 16 with a K/V ring of 2 and 3 stages
#      (4 everywhere else, as `decode_split_tc`), and (TRACE=1) traced block by block
#      (`TILEC_TRACE=blocks`), told 8,192 and 1 positions.
#
# The fold (hdec): one launch, grid (B * Hkv, 1, splits), the tc split's pipeline (TMA ring, wgmma, one consumer
# warpgroup), then `if last_block(2)` run by all 256 threads once the warp roles end (TILEC_ATTN_LAST_BLOCK=join,
# which the bench sets). hattn7's joined fold (`decode_fused_tcj`) read +0.34 us over the tc pair at B=1 8k on the
# H100 (call 32): its merge's sums over the shares crossed warps (14 CTA barriers). `decode_fused_tcw` merges all
# NS shares in one [G, NS, D] step with the log-sum-exps broadcast over the partials' layout, which the backend now
# lays with its warps along D (`layout_assign.loaded_and_reduced` follows a broadcast): the max and both sums are
# shuffles (9 barriers, none for a sum). AW = 1 (`#[hints(arrive_wait)]`) takes the MEMBAR + atomic + CCTL + flag
# exchange off every share but the waiter; on the FMA fold it read -1.95 us against the atomic on the H100 (call 32,
# 19.58 -> 17.63).
#
# EXPECTED (H200, copy ~4.28 TB/s; written before the run):
#   B=1 8k (33.5 MB, 7.8 us at copy; 80 % = 9.8 us): pair 12.7-13.1 us (59-61 %); SDPA 13.6-13.9.
#     fold    = pair -0.1..+0.2 us (the merge's dependent launch 0.7 and its block 1.1 gone; on the last share's
#               path the join ~0.05, MEMBAR + atomic ~0.5-0.8, one L2 round trip of the head's 32 KB ~0.5, 9 barriers
#               ~0.2, the store 0.1);
#     fold aw = pair -1.0..-0.3 us: 11.7-12.8 us = 61-67 % of copy. The 80 % line stays out of reach of the fold
#               alone: the graph's own launch (2.2-2.4 us) and the bytes at the L2's rate (5.8) leave 1.6 us for the
#               split's chain to its first tile (~2.0 alone), its tail (0.7) and the merge (RESULTS, hdec's section).
#   B=1 32k (134 MB; default FMA pair 40-42 us, 77-81 %): the tc plan is 32 shares = 256 one-tile CTAs at one an SM
#     (two waves, where the tc pair's split walks them persistently): fold aw = tc pair -1..+2 us; not the default.
#   B=8 8k (268 MB; pair 68-72 us, 87-91 %) and B=8 32k (1,074 MB; pair 245-252 us, 97-100 %): 4 shares, 256 and
#     256 CTAs, DRAM-bound: folds within +-2 % of the tc pair; no regression of the default (unchanged kernels).
#   Errors vs SDPA in f32: ~3e-3 on every form (the pair's).
#   Shares at B=1 8k (`fold aw`): 16 (the plan: 128 CTAs, one wave) best or within 0.2 us of the best; 8 (64 CTAs,
#     half the SMs, 16 key blocks each: the L2 still near its rate from 64 SMs, a merge of half the partials)
#     +0..+1.5 us; 24 and 32 (two waves at one CTA an SM) +0.5..+2.5 us. If 8 reads best, the L2 feeds 64 SMs at
#     its full rate and the plan's one-wave rule gives shares that are too short. Ring stages at 16 shares: 2 and 3
#     within +-0.3 us of 4 (each CTA asks 64-96 KB at its start instead of 128: its first tile may land sooner, the
#     stream may keep fewer bytes in flight than the L2's latency needs); 2 or 3 better by > 0.3 us would make the
#     chain's first tile the L2's queue of everyone's ring (16 MB asked at once), not the TMA's own latency.
#   Traced `fold aw` at B=1 8k (medians of 20 replays, us): told 8,192: blocks min ~8.3 / median ~8.9 (the pair's
#     split: 8.5 / 8.9), max (the heads' waiters, which merge) +0.6..+1.2 over the median, span ~10-10.5, graph gap
#     2.0-2.4; told 1: blocks min ~2.2 (a share without a key), max ~3.5-4.5 (the waiter of the head's one key
#     block: its tile and the merge), span ~4-5 (the pair told 1: 8.5 us in all). With TILEC_TRACE_MARK=wait1 (the
#     consumers' first mbarrier wait's return: Q and the first K/V stage in), `s_mark_med` 0.8-1.5 us from a block's
#     start told 8,192 (most of the ~2 us chain: the TMA round trips while 128 CTAs ask 16 MB of the L2 at once),
#     0.7-1.2 told 1; if it reads >= 1.5 told 1, the first TMA's latency itself is the chain's largest part.
# MAKES A DEFAULT: `fold aw` at B=1 8k below the pair by more than both ranges (3 rounds) -> decode_plan's rule
#   picks the fold where the step's K and V fit in L2 and the tc plan is one wave (B * Hkv * splits <= SMs); any
#   row where it reads slower keeps the pair. If `fold aw` <= 9.8 us at B=1 8k, issue 15's 80 % holds there.
#
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hdec_device.sh         (REPS, ROUNDS, TESTS=0, BENCH_TIMEOUT adjust)
#   CPU=1 bash benchmarks/hdec_device.sh   (the script itself without a GPU: the tests skip, the bench's --cpu runs the
#                                           folds on the interpreter against NumPy)
# Prints the tests' summary and the bench's table; writes $OUT/hdec.tgz.
set -uo pipefail
NAME=hdec; . benchmarks/attention_arms.sh
unset TILEC_ATTN_LAST_BLOCK
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TEST_TIMEOUT:-60} python3 -m pytest -q -m gpu -p no:cacheprovider tests/backend/test_decode_fold.py \
    > "$D/tests.log" 2>&1
  echo "hdec gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
fi
OUT="$D" REPS=${REPS:-10} ROUNDS=${ROUNDS:-3} timeout ${BENCH_TIMEOUT:-130} python3 benchmarks/hdec_decode.py \
  ${CPU:+--cpu} > "$D/decode.log" 2>&1
rc=$?
echo "hdec decode (rc $rc, $(el) s):"
grep -E "^(card|B=|round|\||errors|cpu|traced|fold aw)" "$D/decode.log" | cut -c1-240
[ $rc -eq 0 ] || tail -6 "$D/decode.log" | cut -c1-240
pack
