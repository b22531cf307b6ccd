#!/usr/bin/env bash
# The 2026-12-06 07:04 session's call on landing L1 (huser14's conversions rounded once, hcliff's one-stage
# attention ring and `acc + dot` fold, hrev15's check-time instances): the `-m gpu` suite, huser14's bit-exact
# conversion check, the prefill sanitizer step with room to finish (its memcheck hit an 8 s timeout in call 6).
# Expected (before the run): suite all green (hcliff: the tuned kernels' PTX unchanged); round_once PASS x4;
# memcheck 0 errors, racecheck 0 hazards.
. benchmarks/device_calls/preamble.sh
W=$OUT/c7; mkdir -p "$W"; pk() { tar -C "$OUT" -czf "$OUT/call7.tgz" c7; }
timeout ${T_SUITE:-150} python3 -m pytest -q -p no:cacheprovider -m gpu -n 14 --dist worksteal tests -k 'not constant_over_10000' \
  > "$W/suite.log" 2>&1
echo "suite rc=$? ($((SECONDS-t0)) s)"; grep -E "^FAILED|^ERROR|passed|failed" "$W/suite.log" | tail -20; pk
timeout 90 python3 -W ignore benchmarks/round_once_gpu.py > "$W/round_once.log" 2>&1
echo "round_once rc=$? ($((SECONDS-t0)) s)"; tail -8 "$W/round_once.log"; pk
for tool in memcheck racecheck; do
  TILEC_PERSISTENT_SMS=2 timeout ${T_SAN:-120} compute-sanitizer --tool $tool --print-limit 10 python3 benchmarks/attention_sanitize.py gpu \
    > "$W/san_$tool.log" 2>&1
  echo "prefill+decode $tool rc=$? ($((SECONDS-t0)) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/san_$tool.log" | tail -1)"; pk
done
echo "total $((SECONDS-t0)) s"
