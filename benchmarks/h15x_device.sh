#!/usr/bin/env bash
# Issue 15 prefill, h15x (2026-12-06, written with no device time): the D = 64 S = 1,024 rows, which every run in
# the chained short keys' variant (every D = 64 launch with S_k <= 1,024). Two opt-in switches of
# passes/attention_csplit.py, each a second walk after the chained one (walk A, whose key loop and tile code are
# the variant's), timed against the default in one run:
#   C  TILEC_ATTN_CHAIN_SPLIT=1: walk B the split last round's pieces (a full launch at 16k tokens is 4,096 tiles,
#      31 rounds on 132 CTAs and 4 tiles left, cut into 8 pieces of one key block each): the full rows.
#   T  TILEC_ATTN_CHAIN_TAIL=1: walk B the causal walk's last 2 item rounds as single tiles heaviest first,
#      chained on from walk A (2,048 pairs on 132 CTAs: 15.5 rounds run as 16): the causal rows.
#   G  ATTN_DATA=bf16grid: the default on bf16-valued inputs: whether f16's causal deficit against bf16 is the data's.
# Expectations are written in benchmarks/RESULTS.md ("h15x") before any run. Default kernels: main's (PTX of the
# 16 std prefill kernels byte-identical, hashed); with either switch only the four D = 64 short variants change, so
# the D = 128 and S >= 4,096 rows are not timed.
# One device step, ~135 s on a warm H100/H200 with 16 cores, <= ~150 s by its step timeouts and guards.
# From the repo root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. prewarm (attention_prewarm.py, cubins too): the bench rows (f16-64, bf16-64) under A, C and T, then every
#      prefill launch of the tests and of attention_sanitize.py under C and T; beside it the GPU tests: test_attention_csplit's
#      (each sets its switch: 4 small launches under C and 2 causal ones under T against SDPA and the
#      log-sum-exp, three launches each with the same bits; the benchmark's launch on every SM, output preset to
#      NaN, full and causal under C, causal under T, both under C and T: the runtime picks the split's variant for
#      the full launch and the tail's for the causal one) and std's prefill tests on 3 CTAs under C      <= 50 s
#   2. only where those passed: A C T T C A on f16-64, bf16-64 at S = 1024 (full and causal)          <= 6 x 10 s
#   3. G once, the causal S = 1024 rows                                                                  <= 8 s
#   4. compute-sanitizer racecheck of attention_sanitize.py on 2 CTAs under C (its D = 64 S_k <= 1,024 cases:
#      5 tiles, the last in 2 pieces; 15 tiles of 64 rows, the last in pieces) and under T (its causal D = 64
#      cases: 8 pairs on 2 CTAs, a tail of 4 pairs; 2 pairs, all tail), then memcheck under C           <= 3 x 15 s
# usage on the device machine, from the checkout's root:  bash benchmarks/h15x_device.sh
# Prints one line a step and the table rows (| dtype D ... |); writes $OUT/h15x.tgz.
set -uo pipefail
NAME=h15x; . benchmarks/attention_arms.sh
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    C) echo "TILEC_ATTN_CHAIN_SPLIT=1" ;;
    T) echo "TILEC_ATTN_CHAIN_TAIL=1" ;;
    G) echo "ATTN_DATA=bf16grid" ;;
  esac
}
pj=$(( $(nproc) / 4 > 0 ? $(nproc) / 4 : 1 ))
timeout ${PREWARM_TIMEOUT:-45} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64 --jobs "$pj" \
  "${cubin[@]}" > "$D/prewarm_A.log" 2>&1 &
for x in C T; do  # the bench rows first (the timing needs them), then the tests' and the sanitizer's launches
  ( env $(arm $x) timeout ${PREWARM_TIMEOUT:-45} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64 \
      --jobs "$pj" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1
    env $(arm $x) timeout $(( ${PREWARM_TIMEOUT:-45} - $(el) > 1 ? ${PREWARM_TIMEOUT:-45} - $(el) : 1 )) \
      python3 benchmarks/attention_prewarm.py --only prefill --jobs "$pj" "${cubin[@]}" >> "$D/prewarm_$x.log" 2>&1 ) &
done
TILEC_ATTN_CHAIN_SPLIT=1 TILEC_PERSISTENT_SMS=3 timeout ${TEST_TIMEOUT:-50} python3 -m pytest -q -p no:cacheprovider \
  -m gpu -n 4 tests/backend/test_attention_csplit.py tests/std/test_attention_gpu.py \
  -k "chained_split or chained_tail or both_switches or flash_attention_matches_sdpa" > "$D/tests.log" 2>&1
rc=$?
echo "h15x gpu tests (rc $rc, $(el) s): $(tail -1 "$D/tests.log")"
grep -E "^FAILED|^ERROR|never stored" "$D/tests.log" | head -8
wait
for x in A C T; do echo "h15x prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
if [ $rc -eq 0 ] && grep -qE "[0-9]+ passed" "$D/tests.log" && ! grep -qE "[0-9]+ (failed|error)" "$D/tests.log"; then
  i=0
  for x in A C T T C A; do
    i=$((i + 1))
    if [ "$(el)" -le 112 ]; then bench $x "$i$x" ${BENCH_TIMEOUT:-10} --only f16-64,bf16-64 --seqs 1024
    else echo "h15x bench $i$x skipped ($(el) s)"; fi
  done
else
  echo "h15x: a GPU test failed (or did not finish): no timing of the switches"
fi
if [ "$(el)" -le 118 ]; then bench G 7G ${BENCH_TIMEOUT:-8} --only f16-64,bf16-64 --seqs 1024 --causal-only
else echo "h15x bench 7G skipped ($(el) s)"; fi
for run in "racecheck C" "racecheck T" "memcheck C"; do
  set -- $run
  if [ "$(el)" -le 130 ]; then
    env $(arm $2) TILEC_PERSISTENT_SMS=2 timeout ${SAN_TIMEOUT:-15} compute-sanitizer --tool $1 --print-limit 10 \
      python3 benchmarks/attention_sanitize.py gpu > "$D/sanitizer_$1_$2.log" 2>&1
    r=$?
    echo "h15x $1 under $(name $2) (rc $r, $(el) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' \
      "$D/sanitizer_$1_$2.log" | tail -1)"
  else echo "h15x $1 under $(name $2) skipped ($(el) s)"; fi
done
pack
