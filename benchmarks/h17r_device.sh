#!/usr/bin/env bash
# Issue 17, h17r (2026-12-06, session 18:11-21:11): the split merge folded into the decode attention, with the
# head's LAST SPLIT WAITING for the others instead of the last block to arrive merging (`#[hints(arrive_wait)]`,
# `Plan.fl` + 8). (The h17r script of 2026-12-05, ge / tk / mr / me rounds, is f359627c's version of this file.)
# Where the layer's fixed time is (H100, main 37db147's trace, /work/coord/results/callA_0449/): the attention adds
# 4.30 us over its 4.2 MB and the merge launch (`combine_splits`) 2.14 us, all fixed: 6.44 of the layer's 14.6 us
# over its bytes. h17q's fold (`Plan.fl` 3, `attn_decode_ring_fold`) made the two 0.6-0.9 us a layer faster timed
# alone (calls B, D) and the step SLOWER (-1.08 % at 1,024, -1.94 % at 8,192; with `kb` -0.51 % in call D): its
# reading, not traced, that every non-last block keeps its SM through the arrival (barrier, MEMBAR.GPU, the
# acq_rel ATOMG's round trip to L2, CCTL.IVALL, barrier: ~0.6-1 us after its stores) where the pair's attention
# blocks exit at their stores, so the O GEMV's 320 blocks (only one fits beside an attention block) are placed
# later; and the merging block pays that round trip on the critical path.
# New here: `arrive_wait` (`codegen/arrive.py`, `_emit_waiting`): a split that is not its head's last does its
# stores, a barrier, MEMBAR + REDG (a release add, no answer waited for) and EXITs; the head's last split (the one
# that folds the token; with `kb` never a longer one) polls the counter with acquire loads until the other 15 are
# in, zeroes it, and merges (the same one-pass merge, the same values). SASS (ptxas 13.0, sm_90a, 4B): no ATOMG,
# REDG then EXIT with nothing between, 222 registers (the fold 199, the default attention 226), no spill.
# Rows (decode_ab.py, 4B, ctx 1,024, one process, mirrored A B C D E E D C B A):
#   {}    the default (sm_90: PDL "late+loads", ea 3, kb 1, rs 1, me 1, ge [o, down], gl [gate_up], tw)
#   FW    `fl` 11: the fold in both step forms, the last split waiting (new)
#   FL    `fl` 3: h17q's fold (the last block to arrive merges): the control for what the waiting arrival changes
#   FWO   FW with the O GEMV's first K step peeled (`st` o -1: its first 10 MB of W_o read before its wait, on the
#         SMs the non-last splits leave; h17q's FKO got back 0.43 % over FK that way)
#   FW32  FW with 32 splits below 8,192 too (`short_ns` 32: at 1,025-1,031 positions 33 key blocks over 32 splits,
#         1 of 2 and 31 of 1, where 16 splits have 1 of 3 and 15 of 2; 256 blocks, 2 an SM; the merge of 32 shares
#         in 2 steps of 16 loads, all issued before the first exponential). The pair lost with 32 splits (-0.9 %,
#         2026-12-05: `combine_splits` of 32 shares 1.46 -> 2.06 us a block); the fold's merge barely grows with them
# Expected on an H100 (copy ~3.02 TB/s; 1 us a layer = 36 us a token = ~1.1 % at 4B 1,024; `{}` ~313-320 tok/s =
# ~3,130-3,200 us a token), written before any run:
#   FL    -0.3..-1.1 % against {} (h17q's FK rows: -1.14 % in call B, -0.51 % in call D)
#   FW    against FL +0.3..+1.0 % (~0.3-0.9 us a layer, ~10-30 us a token): the merger's atomic round trip
#         (~0.6-0.9 us, h15d) replaced by one acquire poll that usually finds the others in (~0.3-0.5 us), and the
#         non-last blocks leaving ~0.3-0.5 us sooner (no answer, no CCTL, no second barrier; the MEMBAR stays);
#         against {} -0.8..+0.6 %: a win over the default needs the non-last blocks' MEMBAR to be short and O's
#         blocks to take their SMs at once. If FW is no better than FL, the fold's loss is not the arrival's
#         round trips (the next suspect: the MEMBAR itself, i.e. any release before the stores' acks)
#   FWO   against FW -0.5..+0.5 % (O's early bytes on the freed SMs, against their traffic beside the merge)
#   FW32  against FW -0.8..+0.8 %: the critical split 3 -> 2 key blocks (H200 timeline: a block 4.99 -> 4.42 us),
#         against two blocks an SM sharing its intake and 32 shares to merge (+0.1..+0.3 us)
# MEASURED (the lead's call 25, H100, RESULTS.md "h17r" and "call 25"): FW -0.75 %, FL -0.76 %, FWO -0.27 %, FW32
# -2.87 %; STEP=waves: G38 -0.07 %, D5 / O5 -0.30 %, O20 -0.50 %, D20 -0.89 %, G5 -10.2 %. Nothing promoted.
# On an H200 the same microseconds are ~1.4x the percentages. Promotable only if FW wins at 1,024 AND 8,192
# (STEP=more) and costs 0.6B / 8B nothing (STEP=small).
# One device step, <= ~120 s warm, from the checkout's root after `pip install --no-deps -e .`:
#   1. decode_ab.py --model 4b --contexts 1024, the 10 rows, 3 rounds of 4 replays (engine load ~20 s)    <= 85 s
#   2. the GPU tests of the waiting fold (test_folded_merge_matches_torch, fl 11 (tile and torch graphs) and 10:
#      teacher-forced logits against TorchQwen3, the greedy tokens; a lost arrival would hang, hence the
#      timeout; fl 3 / 1 / 2 / 7, h17q's, passed in call B)                                          <= 30 s
# Optional steps, each its own call if device time is left:
#   STEP=more (<= 80 s): 4B at 8,192, {} FW FW {} (the long form: 32 splits, 2 blocks an SM, 2 merge steps)
#   STEP=small (<= 70 s): 0.6B and 8B at 1,024, {} FW FW {}
#   STEP=trace (<= 60 s): decode_trace.py of {} and FW at 1,024, step_model.py's table of each
#   STEP=waves (<= 115 s, no new code): one-wave GEMV grids that fill the 132-SM wave (today down and O 320 blocks
#     in 396 slots, gate/up 304: 0.81, 0.81, 0.77; the drain's last blocks are one of three on an SM, and on the
#     H200's trace 3-block SMs ended ~1.1 us after 2-block ones), 4B at 1,024,
#     {} D5 O5 G5 D20 O20 G38 G38 O20 D20 G5 O5 D5 {}:
#     at 5 blocks an SM (48 registers or fewer, ptxas 13.0: no spill): D5 down [4, 1,024] peeled, O5 O [4, 2,048],
#     G5 gate/up [16, 512] peeled: 640 / 660, 640 / 660, 608 / 660 slots; fewer weight bytes in flight a step on an
#     SM for down (5 x 8 KB against 3 x 32) and O (5 x 16 against 3 x 32; gate/up 5 x 32 against 3 x 32), and MB
#     5-6 lost in 2026-12-02's sweep (those shapes spilled);
#     with equal rows a block (row tiles of no power of two: the backend lays them out at the next power with
#     masked lanes; tests/llm/test_kernels_sim.py's no_power test): D20 down [20, 2,048] and O20 O [20, 2,048]
#     at one block an SM (128 blocks on 128 of the 132 SMs, 159-165 registers, 80 KB a step a block), G38 gate/up
#     [38, 256] at 2 an SM (256 blocks, 96 registers, 2 x 39 KB a step an SM): every busy SM the same bytes.
#     Expected each -2..+1.5 % (the persistent balanced streams, `sk`, gained 0.3-0.5 us on gate/up and down with
#     equal work a block, 2026-12-03; fewer bytes in flight the likeliest loss: down D5, the masked lanes of D20)
# Prints the rows ("ctx   1024 {...} NNN tok/s ...") and each variant's rows folded (`ab_summary.py`: mean, spread,
# ratio to the default's mean); writes $OUT/h17r.tgz (logs, json).
# usage on the device machine, from the checkout's root:  bash benchmarks/h17r_device.sh  (STEP=more|small|trace|waves ...)
set -uo pipefail
. benchmarks/device_env.sh h17r
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
FW='{"fl": 11}'
FL='{"fl": 3}'
FWO='{"fl": 11, "st": {"o": -1}}'
FW32='{"fl": 11, "short_ns": 32}'
summ() { f=$(ls "$1"/ab_*.json 2>/dev/null | head -1); python3 benchmarks/ab_summary.py "${f:-$1.log}"; }
if [ "${STEP:-ab}" = trace ]; then
  timeout ${TRACE_TIMEOUT:-60} python3 benchmarks/decode_trace.py --model 4b --context 1024 --replays 1 \
    --rounds 2 --reps 4 --variants "[{}, $FW]" --out "$D/trace" > "$D/trace.log" 2>&1
  echo "h17r trace (rc $?, $(el) s):"; grep -E "^(NVIDIA|variant|step:|note)" "$D/trace.log"
  [ -e "$D/trace/picture.json" ] && python3 benchmarks/step_model.py "$D/trace/picture.json" | tee "$D/model.md"
  rm -f "$D"/trace/records_v*.npz; pack; echo "h17r done ($(el) s): $OUT/h17r.tgz"; exit 0
fi
if [ "${STEP:-ab}" = more ]; then
  timeout ${MORE_TIMEOUT:-80} python3 benchmarks/decode_ab.py --model 4b --contexts 8192 --rounds 3 --reps 4 \
    --variants "[{}, $FW, $FW, {}]" --out "$D/more" > "$D/more.log" 2>&1
  echo "h17r decode_ab 8,192 (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/more.log"; summ "$D/more"
  pack; echo "h17r done ($(el) s): $OUT/h17r.tgz"; exit 0
fi
if [ "${STEP:-ab}" = waves ]; then
  D5='{"bn": {"down": 4}, "bk": {"down": 1024}, "mb": {"down": 5}}'
  O5='{"bn": {"o": 4}, "mb": {"o": 5}}'
  G5='{"bn": {"gate_up": 16}, "bk": {"gate_up": 512}, "mb": {"gate_up": 5}}'
  D20='{"bn": {"down": 20}, "mb": {"down": 1}}'
  O20='{"bn": {"o": 20}, "mb": {"o": 1}}'
  G38='{"bn": {"gate_up": 38}, "mb": {"gate_up": 2}}'
  timeout ${WAVES_TIMEOUT:-115} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 3 --reps 4 \
    --variants "[{}, $D5, $O5, $G5, $D20, $O20, $G38, $G38, $O20, $D20, $G5, $O5, $D5, {}]" --out "$D/waves" \
    > "$D/waves.log" 2>&1
  echo "h17r decode_ab waves (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/waves.log"; summ "$D/waves"
  pack; echo "h17r done ($(el) s): $OUT/h17r.tgz"; exit 0
fi
if [ "${STEP:-ab}" = small ]; then
  for m in 0.6b 8b; do
    timeout ${SMALL_TIMEOUT:-35} python3 benchmarks/decode_ab.py --model $m --contexts 1024 --rounds 3 --reps 4 \
      --variants "[{}, $FW, $FW, {}]" --out "$D/ab_$m" > "$D/ab_$m.log" 2>&1
    echo "h17r decode_ab $m (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab_$m.log"; summ "$D/ab_$m"
  done
  pack; echo "h17r done ($(el) s): $OUT/h17r.tgz"; exit 0
fi
V=${V:-"[{}, $FW, $FL, $FWO, $FW32, $FW32, $FWO, $FL, $FW, {}]"}
timeout ${AB_TIMEOUT:-85} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 3 --reps 4 \
  --variants "$V" --out "$D/ab" > "$D/ab.log" 2>&1
echo "h17r decode_ab 1,024 (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab.log"; summ "$D/ab"
timeout ${TEST_TIMEOUT:-30} python3 -m pytest -q -p no:cacheprovider -m gpu tests/llm/test_engine_gpu.py \
  -k "folded_merge and (11-1-0 or 10-0-0)" > "$D/tests.log" 2>&1
echo "h17r gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR|Error" "$D/tests.log" | head -8
pack; echo "h17r done ($(el) s): $OUT/h17r.tgz"
