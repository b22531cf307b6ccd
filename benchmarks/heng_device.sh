#!/usr/bin/env bash
# Issue 17 on the H200, heng (2026-12-07, session 14:26-17:26): does sm_90's decode plan, promoted on H100s only since
# 2026-12-05, pay on the H200? The account (RESULTS.md, "heng: issue 17's H200 step"): the H200 step is ~2,472 us a token
# at 4B 1,024 (call 41: 404.5 tok/s, 77.5 % of 522) against ~2,400 us if the H100's promotions had carried over as
# microseconds (h17p's trace of 2026-12-04 less the H100 gains: `ge`+`rs`+peels ~0.3 us a layer, `gl` ~0.5, `me` ~0.4,
# `kb` ~0.35, `tw` ~15 us a token); measured: ~+0.5..+2 % over 2026-12-03/04 (~401 tok/s) where the H100's same-process
# A/Bs summed to ~+3 %: ~1-2 us a layer missing. Every form that places the next launch's
# blocks early or reads its weights before its wait LOST on the H200 when it was measured there (2026-12-02/03: "late+loads"
# with the four GEMVs peeled -3.0 %, "last" -4.4 %, `pe` -1.2 / -1.5 %), and the default now has "late+loads", three
# GEMVs peeled, entry triggers at O and down (`ge`), gate/up's last-iteration trigger (`gl`) and the merge's (`me`).
# The lever: `TILEC_DECODE_PLAN=noearly` (examples/llm/plan.py `PROFILES`, opt-in): those boundary forms off (pdl "late",
# no ge / gl / me, QKV, gate/up, down at ST 1), the kernels' own promotions kept (rs, kb, tw, ea 3).
# Rows (decode_ab.py, 4B, ctx 1,024, one process, mirrored; the same plan fields as the profile, so decode_ab needs no
# environment):
#   {}   the default (sm_90: PDL "late+loads", ge [o, down], gl [gate_up], me 1, rs 1, kb 1, tw, ST -1 on QKV/gate_up/down)
#   N    noearly: {"pdl": "late", "ge": [], "gl": [], "me": 0, "st": {"qkv": 1, "gate_up": 1, "down": 1}}
#   L    the default with no weight read before a wait: {"pdl": "late"} (the triggers and the peels kept)
#   G    the default without O's and down's entry triggers: {"ge": []}
#   GL   the default without gate/up's last-iteration trigger, down unpeeled: {"gl": [], "st": {"down": 1}}
#   M    the default without the merge's entry trigger: {"me": 0}
#   NG   N with O, gate/up and down triggering the next GEMV at their K loop's last iteration, no weight read early:
#        {**N, "gl": ["o", "gate_up", "down"]} (the next grid's launch latency, ~0.35-0.45 us at each of those three
#        boundaries on the H200's trace, hidden under the ~1.5-3.5 us tails, its blocks parked only for the last K step)
# EXPECTED on an H200 (copy ~4.27-4.29 TB/s, roofline ~522 tok/s; 1 us a layer = 36 us a token = ~1.45 % of the step),
# written before any run:
#   {}   404-410 tok/s (77.5-78.5 %; call 41's decode.py 404.5; decode_ab reads within ~1 % of decode.py)
#   N    -1.5..+2.5 % against {} (central +0.5 %): +1..+3 % if the 2026-12-03 loss of early loads holds for today's
#        three peeled GEMVs, less what ge / gl / me are worth here (+1.4 % on the H100: ~1.2 us a layer); a win of
#        >= +0.5 % at 1,024 and >= 0 at 8,192 (STEP=more) would make it the H200's plan (the lead's promotion: plan_for
#        picks it on a card of the H200's bandwidth)
#   L    -1..+2 %   (the early loads alone; on the H100 the triggers without them lost 0.5 %)
#   G    -1..+1 %   (H100 +0.4 % with the loads)
#   GL   -1..+0.8 % (H100 +0.56 %)
#   M    -0.8..+0.5 % (H100 +0.45 %)
#   NG   against N -1..+1.5 % (up to ~1.2 us a layer of launch latency; on the H100 gl at those three, with early
#        loads, +0.5 %; on the H200 "last" for every launch, the attention's and the merge's too, -4.4 %)
# None of these reaches 85 % (443 tok/s = +9 %): the ~15 us a layer over the bytes are inside the phases (the account).
# One device step, <= ~175 s warm (engine load ~20-30 s, 14 rows of ~6-8 s, compiles of the variants' kernels):
#   decode_ab.py --model 4b --contexts 1024, {} N NG L G GL M M GL G L NG N {}, 3 rounds of 4 replays
# Optional steps, each its own call if device time is left:
#   STEP=more  (<= 120 s): 4B at 8,192, {} N N {} (the long form: 32 splits, 2 attention blocks an SM), then the GPU
#              tests of the profile and of `sbt` (teacher-forced logits against TorchQwen3, the greedy tokens; expected
#              to pass)
#   STEP=small (<= 90 s): 0.6B and 8B at 1,024, {} N N {}
#   STEP=table (<= 250 s): decode.py --issue17 (issue 17's whole table in one process: 4B at 1,024 / 8,192 / 32,768 with
#              the prefill of 2,048, 0.6B and 8B at 1,024, each against PyTorch eager and graph; 128 tokens a timed
#              decode, where call 41 timed 32: its host time, 29 us a token = ~0.9 ms a `decode` call, is the call's
#              (one replay, one wait), so it falls from 1.2 % of a token to ~0.3 % and 4B 1,024 should read up to
#              +0.9 % over a 32-token run of the same plan; the bytes count the KV cache at the run's mean position,
#              +0.1 %), then, if N won, 4B at
#              1,024 under TILEC_DECODE_PLAN=noearly (NOEARLY=1). Expected: 4B 1,024 ~78-78.5 % (call 41: 77.5 % at 32 tokens), 8,192 and 32,768 lower
#              in tok/s and higher in % (the KV bytes count; H100 85.2 / 89.2 %), 0.6B ~45-55 % (launch-bound), 8B
#              ~85-90 %, prefill >= 1.0x the reference (H100 1.17-1.28x, H200 2026-12-03 1.16x); ~40 s a model's start
#              + ~10-20 s a row on a fresh machine (seconds per model printed)
#   STEP=trace (<= 70 s): decode_trace.py of {} and N at 1,024, step_model.py's per-kind table of each: the H200's first
#              trace since 2026-12-04, which replaces this account's modelled column (expected: {}'s layer ~61-63 us, its
#              GEMVs' tails as 2026-12-04's or shorter, the attention + merge ~6-6.5 us; N's GEMV gaps 0.35-0.45 us)
#   STEP=fold  (<= 110 s): the split merge folded into the attention under N, where no launch is placed early: {} N NF NW
#              NW NF N {} (NF = N + `fl` 3, h17q's one-pass fold; NW = N + `fl` 11, the head's last split waiting). On the
#              H100 the fold was 0.6-0.9 us a layer faster than the pair alone and lost 0.75 % in the step, by O's blocks
#              placed late against the pair's `me`; N has no `me`. Expected NF and NW against N: -1..+1.2 %
#   STEP=kern  (<= 120 s): the kernels' own promotions, each off, and a key tile of 64: {} R K T B B T K R {} (R `rs` 0,
#              K `kb` 0, T `tw` 0; the H100 measured +0.45 %, +0.36 %, +0.5 %). Expected on the H200: R -1..0 %, K
#              -0.8..0 %, T -0.8..-0.3 % against {} (each the same microseconds as on the H100, ~1.4x the share); a row
#              near 0 or above says that promotion does not carry over. B = {"sbt": 64} (`Plan.sbt`, the short form's key tile, new, opt-in: at 1,025-1,031
#              positions 17 key tiles of 64 over 16 splits, the slowest split 2 tiles where it now has 3 of 32, the long
#              form (8,192 on) still 32: its two ring blocks an SM would not hold two 128 KB rings; the
#              H200's 2026-12-04 timeline: 0.57 us a tile of 32, a tile of 64 ~0.75 with twice the products; ptxas
#              13.0: 255 registers, no spill; the ring 128 KB of shared memory, one block an SM as now): -1..+0.3 %
#              (-0.17 us on the slowest split against whatever the larger ring does to the carveout beside the GEMVs)
# Prints the rows and each variant folded (ab_summary.py: mean, spread, ratio to the default's mean); $OUT/heng.tgz.
# usage on the device machine, from the checkout's root:  bash benchmarks/heng_device.sh  (STEP=more|small|table|trace|fold|kern)
set -uo pipefail
. benchmarks/device_env.sh heng
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
N='{"pdl": "late", "ge": [], "gl": [], "me": 0, "st": {"qkv": 1, "gate_up": 1, "down": 1}}'
L='{"pdl": "late"}'
G='{"ge": []}'
GL='{"gl": [], "st": {"down": 1}}'
M='{"me": 0}'
NG='{"pdl": "late", "ge": [], "gl": ["o", "gate_up", "down"], "me": 0, "st": {"qkv": 1, "gate_up": 1, "down": 1}}'
summ() { f=$(ls "$1"/ab_*.json 2>/dev/null | head -1); python3 benchmarks/ab_summary.py "${f:-$1.log}"; }
case "${STEP:-ab}" in
  trace)
    timeout ${TRACE_TIMEOUT:-70} python3 benchmarks/decode_trace.py --model 4b --context 1024 --replays 1 \
      --rounds 2 --reps 4 --variants "[{}, $N]" --out "$D/trace" > "$D/trace.log" 2>&1
    echo "heng trace (rc $?, $(el) s):"; grep -E "^(NVIDIA|variant|step:|note)" "$D/trace.log"
    [ -e "$D/trace/picture.json" ] && python3 benchmarks/step_model.py "$D/trace/picture.json" | tee "$D/model.md"
    rm -f "$D"/trace/records_v*.npz ;;
  fold)
    NF=${N%\}}', "fl": 3}'; NW=${N%\}}', "fl": 11}'
    timeout ${FOLD_TIMEOUT:-110} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 3 --reps 4 \
      --variants "[{}, $N, $NF, $NW, $NW, $NF, $N, {}]" --out "$D/fold" > "$D/fold.log" 2>&1
    echo "heng decode_ab fold (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/fold.log" | cut -c1-200; summ "$D/fold" ;;
  kern)
    R='{"rs": 0}'; K='{"kb": 0}'; T='{"tw": 0}'; B='{"sbt": 64}'
    timeout ${KERN_TIMEOUT:-120} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 3 --reps 4 \
      --variants "[{}, $R, $K, $T, $B, $B, $T, $K, $R, {}]" --out "$D/kern" > "$D/kern.log" 2>&1
    echo "heng decode_ab kern (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/kern.log" | cut -c1-200; summ "$D/kern" ;;
  more)
    timeout ${MORE_TIMEOUT:-90} python3 benchmarks/decode_ab.py --model 4b --contexts 8192 --rounds 3 --reps 4 \
      --variants "[{}, $N, $N, {}]" --out "$D/more" > "$D/more.log" 2>&1
    echo "heng decode_ab 8,192 (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/more.log"; summ "$D/more"
    timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -p no:cacheprovider -m gpu tests/llm/test_engine_gpu.py \
      -k "noearly or short_form_key_tile" > "$D/tests.log" 2>&1
    echo "heng gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR" "$D/tests.log" | head -4 ;;
  small)
    for m in 0.6b 8b; do
      timeout ${SMALL_TIMEOUT:-45} python3 benchmarks/decode_ab.py --model $m --contexts 1024 --rounds 3 --reps 4 \
        --variants "[{}, $N, $N, {}]" --out "$D/ab_$m" > "$D/ab_$m.log" 2>&1
      echo "heng decode_ab $m (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab_$m.log"; summ "$D/ab_$m"
    done ;;
  table)
    timeout ${TABLE_TIMEOUT:-250} python3 benchmarks/decode.py --issue17 --eager-tokens 4 \
      --out "$D/table" > "$D/table.log" 2>&1
    echo "heng decode.py --issue17 (rc $?, $(el) s):"; grep -E "^NVIDIA|ctx|prefill|: [0-9.]+ s \(all" "$D/table.log" | cut -c1-260
    if [ -n "${NOEARLY:-}" ] && [ $(el) -lt 200 ]; then
      TILEC_DECODE_PLAN=noearly timeout 60 python3 benchmarks/decode.py --models 4b --contexts 1024 --tokens 128 \
        --eager-tokens 4 --no-reference --out "$D/table_noearly" > "$D/table_noearly.log" 2>&1
      echo "heng decode.py 4B noearly (rc $?, $(el) s):"; grep -E "ctx" "$D/table_noearly.log" | cut -c1-200
    fi ;;
  *)
    V=${V:-"[{}, $N, $NG, $L, $G, $GL, $M, $M, $GL, $G, $L, $NG, $N, {}]"}
    timeout ${AB_TIMEOUT:-175} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 3 --reps 4 \
      --variants "$V" --out "$D/ab" > "$D/ab.log" 2>&1
    echo "heng decode_ab 1,024 (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab.log" | cut -c1-200; summ "$D/ab" ;;
esac
pack; echo "heng done ($(el) s): $OUT/heng.tgz"
