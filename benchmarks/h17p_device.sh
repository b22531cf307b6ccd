#!/usr/bin/env bash
# Issue 17, h17p (2026-12-05, session 23:27-02:27): the engine's decode at Qwen3-4B on an H200 (the issue's card),
# where the last 8-10 % of the roofline go. The default plan on sm_90 was tuned on H100s (h17r/h17t, 2026-12-05:
# 85.2 % there); the H200's last figure is 77.6 % (2026-12-04, an older main). The H200 reads bytes 1.41x as fast
# and has the same 132 SMs, so what does not scale with bytes (the GEMVs' ~1.5 us a launch of ramp and drain, the
# attention chain's ~6 us a layer, launch gaps, the token choice) is ~24 % of its step against ~19 % of the
# H100's. The model: benchmarks/RESULTS.md, section "h17p".
# Rows (decode_ab.py, one process, the same weights; A B B A: each variant twice, mirrored around the middle):
#   {}      the default (PDL "late+loads", `ge` (o, down), gate/up + QKV at ST -1, `rs` 1, `tw` 16,384)
#   OLD     the plan before the H100 promotions (PDL "late", no entry trigger, no peel, rs 0, argmax_step)
#   me      the split merge triggers the O GEMV at its entry (O's blocks scheduled while the merge runs)
#   GL1     (new, `Plan.gl`) gate/up triggers down at the start of its K loop's last iteration (`pdl_early = 2`,
#           after its wait), down peeled: down's blocks take the SMs gate/up's leave during its 3.5 us tail and read
#           their first K step (10 MB) there, where the DRAM part idles; O and down keep their entry triggers
#   GLQ     (new) the QKV GEMV triggers the attention at its K loop's last iteration: the attention's blocks
#           (226 registers: they cannot sit beside the QKV's 3 blocks an SM, so they land only on SMs the QKV has
#           left) are scheduled during its 1.7 us tail and wait there, instead of 0.42 us after its last block
# STEP=more (a second step, <= 115 s): {} GL3 COMBO GLQ7 GLQ7 COMBO GL3 {} at both contexts, where GL3 is every
#   GEMV -> GEMV boundary at the last iteration (O, gate/up, down; none at entry; the GEMV after each peeled), COMBO
#   is me + GL1 + GLQ (the candidates together), GLQ7 is GLQ with the attention's `pos`, key range and first K/V
#   blocks read before its wait (`ea` 7: under "+loads" those tensors are early, so on the SMs the QKV's tail frees
#   the ring's first bytes arrive before the QKV ends)
# Expected on an H200 (copy ~4.27 TB/s, roofline 521 tok/s at 1,024, 461 at 8,192), written before any run:
#   {}     ~405-415 tok/s at 1,024 (78-80 %): the H100's promotions were worth ~45 us a token (+1.4 %); if they
#          keep their microseconds here they are worth ~+1.9 % (the same us of a 25 % shorter step)
#   OLD    1.2..2.2 % slower than {}; if not slower, the H100 promotion does not carry over to the H200 (say so)
#   me     +0.4..+0.8 % over {} (H100: +0.4 % at 1,024, +0.6 % at 8,192; 0.6B lost 1.9 %: not measured here)
#   GL1    -1.0..+1.5 % over {}: up to ~1 us a layer of down's first bytes under gate/up's tail (+1.5 %); the risk,
#          why the range reaches below 0: down's blocks parked at their wait beside gate/up's last blocks slow them
#          (PDL "last" for every kernel, the attention's and the merge's too, lost 4.4 % on the H200, 2026-12-03;
#          gate/up's entry trigger, down's blocks beside it from its start, -0.3 % on the H100)
#   GLQ    -0.3..+0.6 % over {}: the attention's launch gap (0.42 us) -> ~0.1-0.2 us a layer
#   GL3    -1.5..+1.5 % over {}: the same as GL1 at O -> gate/up and down -> QKV, where entry triggers won +0.4 % (H100)
#   COMBO  the sum of what me, GL1 and GLQ gave alone, within ~0.3 %
#   GLQ7   -1.5..+1.0 % over {}: up to ~0.9 us a layer of the attention's first bytes under the QKV's tail, against
#          ea 7's own cost (the block ~1 us slower: `{"ea": 7}` alone -1.4 % on the H200, 2026-12-04, before `rs`)
#   8,192: the same microseconds a token, ~0.85x the percentages
# None of these reaches 85 % (443 tok/s at 1,024): the model puts the H200's default at ~2.44 ms a token against
# 2.26 for 85 %, ~5 us a layer short.
# One device step, <= ~120 s warm on a 16-core H200 (an H100 gives H100 numbers: the same rows, read as ratios), from
# the checkout's root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   decode_ab.py --model 4b --contexts 1024,8192, one process: the 10 rows at each context, 3 rounds of 4
#   replays (a row ~2-6 s warm, the engine ~20-25 s to load; CONTEXTS=1024 halves it where time is short;
#   a run the timeout cuts keeps its printed rows, which the summary reads)                            <= 115 s
# Optional, each its own call or step if device time is left:
#   STEP=trace (<= 60 s): decode_trace.py of the default at 1,024 (one replay), then step_model.py on it: the
#     H200's per-kind table (floor, adds, over) that the model in RESULTS.md estimates from older traces
#     (TRACE_V='[{}, {"gl": ["gate_up"], "st": {"down": -1}}]' TRACE_TIMEOUT=100: also a gl row's, its tails)
#   STEP=tests (<= 40 s): the GPU test of `Plan.gl` (both forms above against TorchQwen3, teacher-forced, the
#     greedy tokens without PDL, early loads made)
#   STEP=small (<= 60 s): 0.6B and 8B at 1,024, {} me me {}: what promoting `me` needs (0.6B lost 1.9 % on an H100)
# Prints the rows ("ctx   1024 {...} NNN tok/s ...") and one line a step, then each variant's rows folded
# (`ab_summary.py`: mean, spread, ratio to the default's mean); writes $OUT/h17p.tgz (logs, json).
# usage on the device machine, from the checkout's root:  bash benchmarks/h17p_device.sh  (STEP=more|trace|tests|small bash ...)
set -uo pipefail
. benchmarks/device_env.sh h17p
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
if [ "${STEP:-ab}" = trace ]; then
  TV=${TRACE_V:-'[{}]'}  # (a default holding braces cannot sit inside ${...:-...}: its first } ends it)
  timeout ${TRACE_TIMEOUT:-60} python3 benchmarks/decode_trace.py --model 4b --context 1024 --replays 1 \
    --rounds 2 --reps 4 --variants "$TV" --out "$D/trace" > "$D/trace.log" 2>&1
  echo "h17p trace (rc $?, $(el) s):"; grep -E "^(NVIDIA|variant|step:|note)" "$D/trace.log"
  [ -e "$D/trace/picture.json" ] && python3 benchmarks/step_model.py "$D/trace/picture.json" | tee "$D/model.md"
  rm -f "$D"/trace/records_v*.npz; pack; echo "h17p done ($(el) s): $OUT/h17p.tgz"; exit 0
fi
OLD='{"pdl": "late", "ge": [], "gl": [], "me": 0, "rs": 0, "tw": 0, "st": {"gate_up": 1, "qkv": 1, "down": 1}}'
ME='{"me": 1}'
GL1='{"gl": ["gate_up"], "st": {"down": -1}}'
GL3='{"ge": [], "gl": ["o", "gate_up", "down"], "st": {"down": -1}}'
GLQ='{"gl": ["qkv"]}'
COMBO='{"me": 1, "gl": ["qkv", "gate_up"], "st": {"down": -1}}'
GLQ7='{"gl": ["qkv"], "ea": 7}'
if [ "${STEP:-ab}" = tests ]; then
  timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -p no:cacheprovider -m gpu tests/llm/test_engine_gpu.py \
    -k "last_iteration" > "$D/tests.log" 2>&1
  echo "h17p gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR|Error" "$D/tests.log" | head -8
  pack; echo "h17p done ($(el) s): $OUT/h17p.tgz"; exit 0
fi
if [ "${STEP:-ab}" = small ]; then
  for m in 0.6b 8b; do
    timeout ${SMALL_TIMEOUT:-30} python3 benchmarks/decode_ab.py --model $m --contexts 1024 --rounds 3 --reps 4 \
      --variants "[{}, $ME, $ME, {}]" --out "$D/ab_$m" > "$D/ab_$m.log" 2>&1
    echo "h17p decode_ab $m (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab_$m.log"
    f=$(ls "$D"/ab_$m/ab_*.json 2>/dev/null | head -1); python3 benchmarks/ab_summary.py "${f:-$D/ab_$m.log}"
  done
  pack; echo "h17p done ($(el) s): $OUT/h17p.tgz"; exit 0
fi
V=${V:-"[{}, $OLD, $ME, $GL1, $GLQ, $GLQ, $GL1, $ME, $OLD, {}]"}
[ "${STEP:-ab}" = more ] && V="[{}, $GL3, $COMBO, $GLQ7, $GLQ7, $COMBO, $GL3, {}]"
timeout ${AB_TIMEOUT:-115} python3 benchmarks/decode_ab.py --model 4b --contexts ${CONTEXTS:-1024,8192} --rounds 3 --reps 4 \
  --variants "$V" --out "$D/ab" > "$D/ab.log" 2>&1
echo "h17p decode_ab 1,024 and 8,192 (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab.log"
# each variant's rows folded (mean, spread, against the default's mean): from the JSON, or from the printed rows
# when the timeout cut decode_ab before it wrote one
f=$(ls "$D"/ab/ab_*.json 2>/dev/null | head -1); python3 benchmarks/ab_summary.py "${f:-$D/ab.log}"
pack; echo "h17p done ($(el) s): $OUT/h17p.tgz"
