#!/usr/bin/env bash
# Issue 15 prefill, h15x (2026-12-06, written with no device time): the chained short keys' variant with its
# last round split along the keys (`TILEC_ATTN_CHAIN_SPLIT=1`, passes/attention_csplit.py; opt-in), on the D = 64
# S = 1,024 rows (every D = 64 launch with S_k <= 1,024 runs that variant; at 16k tokens a full launch is 4,096
# tiles, 31 rounds on 132 CTAs and 4 tiles left, which the switch cuts into 8 pieces of one key block each);
# and whether f16's causal D = 64 S = 1,024 deficit against bf16 is the data's (`ATTN_DATA=bf16grid`).
# Expectations are written in benchmarks/RESULTS.md ("h15x") before any run. Default kernels: main's (PTX of the
# 16 std prefill kernels byte-identical, hashed); with the switch only the four D = 64 short variants change, so
# the D = 128 and S >= 4,096 rows are not timed.
# One device step, ~120 s on a warm H100/H200 with 16 cores, <= ~150 s by its step timeouts and guards
# (benches start only before 118 s, the sanitizers before 125 s).
# From the repo root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. prewarm (attention_prewarm.py, cubins too) of A (the default), C (TILEC_ATTN_CHAIN_SPLIT=1) and C4 (C with
#      at most 4 pieces a tile, TILEC_ATTN_SPLIT=4) on f16-64 and bf16-64, and beside it, under the switch,
#      test_attention_csplit's GPU cases (4 small launches on 2-3 CTAs against SDPA and the log-sum-exp, 3
#      launches each with the same bits; the benchmark's launch on every SM, output preset to NaN, full and
#      causal) and std's prefill GPU tests on 3 CTAs (TILEC_PERSISTENT_SMS=3: the last rounds split)     <= 45 s
#   2. only where those passed: A C C A on f16-64, bf16-64 at S = 1024 (full and causal)             <= 4 x 11 s
#   3. G: the default on bf16-valued inputs (ATTN_DATA=bf16grid), the causal S = 1024 rows           <= 9 s
#   4. C4 once, the full S = 1024 rows (8 pieces of 1 block against 4 of 2: the merge's share)         <= 9 s
#   5. compute-sanitizer racecheck, then memcheck, of benchmarks/attention_sanitize.py under the switch on 2
#      CTAs (its D = 64 cases with S_k <= 1,024 run the variant: 5 tiles, the last in 2 pieces; 15 tiles of
#      64 rows, the last in pieces)                                                                    <= 2 x 12 s
# usage on the device machine, from the checkout's root:  bash benchmarks/h15x_device.sh
# Prints one line a step and the table rows (| dtype D ... |); writes $OUT/h15x.tgz.
set -uo pipefail
NAME=h15x; . benchmarks/attention_arms.sh
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    C) echo "TILEC_ATTN_CHAIN_SPLIT=1" ;;
    C4) echo "TILEC_ATTN_CHAIN_SPLIT=1 TILEC_ATTN_SPLIT=4" ;;
    G) echo "ATTN_DATA=bf16grid" ;;
  esac
}
for x in A C C4; do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-40} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64 \
    --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
TILEC_ATTN_CHAIN_SPLIT=1 TILEC_PERSISTENT_SMS=3 timeout ${TEST_TIMEOUT:-45} python3 -m pytest -q -p no:cacheprovider \
  -m gpu -n 6 tests/backend/test_attention_csplit.py tests/std/test_attention_gpu.py -k "chained_split or flash_attention_matches_sdpa" \
  > "$D/tests.log" 2>&1
rc=$?
echo "h15x gpu tests under TILEC_ATTN_CHAIN_SPLIT=1 (rc $rc, $(el) s): $(tail -1 "$D/tests.log")"
grep -E "^FAILED|^ERROR|never stored" "$D/tests.log" | head -8
wait
for x in A C C4; do echo "h15x prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
if [ $rc -eq 0 ] && grep -qE "[0-9]+ passed" "$D/tests.log" && ! grep -qE "[0-9]+ (failed|error)" "$D/tests.log"; then
  i=0
  for x in A C C A; do
    i=$((i + 1))
    if [ "$(el)" -le 118 ]; then bench $x "$i$x" ${BENCH_TIMEOUT:-11} --only f16-64,bf16-64 --seqs 1024
    else echo "h15x bench $i$x skipped ($(el) s)"; fi
  done
  ok=1
else
  echo "h15x: a GPU test failed under TILEC_ATTN_CHAIN_SPLIT=1 (or did not finish): no timing of the switch"
  ok=0
fi
if [ "$(el)" -le 118 ]; then bench G 5G ${BENCH_TIMEOUT:-9} --only f16-64,bf16-64 --seqs 1024 --causal-only
else echo "h15x bench 5G skipped ($(el) s)"; fi
if [ $ok = 1 ] && [ "$(el)" -le 118 ]; then bench C4 6C4 ${BENCH_TIMEOUT:-9} --only f16-64,bf16-64 --seqs 1024 --full-only
else echo "h15x bench 6C4 skipped ($(el) s, ok $ok)"; fi
for tool in racecheck memcheck; do
  if [ "$(el)" -le 125 ]; then
    TILEC_ATTN_CHAIN_SPLIT=1 TILEC_PERSISTENT_SMS=2 timeout ${SAN_TIMEOUT:-12} compute-sanitizer --tool $tool \
      --print-limit 10 python3 benchmarks/attention_sanitize.py gpu > "$D/sanitizer_$tool.log" 2>&1
    echo "h15x $tool under TILEC_ATTN_CHAIN_SPLIT=1 (rc $?, $(el) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' \
      "$D/sanitizer_$tool.log" | tail -1)"
  else echo "h15x $tool skipped ($(el) s)"; fi
done
pack
