#!/usr/bin/env bash
# Issue 15 prefill, h15w (2026-12-05, written with no device time): the chained walk rotated across the
# tile boundary (`TILEC_ATTN_XROT=1`, passes/attention_xrot.py; opt-in, Q double-buffered with it): is it
# right at the benchmark's scale, and does hiding the next tile's first S under this tile's last softmax
# move the S = 1,024 D = 64 rows? Expectations are written in RESULTS.md ("h15w") before any run. Default
# kernels: main's (PTX of the std prefill kernels byte-identical, hashed). XROT applies where two Q tiles
# and the ring fit in shared memory (D = 64 at 128 x 128) in the chained short keys' variant (D = 64, S_k
# <= 1,024): the D = 128 rows (f16 D = 128 S = 4,096 included) compile as without it, so they are not timed.
# One device step, ~100 s on a warm H100/H200 with 16 cores, <= ~125 s by its step timeouts and guards
# (benches start only before 104 s, the stamps before 106 s).
# From the repo root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. prewarm (attention_prewarm.py, cubins too) of A (the default) and X (TILEC_ATTN_XROT=1) on f16-64 and
#      bf16-64, and beside it, under TILEC_ATTN_XROT=1, test_attention_xrot's benchmark-scale GPU cases
#      (512 x 1024 x 64, every SM, output preset to NaN, full and causal; <= 30 s), then every other
#      attention GPU test (tests/std + tests/backend -m gpu -k attention, -n 6; <= 40 s)          <= 70 s
#   2. only where the scale cases passed and no other failed: A X X A on f16-64, bf16-64 at S = 1024
#      (full and causal)                                                                          <= 4 x 11 s
#   3. the stamps of X (f16 D = 64 full and causal S = 1024)                                          <= 14 s
#   (where step 1 failed instead: benchmarks/probes/qdouble_check.py --var TILEC_ATTN_XROT, the bad tiles'
#   places in the walk on every SM and on 8 CTAs                                                      <= 30 s)
# usage on the device machine, from the checkout's root:  bash benchmarks/h15w_device.sh
# Prints one line a step, the table rows (| dtype D ... |) and the stamps; writes $OUT/h15w.tgz.
set -uo pipefail
NAME=h15w; . benchmarks/attention_arms.sh
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    X) echo "TILEC_ATTN_XROT=1" ;;
    S) echo "TILEC_ATTN_STAMPS=1 TILEC_ATTN_XROT=1" ;;
  esac
}
for x in A X; do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-40} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64 \
    --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
# the benchmark's scale first (its two cases must pass), then every other attention GPU test under the switch
# (a failure stops the timing; running out of time there does not)
TILEC_ATTN_XROT=1 timeout ${SCALE_TIMEOUT:-30} python3 -m pytest -q -p no:cacheprovider -m gpu -n 2 \
  tests/backend/test_attention_xrot.py > "$D/scale.log" 2>&1
rc=$?
echo "h15w benchmark-scale tests under TILEC_ATTN_XROT=1 (rc $rc, $(el) s): $(tail -1 "$D/scale.log")"
grep -E "^FAILED|^ERROR|never stored" "$D/scale.log" | head -4
TILEC_ATTN_XROT=1 timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 tests/std tests/backend \
  -k "attention and not xrot" > "$D/tests.log" 2>&1
echo "h15w gpu tests under TILEC_ATTN_XROT=1 (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
grep -E "^FAILED|^ERROR" "$D/tests.log" | head -8
wait
for x in A X; do echo "h15w prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
if [ $rc -eq 0 ] && grep -qE "2 passed" "$D/scale.log" && ! grep -qE "[0-9]+ (failed|error)" "$D/tests.log"; then
  i=0
  for x in A X X A; do
    i=$((i + 1))
    if [ "$(el)" -le 104 ]; then bench $x "$i$x" ${BENCH_TIMEOUT:-11} --only f16-64,bf16-64 --seqs 1024; else echo "h15w bench $i$x skipped ($(el) s)"; fi
  done
  if [ "$(el)" -le 106 ]; then
    env $(arm S) timeout ${STAMPS_TIMEOUT:-14} python3 benchmarks/probes/attention_stamps.py --reps 3 \
      --rows f16-64-full-1024,f16-64-causal-1024 --out "$D/stampsS" > "$D/stampsS.log" 2>&1
    echo "h15w stamps, arm S ($(name S)) (rc $?, $(el) s):"; grep -E "^\S+: stamped|^  (wg|producer)" "$D/stampsS.log"
  else echo "h15w stamps skipped ($(el) s)"; fi
else
  echo "h15w: a GPU test failed under TILEC_ATTN_XROT=1 (or the run did not finish): no timing of it; where:"
  timeout ${PROBE_TIMEOUT:-30} python3 benchmarks/probes/qdouble_check.py --var TILEC_ATTN_XROT --sms 0,8 --sms0 "" \
    > "$D/probe.log" 2>&1
  echo "h15w qdouble_check --var TILEC_ATTN_XROT (rc $?, $(el) s):"; cat "$D/probe.log"
fi
pack
