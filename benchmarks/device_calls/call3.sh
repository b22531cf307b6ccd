#!/usr/bin/env bash
# Session 2026-12-06 02:10-05:10, call 3 (~300 s warm): issue 17's two H100 winners of call X (h17p's A/B on
# main 695baa5, H100: `me` +0.49 %, `gl` gate_up with down peeled +0.60 % at 4B 1,024) together, at 1,024 and
# 8,192, and on 0.6B and 8B; GL3 (every GEMV -> GEMV boundary at the last iteration) once; the `Plan.gl` GPU test;
# the step trace of the default and the pair.
# Expected (written before the run): MEGL1 = me + GL1 +0.9..+1.1 % at 4B 1,024 (the sum of the two: they act at
# different boundaries, merge -> O and gate/up -> down), i.e. ~313.5 tok/s = 85.2 % of the H100's 368; at 8,192 the
# same microseconds a token (~0.85x the percentages); GL3 -1.5..+1.5 % (entry triggers at O/down won +0.4 % on the
# H100, so the last-iteration form there may lose). 0.6B: `me` lost 1.9 % (2026-12-05); GL1 +0..+1 % there and at 8B.
# Promotion rule: a variant becomes sm_90's default only where it wins at 4B 1,024 and 8,192 and loses nothing
# beyond the spread at 0.6B and 8B.
. benchmarks/device_calls/preamble.sh
ME='{"me": 1}'; GL1='{"gl": ["gate_up"], "st": {"down": -1}}'
MEGL1='{"me": 1, "gl": ["gate_up"], "st": {"down": -1}}'
GL3='{"ge": [], "gl": ["o", "gate_up", "down"], "st": {"down": -1}}'
V="[{}, $ME, $GL1, $MEGL1, $GL3, $GL3, $MEGL1, $GL1, $ME, {}]" AB_TIMEOUT=130 bash benchmarks/h17p_device.sh 2>&1 | tail -32
echo "===== small ($((SECONDS-t0)) s)"
for m in 0.6b 8b; do
  timeout 60 python3 benchmarks/decode_ab.py --model $m --contexts 1024 --rounds 3 --reps 4 \
    --variants "[{}, $MEGL1, $ME, $GL1, $GL1, $ME, $MEGL1, {}]" --out "$OUT/ab_$m" > "$OUT/ab_$m.log" 2>&1
  echo "decode_ab $m rc $?"; f=$(ls "$OUT"/ab_$m/ab_*.json 2>/dev/null | head -1); python3 benchmarks/ab_summary.py "${f:-$OUT/ab_$m.log}"
done
echo "===== tests ($((SECONDS-t0)) s)"; STEP=tests bash benchmarks/h17p_device.sh 2>&1 | tail -6
echo "===== trace ($((SECONDS-t0)) s)"; STEP=trace TRACE_TIMEOUT=100 TRACE_V="[{}, $MEGL1]" bash benchmarks/h17p_device.sh 2>&1 | tail -40
echo "total $((SECONDS-t0)) s"
