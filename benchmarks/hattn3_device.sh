#!/usr/bin/env bash
# Issue 15 prefill, hattn3 (2026-12-06 15:20-18:20, written before any run): f16 / bf16 D = 128 non-causal S = 4,096
# (target >= 700 TFLOP/s; call 19, H100: 673 / 693, against 701 / 725 at S = 16,384). Arms, each its own process
# (`benchmarks/attention.py --throwaway`), mirrored A R Q Q R A:
#   A  the default (the long keys' kernel: rotated, unchained; the producer warp at 40 registers, the two consumer
#      warpgroups at 232)
#   R  TILEC_ATTN_PRODUCER_REGS=24: FlashAttention-3's register budget, the producer at 24 and the consumers at 240
#      (setmaxnreg). ptxas 13.0: 0 B of spills either way; the key loop 686 -> 682 SASS instructions, scheduled
#      differently (the two kernels' SASS differ throughout)
#   Q  TILEC_ATTN_QEARLY=1 TILEC_ATTN_FASTDIV=1: the short keys' variant's tile boundary (Q released in the last
#      key iteration, the walk's divisions as multiplies) in the long keys' kernel; its PTX is the S = 1,024
#      variant's (sha 'df5ba3fd'); the H200 measured +0.3 % at S = 4,096 once (RESULTS.md, h15p call 2)
# EXPECTED (RESULTS.md "hattn3", written before any run; ratio of Tile's TFLOP/s, mean of an arm's 2 processes):
#   The model: on every row 2,048 tiles of 128 x 128 over 132 CTAs (15.5 rounds run as 16: 3.1 % of the card idle
#   in the last round at every S), and a tile costs (n + ~1.8) key blocks' time for n key blocks (S = 1,024 / 4,096 /
#   16,384: n = 8 / 32 / 128; the three f16 numbers 581 / 673 / 701 fit it within 0.3 %). So 700 at S = 4,096
#   needs the tile's ~1.8 blocks of overhead down to ~0.5, or the key block 4 % faster at every S.
#   R/A: -1..+1.5 % on every row (the same ops; more registers let ptxas keep the loop's scheduling freer; at
#        S = 16,384 the same ratio as at 4,096 if the gain is the loop's). If R >= +1 % on both dtypes and both
#        processes, it should become the default at two consumer warpgroups where the producer fits 24 (the
#        D = 64 chained short variant does not: 48 B of producer spills).
#   Q/A: -0.5..+0.5 % (the H200's +0.3 %; the fast walk lost 0.4-2.2 % on long rows there, QEARLY's arrive costs
#        a key block ~1 %, the tile boundary gains ~0.3 block of ~33.8).
#   Errors: every row below 1e-2 (the same kernels' numerics: only registers and the boundary's order differ).
# First the prefill GPU tests under R and Q together (test_flash_attention_matches_sdpa's 5 D = 128 cases: GQA, causal,
# ragged S, S_k 1,100 on the long keys' kernel; on 3 CTAs so that every CTA walks several tiles), then the benches.
# One device step, ~110 s on a warm H100 with 16 cores (step timeouts and `el` guards keep it <= ~120 s).
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hattn3_device.sh        (REPS, BENCH_TIMEOUT, TEST_TIMEOUT, PREWARM_TIMEOUT adjust)
#   STEP=more bash benchmarks/hattn3_device.sh     (~90 s, after call 22: A Q P P Q A, P = R and Q together, f16 and
#     bf16 D = 128 full at S = 4,096 and 16,384. Expected (RESULTS.md "hattn3 measured": call 22's R and Q read
#     +0.8..+1.9 % over two slow A processes, at the default's own table number, so not shown): Q/A and P/A in Tile /
#     SDPA within +-1.5 % at 4,096, -1..+1 % at 16,384 (the H200 of h15p measured the fast walk -0.4..-2.2 % on long
#     rows). Only if Q (or P) moves Tile / SDPA by more than the A runs' spread on both dtypes and 16,384 does not
#     lose does it become the long keys' D = 128 default.
#   STEP=stamps bash benchmarks/hattn3_device.sh   (~60 s, a second step: the cycle stamps of A and R, f16 D = 128
#     full S = 4,096 and 16,384, benchmarks/probes/attention_stamps.py; writes $OUT/hattn3_stamps.tgz). Expected
#     (RESULTS.md "hattn3"'s model, c = 1.80 blocks a tile): a key block ~2,900-3,000 cycles at both S (the loop's
#     cycles over its blocks); the tile's cycles outside the key loop (walk + Q wait + the first block's excess over
#     a loop block + last P V + epilogue) ~1.8 blocks at both S (~5,200-5,400 cycles; h15u's S = 1,024 stamps put
#     ~1.0 block after the loop); if it is ~1.8 blocks at 4,096 but less at 16,384, c is not a constant a tile and
#     the model's fit is luck. R's key block shorter than A's by its TFLOP/s gain, if any.
# Prints one line a step and the table rows (| dtype D ... |), then attention_ab.py's fold; writes $OUT/hattn3.tgz.
set -uo pipefail
NAME=hattn3${STEP:+_$STEP}; . benchmarks/attention_arms.sh  # (STEP=stamps: $OUT/hattn3_stamps.tgz)
unset TILEC_ATTN_PRODUCER_REGS TILEC_ATTN_QEARLY TILEC_ATTN_FASTDIV
export ATTN_TRITON=0  # (call 22: Triton's attention, tuned in the first process, cut run 1A at its 10 s)
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    R) echo "TILEC_ATTN_PRODUCER_REGS=24" ;;
    Q) echo "TILEC_ATTN_QEARLY=1 TILEC_ATTN_FASTDIV=1" ;;
    P) echo "TILEC_ATTN_PRODUCER_REGS=24 TILEC_ATTN_QEARLY=1 TILEC_ATTN_FASTDIV=1" ;;  # (the tests only)
  esac
}
pj=$(( $(nproc) / 4 > 0 ? $(nproc) / 4 : 1 ))
if [ "${STEP:-}" = more ]; then  # call 22's winners at S = 4,096 and 16,384: A Q P P Q A (no GPU tests: P's passed)
  for x in A Q P; do
    env $(arm $x) timeout ${PREWARM_TIMEOUT:-35} python3 benchmarks/attention_prewarm.py --bench-rows f16-128,bf16-128 \
      --jobs "$pj" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
  done
  wait
  i=0
  for x in A Q P P Q A; do
    i=$((i + 1))
    if [ "$(el)" -le 100 ]; then bench $x "$i$x" ${BENCH_TIMEOUT:-14} --only f16-128,bf16-128 --full-only \
      --seqs 4096,16384 --throwaway
    else echo "hattn3 bench $i$x skipped ($(el) s)"; fi
  done
  python3 benchmarks/attention_ab.py "$D" --base A || true
  pack
  exit 0
fi
if [ "${STEP:-}" = stamps ]; then
  for x in A R; do
    env TILEC_ATTN_STAMPS=1 $(arm $x) timeout ${PREWARM_TIMEOUT:-35} python3 benchmarks/attention_prewarm.py \
      --bench-rows f16-128 --jobs $(( pj * 2 )) "${cubin[@]}" > "$D/prewarm_stamps_$x.log" 2>&1 &
  done
  wait
  for x in A R; do
    if [ "$(el)" -le 90 ]; then
      env TILEC_ATTN_STAMPS=1 $(arm $x) timeout ${STAMPS_TIMEOUT:-20} python3 benchmarks/probes/attention_stamps.py \
        --reps 3 --rows f16-128-full-4096,f16-128-full-16384 --out "$D/stamps$x" > "$D/stamps$x.log" 2>&1
      r=$?  # (before the echo's $(name ..), which would set $? to its own 0)
      echo "hattn3 stamps, arm $x ($(name $x)) (rc $r, $(el) s):"; grep -E "^\S+: stamped|^  (wg|producer)" "$D/stamps$x.log"
    else echo "hattn3 stamps $x skipped ($(el) s)"; fi
  done
  pack
  exit 0
fi
for x in A R Q P; do  # the bench rows; P (R and Q): the tests' launches
  ( env $(arm $x) timeout ${PREWARM_TIMEOUT:-35} python3 benchmarks/attention_prewarm.py --bench-rows f16-128,bf16-128 \
      --jobs "$pj" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1
    if [ $x = P ]; then
      env $(arm $x) timeout $(( ${PREWARM_TIMEOUT:-35} - $(el) > 1 ? ${PREWARM_TIMEOUT:-35} - $(el) : 1 )) \
        python3 benchmarks/attention_prewarm.py --only prefill --jobs "$pj" "${cubin[@]}" >> "$D/prewarm_$x.log" 2>&1
    fi ) &
done
wait
for x in A R Q P; do echo "hattn3 prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
env $(arm P) TILEC_PERSISTENT_SMS=3 timeout ${TEST_TIMEOUT:-25} python3 -m pytest -q -p no:cacheprovider -m gpu -n 4 \
  tests/std/test_attention_gpu.py -k "flash_attention_matches_sdpa and 128" > "$D/tests.log" 2>&1
rc=$?
echo "hattn3 gpu tests under P (rc $rc, $(el) s): $(tail -1 "$D/tests.log")"
grep -E "^FAILED|^ERROR" "$D/tests.log" | head -8
if [ $rc -eq 0 ] && grep -qE "[0-9]+ passed" "$D/tests.log" && ! grep -qE "[0-9]+ (failed|error)" "$D/tests.log"; then
  i=0
  for x in A R Q Q R A; do
    i=$((i + 1))
    if [ "$(el)" -le 106 ]; then bench $x "$i$x" ${BENCH_TIMEOUT:-10} --only f16-128,bf16-128 --full-only --seqs 4096 \
      --throwaway
    else echo "hattn3 bench $i$x skipped ($(el) s)"; fi
  done
else
  echo "hattn3: a GPU test failed (or did not finish): no timing of the switches"
fi
python3 benchmarks/attention_ab.py "$D" --base A || true
pack
