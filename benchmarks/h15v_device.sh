#!/usr/bin/env bash
# Issue 15 prefill, h15v (2026-12-05, written with no device time): is Q double-buffering
# (`TILEC_ATTN_QDOUBLE=1`, `attention_tiles.q_slots`) right at the benchmark's scale? h15u's stagger, which
# switched it on in the chained short keys' variant, gave err 6.0 (full) / 1.1 (causal) at D = 64 S = 1024 on
# 132 CTAs (RESULTS.md, 2026-12-05 13:20), while the CPU (llsim, also with a perturbed schedule) and four small
# GPU launches were right; the stagger is gone, QDOUBLE stays opt-in and is what a cross-tile rotation of the
# walk would need (RESULTS.md, "h15v"). Expectations are written there before any run. Default kernels: main's.
# One device step, ~100 s on a warm H100/H200 with 16 cores, <= ~150 s by its step timeouts and budget guards.
# From the repo root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. prewarm (attention_prewarm.py, cubins too) of A (the default) and Q (TILEC_ATTN_QDOUBLE=1) on f16-64 and
#      bf16-64, and beside it the attention GPU tests (tests/std + tests/backend -m gpu -k attention, -n 6;
#      incl. test_attention_qdouble's new case at the benchmark's scale: 512 x 1024 x 64, 132 CTAs)  <= 50 s
#   2. benchmarks/probes/qdouble_check.py: QDOUBLE 1 then 0, full and causal, on every SM, 66 and 8 CTAs:
#      tiles never stored (NaN) / stored wrong, and where they sit in the walk (CTA, ordinal, CTA's count) <= 30 s
#   3. only where step 2 found every tile right with QDOUBLE=1: A Q Q A on f16-64, bf16-64 at S = 1024
#      (full and causal), and the stamps of Q (f16 D = 64 full and causal S = 1024)                    <= 4 x 11 + 14 s
# usage on the device machine, from the checkout's root:  bash benchmarks/h15v_device.sh
# Prints one line a step, the probe's lines, the table rows (| dtype D ... |) and the stamps; writes $OUT/h15v.tgz.
set -uo pipefail
NAME=h15v; . benchmarks/attention_arms.sh
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    Q) echo "TILEC_ATTN_QDOUBLE=1" ;;
    S) echo "TILEC_ATTN_STAMPS=1 TILEC_ATTN_QDOUBLE=1" ;;
  esac
}
for x in A Q; do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-40} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64 \
    --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
timeout ${TEST_TIMEOUT:-50} python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 tests/std tests/backend -k attention \
  > "$D/tests.log" 2>&1
echo "h15v gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR" "$D/tests.log" | head -8
grep -E "never stored|benchmarks_scale" "$D/tests.log" | head -8
wait
for x in A Q; do echo "h15v prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
timeout ${PROBE_TIMEOUT:-30} python3 benchmarks/probes/qdouble_check.py > "$D/probe.log" 2>&1
echo "h15v qdouble_check (rc $?, $(el) s):"; cat "$D/probe.log"
if grep -qE "^qdouble=1 .*: .* 0 tiles never stored, 0 stored wrong" "$D/probe.log" \
   && ! grep -qE "^qdouble=1 .*: .* ([1-9][0-9]* tiles never stored|[1-9][0-9]* stored wrong)" "$D/probe.log"; then
  i=0
  for x in A Q Q A; do
    i=$((i + 1))
    if [ "$(el)" -le 125 ]; then bench $x "$i$x" ${BENCH_TIMEOUT:-11} --only f16-64,bf16-64 --seqs 1024; else echo "h15v bench $i$x skipped ($(el) s)"; fi
  done
  if [ "$(el)" -le 134 ]; then
    env $(arm S) timeout ${STAMPS_TIMEOUT:-14} python3 benchmarks/probes/attention_stamps.py --reps 3 \
      --rows f16-64-full-1024,f16-64-causal-1024 --out "$D/stampsS" > "$D/stampsS.log" 2>&1
    echo "h15v stamps, arm S ($(name S)) (rc $?, $(el) s):"; grep -E "^\S+: stamped|^  (wg|producer)" "$D/stampsS.log"
  else echo "h15v stamps skipped ($(el) s)"; fi
else
  echo "h15v: QDOUBLE=1 not right everywhere (or the probe failed): no timing of it"
fi
pack
