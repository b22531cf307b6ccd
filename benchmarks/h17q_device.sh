#!/usr/bin/env bash
# Issue 17, h17q (2026-12-06, session 04:40-07:40): the decode step's attention chain (the ring attention and the
# split merge after it), the largest fixed cost of a 4B layer: on today's H100 trace (main 37db147,
# /work/coord/results/callA_0449/trace_table.md) the attention adds 5.68 us a layer (4.30 over its 4.2 MB) and
# `combine_splits` 2.14 (all of it fixed): 6.44 us of the layer's 14.6 us over its bytes.
# Rows (decode_ab.py, one process, the same weights; A B C C B A around the default):
#   {}   the default (sm_90: PDL "late+loads", ea 3, rs 1, me 1, ...)
#   FL   (new, `Plan.fl` 3) the split merge folded into the early ring attention in ONE pass
#        (`attn_decode_ring_fold`): every block stores its share, the block of each KV head that arrives last
#        (`last_block`: a barrier, one acq_rel atomic = MEMBAR.GPU + ATOMG + CCTL, a barrier) loads the head's
#        16 (32 at 8,192, in 2 steps) shares and log-sum-exps (SASS at 4B: 48 loads a thread before its first
#        exponential, one L2 round trip), merges them inside each thread (no barrier, no shared memory after the
#        arrival) and stores the 4 query heads' rows; no merge launch. `fm` (2026-12-03, H200, before `rs`)
#        merged NC shares a step, each step a dependent L2 round trip and 9 barriers of layout changes: its tail
#        was 2.5-3.0 us and it lost 0.7-1.5 %
#   KB   (new, `Plan.kb` 1) the early ring's key ranges balanced: at positions 1,025-1,031 (7 of the 8 steps of a
#        burst at ctx 1,024) 33 key blocks over 16 splits are 1 split of 3 and 15 of 2, not 11 of 3 and 5 empty:
#        the same 4.2 MB over 128 SMs instead of 88 (8,192: 257 over 32, 1 of 9 and 31 of 8, not 28 of 9, one
#        of 5 and 3 empty)
#   FK   both
# Expected on an H100 (copy ~3.02 TB/s; 1 us a layer = 36 us a token = ~1.1 % at 4B 1,024), written before any run:
#   FL   +0.5..+1.1 % at 1,024: the merge's 2.14 us after the attention's last block against the fold's tail on
#        that block: the arrival ~0.6-0.9 us, one L2 round trip ~0.4-0.5, 16 exponentials, the sums and the store
#        ~0.1-0.2 (1.1-1.6 us: -0.5..-1.0 us a layer); at 8,192 (the long form, 32 shares = 64 KB read by one
#        block) -0.2..+0.6 %. The risk, why the range could go below 0: the arrival costs ~2 us as `fm`'s seemed
#        to (h15d measured 0.9-1.4 us for it alone at 8k/32k on the H200); then -0.3..-1.2 %
#   KB   0..+0.45 % at 1,024 (the slowest block keeps its 3 blocks, 48 KB, but the DRAM's share of each SM falls:
#        H200 2026-12-04: a 2-block split's block 4.42 us, a 3-block split's 4.99 with 11 of 16 splits busy;
#        here 0..-0.4 us a layer), 0..+0.3 % at 8,192
#   FK   about FL + KB
#   0.6B / 8B (STEP=small, {} FK FK {}): the same us a layer: 0.6B (28 layers, ~0.8 ms a step) +0.5..+2 %, 8B
#        (36 layers, ~5.4 ms) +0.1..+0.5 %; a loss at either blocks a promotion
#   trace (STEP=trace, FK beside {}): `attn_decode_ring_fold` adds ~6.8-7.3 us a layer against
#        attn_decode_ring_early + combine_splits' 5.68 + 2.14 = 7.82; its tail (first block end -> last) grows by
#        the fold (~1.1-1.6 us) less what KB takes off the 3-block splits
# On an H200 the same microseconds are ~1.4x the percentages (its step is ~25 % shorter).
# Promotable only if it wins at both contexts (and costs 0.6B / 8B nothing).
# MEASURED (H100, the lead's calls B and D, RESULTS.md "h17q"): KB +0.36 % at 1,024, +0.46 % at 8,192, 8B +0.16 %,
# 0.6B -0.05 %: promoted (`kb` 1 is in sm_90's default since b6d65efd, so `{}` below now includes it and KB rows
# equal `{}`); FL -1.08 % / -1.94 %, FK -1.14 % / -0.67 %; STEP=more: FKG -1.26 %, FKP -1.49 %, FKO -0.08 % against
# the `{}` of then. FKX (STEP=more's newest row) not run.
# One device step, <= ~120 s warm, from the checkout's root after `pip install --no-deps -e .`:
#   decode_ab.py --model 4b --contexts 1024,8192, one process, the 8 rows at each context, 3 rounds of 4 replays
#   (the engine ~20-25 s to load; CONTEXTS=1024 halves it where time is short)                          <= 115 s
# Optional, each its own call or step if device time is left:
#   STEP=more (<= 110 s): 4B at 1,024, {} FK FKX FKG FKP FKP FKG FKX FK {}. (FKX and FKG added, FKO moved out,
#     after call B's STEP=small: FK's attention + merge timed alone fell 0.5-0.9 us a layer, yet the step at 8B
#     lost 0.45 %, as if what the fold's trigger lets start during the last blocks' merge costs more than the
#     merge launch it saves. F32 (32 splits below 8,192) dropped from the step; FKO is STEP=more2's.)
#     FKX = FK whose folded attention never triggers (`Plan.fl` 7: its PE 3, the new `pdl_early = 3`): the O
#     GEMV's blocks are scheduled only when the attention's blocks have all exited, not beside its last blocks
#     while they merge (the pair's merge kernel stood between them before). If the early O (and, through O's
#     entry trigger, gate/up) is the cost, FKX against FK: +0.3..+0.9 %, FKX against {}: -0.3..+0.5 % (the
#     fold's alone-gain less O's launch latency, ~0.4 us, now exposed); if not, FKX against FK: -0.6..0 %
#     FKG = FK with O no longer triggering gate/up at its entry (`ge` ["down"]): under the default, the fold's
#     trigger (before its shares' stores) schedules O's blocks, whose entry trigger schedules gate/up's, whose
#     peeled first K step (~10 MB) is then read during the fold's last blocks' 3 dependent L2 round trips (one
#     launch earlier than after `combine_splits`). If that traffic is the cost, FKG against FK: +0.2..+0.8 %; if
#     not, -0.6..0 % (the entry trigger's own +0.45 % lost, h17r)
#     FKP = FK with the layer's KV cache prefetched into L2 by the QKV GEMV (`Plan.kp` 32, `rms_gemv_kv`: once its
#     own loads are back each of its 384 blocks issues bulk L2 prefetches of 1-2 of the 528 [32-key, 128] tiles of
#     K and V rows 0 .. pos of the layer's 8 KV heads, 4.2 MB), so the attention's key blocks come from L2. For:
#     the attention's start -> last key block in (~3.2 us at 3 blocks on the H200's timeline, ~0.9 of it to the
#     first bytes) at L2 latency and rate, -0.8..-1.6 us, if the prefetches are in by then (4.2 MB is ~1.4 us of
#     DRAM, issued over the QKV's ~2.4 us tail). Against: issuing a prefetch costs its block (2026-12-03's probe:
#     21 MB from 320 blocks ended the issuer 2.3 us later, ~0.3-0.55 us for this block's 8-16 KB), on the QKV's
#     last blocks too; W_o prefetched from the QKV lost 1.7-3.0 % that day (its reader, a GEMV, was bound by its
#     SMs' intake, which the attention's ~25 GB/s a block is not). Expected FKP against FK: -0.8..+1.5 %
#   STEP=more2 (<= 80 s): 4B at 1,024, {} FKO FKO {}: FKO = FK with the O GEMV's first K step peeled (`st` o -1):
#     O's blocks read their first weight tile (10 MB of W_o's 21) before their wait, during the fold's tail.
#     Written first as a possible gain (-0.5..+1.0 % against FK); after call B, the same question from the other
#     side (more early traffic during the tail): -1.5..+0.5 % against {}
#   STEP=small (<= 70 s): 0.6B and 8B at 1,024, {} FK FK {}
#   STEP=trace (<= 60 s): decode_trace.py of {} and FK at 1,024 (one replay each), step_model.py's table of each
#   STEP=tests (<= 60 s): the GPU tests of the fold and the balance (test_folded_merge_matches_torch: teacher-
#     forced logits against TorchQwen3, the greedy tokens, both graph APIs) and of the merge forms beside it
# Prints the rows ("ctx   1024 {...} NNN tok/s ...") and each variant's rows folded (`ab_summary.py`: mean, spread,
# ratio to the default's mean); writes $OUT/h17q.tgz (logs, json).
# usage on the device machine, from the checkout's root:  bash benchmarks/h17q_device.sh  (STEP=more|more2|small|trace|tests bash ...)
set -uo pipefail
. benchmarks/device_env.sh h17q
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
FL='{"fl": 3}'
KB='{"kb": 1}'
FK='{"fl": 3, "kb": 1}'
if [ "${STEP:-ab}" = trace ]; then
  timeout ${TRACE_TIMEOUT:-60} python3 benchmarks/decode_trace.py --model 4b --context 1024 --replays 1 \
    --rounds 2 --reps 4 --variants "[{}, $FK]" --out "$D/trace" > "$D/trace.log" 2>&1
  echo "h17q trace (rc $?, $(el) s):"; grep -E "^(NVIDIA|variant|step:|note)" "$D/trace.log"
  [ -e "$D/trace/picture.json" ] && python3 benchmarks/step_model.py "$D/trace/picture.json" | tee "$D/model.md"
  rm -f "$D"/trace/records_v*.npz; pack; echo "h17q done ($(el) s): $OUT/h17q.tgz"; exit 0
fi
if [ "${STEP:-ab}" = tests ]; then
  timeout ${TEST_TIMEOUT:-60} python3 -m pytest -q -p no:cacheprovider -m gpu tests/llm/test_engine_gpu.py \
    -k "folded_merge or merge_inside_the_ring or early_ring_attention" > "$D/tests.log" 2>&1
  echo "h17q gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR|Error" "$D/tests.log" | head -8
  pack; echo "h17q done ($(el) s): $OUT/h17q.tgz"; exit 0
fi
if [ "${STEP:-ab}" = more ] || [ "${STEP:-ab}" = more2 ]; then
  FKX='{"fl": 7, "kb": 1}'
  FKG='{"fl": 3, "kb": 1, "ge": ["down"]}'
  FKP='{"fl": 3, "kb": 1, "kp": 32}'
  V=${V:-"[{}, $FK, $FKX, $FKG, $FKP, $FKP, $FKG, $FKX, $FK, {}]"}
  [ "$STEP" = more2 ] && V="[{}, {\"fl\": 3, \"kb\": 1, \"st\": {\"o\": -1}}, {\"fl\": 3, \"kb\": 1, \"st\": {\"o\": -1}}, {}]"
  timeout ${MORE_TIMEOUT:-110} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 3 --reps 4 \
    --variants "$V" --out "$D/more" > "$D/more.log" 2>&1
  echo "h17q decode_ab more (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/more.log"
  f=$(ls "$D"/more/ab_*.json 2>/dev/null | head -1); python3 benchmarks/ab_summary.py "${f:-$D/more.log}"
  pack; echo "h17q done ($(el) s): $OUT/h17q.tgz"; exit 0
fi
if [ "${STEP:-ab}" = small ]; then
  for m in 0.6b 8b; do
    timeout ${SMALL_TIMEOUT:-35} python3 benchmarks/decode_ab.py --model $m --contexts 1024 --rounds 3 --reps 4 \
      --variants "[{}, $FK, $FK, {}]" --out "$D/ab_$m" > "$D/ab_$m.log" 2>&1
    echo "h17q decode_ab $m (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab_$m.log"
    f=$(ls "$D"/ab_$m/ab_*.json 2>/dev/null | head -1); python3 benchmarks/ab_summary.py "${f:-$D/ab_$m.log}"
  done
  pack; echo "h17q done ($(el) s): $OUT/h17q.tgz"; exit 0
fi
V=${V:-"[{}, $FL, $KB, $FK, $FK, $KB, $FL, {}]"}
timeout ${AB_TIMEOUT:-115} python3 benchmarks/decode_ab.py --model 4b --contexts ${CONTEXTS:-1024,8192} --rounds 3 \
  --reps 4 --variants "$V" --out "$D/ab" > "$D/ab.log" 2>&1
echo "h17q decode_ab 1,024 and 8,192 (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab.log"
f=$(ls "$D"/ab/ab_*.json 2>/dev/null | head -1); python3 benchmarks/ab_summary.py "${f:-$D/ab.log}"
pack; echo "h17q done ($(el) s): $OUT/h17q.tgz"
