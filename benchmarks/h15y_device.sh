#!/usr/bin/env bash
# Issue 15 prefill, h15y (2026-12-06 04:40-07:40, written before any run): the D = 64 S = 1,024 rows (every D = 64
# launch with S_k <= 1,024 runs the chained short keys' variant). On this branch `TILEC_ATTN_CHAIN_TAIL` is on by
# default (call 4, 2026-12-06 04:42, H100: T +2.7..+4.6 % on the causal rows, +0..+0.5 % full). Arms, each its own
# process (`benchmarks/attention.py --throwaway`: the first row timed once more and dropped, so the first measured
# row is not a cold one), mirrored A E C O O C E A:
#   A  the default (the tail's walk B on: the promoted T)
#   E  TILEC_ATTN_CHAIN_EPI2=1: a chained tile runs the previous tile's epilogue in its second key iteration, between
#      the issue of S(1) + P V(0) and the wait for S(1), not in its first after the pending P V's wait (a tile of one
#      key block keeps it in the first). ptxas 13.0: key loops 654-655 SASS instructions against 647, 104 B of spill
#      stores at a tile's start (the walk's scalars), none in a key loop.
#   C  TILEC_ATTN_CHAIN_SPLIT=1 with the tail on: two variants (the full launch runs the split's, the causal one the
#      tail's): C over A is the split's on the full rows; the causal rows run the same kernel as A's
#   O  TILEC_ATTN_CHAIN_TAIL=0: the old default (T's A/B again, in this order)
# EXPECTED (RESULTS.md "h15y", written before any run; ratios of Tile's TFLOP/s, the mean of an arm's 2 processes):
#   E/A: full rows +0.5..+2 % (h15x's stamps model said +1.5..+3 % for the epilogue's ~400 issue cycles under S(1);
#        less the 7-8 instructions a key block more (~1 % of a block's issue) and the tile-start spills), causal rows
#        +1..+4 % (shorter tiles: the boundary a larger share). If E loses on the full rows, the loop's 1 % and the
#        spills cost more than the hidden epilogue gives: the S(1) wait was not idle issue time after all.
#   C/A: full rows -0.5..+1 % (call 4: +0..+0.5 %); causal rows within +-0.5 % (the same kernel as A: the tail's).
#   O/A: causal rows -2.5..-4.5 % (T's gain, call 4), full rows within +-0.5 %.
# First the GPU tests of E (test_attention_epi2: 4 small launches against SDPA and the LSE, three launches the same
# bits; the benchmark's launch full and causal on every SM, no tile never stored or wrong; the default's kernels are
# call 4's T kernels, PTX identical by sha256, whose tests passed there; every bench row checks its error < 1e-2),
# last compute-sanitizer racecheck on attention_sanitize.py under E (2 CTAs): 0 hazards.
# One device step, ~140 s on a warm H100 with 16 cores (<= ~150 s by the step timeouts and the el guards).
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/h15y_device.sh          (REPS, BENCH_TIMEOUT, TEST_TIMEOUT, PREWARM_TIMEOUT, SAN_TIMEOUT adjust)
#   STEP=stamps bash benchmarks/h15y_device.sh   (~70 s, a second step if E's rows need reading: the cycle stamps
#     of A and E, f16 D = 64 full and causal S = 1,024, benchmarks/probes/attention_stamps.py. Expected: E's "first
#     block" slot (here the two peeled iterations, the stamp after both) about one key block (~1,980 cycles) longer
#     than A's, its tile total 200-500 cycles shorter; if the total is not shorter, the epilogue did not hide)
#   STEP=fine bash benchmarks/h15y_device.sh     (~70 s: the same with TILEC_ATTN_STAMPS=2, stamps inside the chained
#     first iteration too: where A's ~1,560 boundary cycles go (RESULTS.md "h15y"). Expected (rough), wg0 of the
#     full row: f_stage0_wait < 100 (the producer runs stages ahead), f_issue < 100, f_s0_wait 300-600 (S(0) and
#     the pending P V: both warpgroups' products on the tensor cores), f_softmax_spin 700-1,100 (a block's softmax),
#     f_prev_pv_wait < 300, f_prev_epilogue 300-700, f_rest 200-400; their sum (first_block) ~3,550. The phase
#     far above its expectation is where the boundary goes)
# Prints one line a step and the table rows (| dtype D ... |); writes $OUT/h15y.tgz ($OUT/h15y_stamps.tgz).
set -uo pipefail
NAME=h15y${STEP:+_$STEP}; . benchmarks/attention_arms.sh  # (STEP=stamps: $OUT/h15y_stamps.tgz, not the main step's)
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    E) echo "TILEC_ATTN_CHAIN_EPI2=1" ;;
    C) echo "TILEC_ATTN_CHAIN_SPLIT=1" ;;
    O) echo "TILEC_ATTN_CHAIN_TAIL=0" ;;
  esac
}
pj=$(( $(nproc) / 4 > 0 ? $(nproc) / 4 : 1 ))
if [ "${STEP:-}" = stamps ] || [ "${STEP:-}" = fine ]; then
  lv=1; [ "$STEP" = fine ] && lv=2  # (fine: the stamps inside the chained first iteration too)
  for x in A E; do
    env TILEC_ATTN_STAMPS=$lv $(arm $x) timeout ${PREWARM_TIMEOUT:-40} python3 benchmarks/attention_prewarm.py \
      --bench-rows f16-64 --jobs $(( pj * 2 )) "${cubin[@]}" > "$D/prewarm_stamps_$x.log" 2>&1 &
  done
  wait
  for x in A E; do
    if [ "$(el)" -le 75 ]; then
      env TILEC_ATTN_STAMPS=$lv $(arm $x) timeout ${STAMPS_TIMEOUT:-15} python3 benchmarks/probes/attention_stamps.py \
        --reps 3 --rows f16-64-full-1024,f16-64-causal-1024 --out "$D/stamps$x" > "$D/stamps$x.log" 2>&1
      r=$?  # (before the echo's $(name ..), which would set $? to its own 0)
      echo "h15y stamps ($lv), arm $x ($(name $x)) (rc $r, $(el) s):"; grep -E "^\S+: stamped|^  (wg|producer)" "$D/stamps$x.log"
    else echo "h15y stamps $x skipped ($(el) s)"; fi
  done
  pack
  exit 0
fi
for x in A E C O; do  # the bench rows (the timing needs them); E: the tests' and the sanitizer's launches too
  ( env $(arm $x) timeout ${PREWARM_TIMEOUT:-45} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64 \
      --jobs "$pj" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1
    if [ $x = E ]; then
      env $(arm $x) timeout $(( ${PREWARM_TIMEOUT:-45} - $(el) > 1 ? ${PREWARM_TIMEOUT:-45} - $(el) : 1 )) \
        python3 benchmarks/attention_prewarm.py --only prefill --jobs "$pj" "${cubin[@]}" >> "$D/prewarm_$x.log" 2>&1
    fi ) &
done
timeout ${TEST_TIMEOUT:-50} python3 -m pytest -q -p no:cacheprovider -m gpu -n 4 tests/backend/test_attention_epi2.py \
  > "$D/tests.log" 2>&1
rc=$?
echo "h15y gpu tests (rc $rc, $(el) s): $(tail -1 "$D/tests.log")"
grep -E "^FAILED|^ERROR|never stored" "$D/tests.log" | head -8
wait
for x in A E C O; do echo "h15y prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
if [ $rc -eq 0 ] && grep -qE "[0-9]+ passed" "$D/tests.log" && ! grep -qE "[0-9]+ (failed|error)" "$D/tests.log"; then
  i=0
  for x in A E C O O C E A; do
    i=$((i + 1))
    if [ "$(el)" -le 122 ]; then bench $x "$i$x" ${BENCH_TIMEOUT:-11} --only f16-64,bf16-64 --seqs 1024 --throwaway
    else echo "h15y bench $i$x skipped ($(el) s)"; fi
  done
else
  echo "h15y: a GPU test failed (or did not finish): no timing of the switches"
fi
if [ "$(el)" -le 134 ]; then
  env $(arm E) TILEC_PERSISTENT_SMS=2 timeout ${SAN_TIMEOUT:-15} compute-sanitizer --tool racecheck --print-limit 10 \
    python3 benchmarks/attention_sanitize.py gpu > "$D/sanitizer_racecheck_E.log" 2>&1
  r=$?
  echo "h15y racecheck under $(name E) (rc $r, $(el) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' \
    "$D/sanitizer_racecheck_E.log" | tail -1)"
else echo "h15y racecheck under $(name E) skipped ($(el) s)"; fi
python3 benchmarks/attention_ab.py "$D" --base A || true
pack
