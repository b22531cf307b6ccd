#!/usr/bin/env bash
# Call B (see README.md here): engine tables + the opt-in A/Bs (split forms, tail, LDG_EARLY, L2_EVICT).
. benchmarks/device_calls/preamble.sh
s() { echo "===== $1 ($((SECONDS-t0)) s)"; }
s "engine tables"
timeout 170 python3 benchmarks/decode.py --models 4b --contexts 1024,8192,32768 --tokens 32 --eager-tokens 4 --prefill 2048 --out $OUT/engine > $OUT/engine.log 2>&1
echo "decode.py rc=$?"; tail -22 $OUT/engine.log
s "split forms A/B"
OUT=$OUT DEFAULT_TESTS=0 AB_VAR=TILEC_ATTN_SPLIT_FORMS AB=2 AB_ROWS="f16-128 f16-64" REPS=5 BENCH_TIMEOUT=25 PREWARM_TIMEOUT=30 \
  MEMCHECK_TIMEOUT=1 RACECHECK_TIMEOUT=1 timeout 150 bash benchmarks/attention_prefill_device.sh 2>&1 | grep -v "memcheck\|racecheck" | tail -45
if [ -f benchmarks/h15s_device.sh ]; then s "h15s tail"; timeout 140 bash benchmarks/h15s_device.sh 2>&1 | tail -40; fi
s "LDG_EARLY A/B decode rows"
for r in 1 2; do for v in 0 1; do
  TILEC_LDG_EARLY=$v timeout 30 python3 benchmarks/attention.py --decode-only --reps 5 --out /tmp/ldg$r$v > /tmp/ldg$r$v.log 2>&1
  echo "LDG_EARLY=$v round $r rc=$?"; grep -E "^\| " /tmp/ldg$r$v.log | awk '!s[$0]++' | head -9
done; done
s "L2_EVICT=1 engine"
TILEC_L2_EVICT=1 timeout 60 python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 3 --reps 6 --variants '[{}]' > $OUT/evict.log 2>&1; echo rc=$?
tail -6 $OUT/evict.log
echo "total $((SECONDS-t0)) s"
