#!/usr/bin/env bash
# Issue 15, hattn8 (2026-12-07 06:02 session, written before any run; CPU-only so far): S of the next key block
# issued before this block's softmax (`TILEC_ATTN_SAHEAD=1`, opt-in; the overlapped loop, `attention_loop.s_ahead`).
#
# The model (RESULTS.md, hattn8): at D = 64 a 128 x 128 key block costs ~1,980 cycles (H100 stamps, h15u) against
# ~1,024 of tensor work and ~1,056 of MUFU per SM sub-partition: the two consumer warpgroups issue together, wait
# together for their S (the tensor cores then run S alone, the MUFU idles), then run the softmax under P V. Ahead,
# S(j + 1) is issued before softmax(j) and runs under it beside P V(j - 1), so the wait for S leaves the period.
# The price: a second S tile live through the softmax (64 registers a thread at BN = 128); the loop runs two key
# blocks an iteration so that the two S tiles alternate between two register sets (`TILEC_ATTN_SAHEAD_UNROLL`, on
# with the switch; one block an iteration ptxas copied one into the other each block and spilled 196-452 B), and the
# producer keeps 24 registers (the consumers 240). At 128 x 128, D = 64 the default consumers already reach R188 of
# their 232 registers: ahead, ptxas 13.0 spills 44 B in the benchmark's split kernel and 28 B in the causal tail
# variant, all in the masked blocks' path (5 STL / 5 LDL there), and a block's SASS grows 641 -> 714, all of it in
# branches an unmasked block skips (the masked path, the lone last block's wait): an unmasked block's path is ~407
# instructions against the default's ~411 (nvdisasm); at 128 x 64 it is clean (0 B, 393 -> ~408).
# So this call measures two things:
#   1. 128 x 128 (the benchmark's blocks) A S S A: is the S wait worth more than what the registers cost? (D = 64
#      S = 1,024 launches the long keys' kernel under S: the short keys' variant is the chained rotated loop, which
#      the switch leaves; `attention_chain.make` asks for it only where the loop would be rotated.)
#   2. 128 x 64 (ATTN_BLOCKS=128x64, no spill either way) B T T B, f16 only: the S wait's worth per block where
#      registers allow it, i.e. the premise of the lever.
#   A  default (128 x 128)        S  TILEC_ATTN_SAHEAD=1 (128 x 128)
#   B  ATTN_BLOCKS=128x64          T  ATTN_BLOCKS=128x64 TILEC_ATTN_SAHEAD=1
# Rows (A, S): f16 / bf16 D = 64 full S = 1,024 and 4,096, f16 D = 128 full S = 1,024 and 4,096 (controls: no D = 128 kernel changes;
# its 128 x 128 loop is rotated and two S tiles would not fit, `AHEAD_HEADROOM`).
# EXPECTED (H100, before any run):
#   S/A at D = 64: S = 4,096 -5..+10 %, S = 1,024 -8..+8 % (the S wait is ~300-550 of a block's ~1,980 cycles by the
#     model, 15-28 %; against it the schedule ptxas makes with 240 registers and a loop of two blocks, and at
#     S = 1,024 the chained variant's +2..5 % given up; the producer's 24 registers: -1..+1 % at D = 64 in call 24,
#     with the fast walk). A gain >= 3 % on both dtypes would make the row >= 1.0x SDPA (0.97x now).
#   T/B at D = 64 (128 x 64): +5..+20 % if the premise holds (the same share of a 64-key block is the S wait, and
#     nothing spills); within the spread if the S wait is already hidden by the other warpgroup's softmax (then
#     the lever is closed: what remains is the per-warp softmax latency, not the order of issue). If T beats A
#     outright, 128 x 64 with S ahead is a candidate default at D = 64.
#   In TFLOP/s on an H100 (calls 32/33: A f16 D = 64 S = 1,024 417.6, bf16 420.0, S = 4,096 ~480 at 0.99-1.00x SDPA;
#     call 6's sweep: 128 x 64 at D = 64 S = 1,024 346): S f16 S = 1,024 ~385-450, S = 4,096 ~455-530; B ~340-350 at
#     S = 1,024, T ~360-415.
#   D = 128 control: 1.000 +- the spread in both pairs (the same PTX).
#   Errors below 1e-2 against SDPA in f32 in every arm (the GPU tests below check the switch at 128 x 64 and
#   128 x 128: GQA, keys not a multiple of the block, causal, bf16, three launches the same bits).
#
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hattn8_device.sh      (REPS, BENCH_TIMEOUT, PREWARM_TIMEOUT, TESTS=0, ARMS adjust; ~150-180 s warm)
# Prints the tests' summary, one line a step and the table rows, then attention_ab.py's fold; writes $OUT/hattn8.tgz.
#   STEP=stamps bash benchmarks/hattn8_device.sh   (a second step, ~60-80 s; $OUT/hattn8_stamps.tgz): the cycle stamps
#     of arms A S B T at f16 D = 64 full S = 4,096 (benchmarks/probes/attention_stamps.py: a key block's cycles, the
#     loop's over its blocks). Expected: A ~1,950-2,250 cycles a 128-key block (h15u: 1,982 in the chained
#     variant); S ~1,450-1,800 if the S wait leaves the period (with the stamps S spills 168 B, A 4 B: read S with care);
#     B ~1,100-1,250 a 64-key block, T 10-25 % under B. The premise is refuted if T is within ~3 % of B.
set -uo pipefail
NAME=hattn8${STEP:+_$STEP}; . benchmarks/attention_arms.sh
export ATTN_TRITON=0
unset TILEC_ATTN_SAHEAD ATTN_BLOCKS
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    S) echo "TILEC_ATTN_SAHEAD=1" ;;
    B) echo "ATTN_BLOCKS=128x64" ;;
    T) echo "ATTN_BLOCKS=128x64 TILEC_ATTN_SAHEAD=1" ;;
  esac
}
blocks() { case $1 in B|T) echo 128x64 ;; *) echo 128x128 ;; esac; }
if [ "${STEP:-}" = stamps ]; then
  for x in A S B T; do
    env TILEC_ATTN_STAMPS=1 $(arm $x) timeout ${PREWARM_TIMEOUT:-35} python3 benchmarks/attention_prewarm.py \
      --bench-rows f16-64 --bench-blocks "$(blocks $x)" --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_stamps_$x.log" 2>&1 &
  done
  wait
  for x in A S B T; do
    if [ "$(el)" -le 120 ]; then
      env TILEC_ATTN_STAMPS=1 $(arm $x) timeout ${STAMPS_TIMEOUT:-20} python3 benchmarks/probes/attention_stamps.py \
        --reps 3 --rows f16-64-full-4096 --out "$D/stamps$x" > "$D/stamps$x.log" 2>&1
      r=$?  # (before the echo's $(name ..), which would set $? to its own 0)
      echo "hattn8 stamps, arm $x ($(name $x)) (rc $r, $(el) s):"; grep -E "^\S+: stamped|^  (wg|producer)" "$D/stamps$x.log"
    else echo "hattn8 stamps $x skipped ($(el) s)"; fi
  done
  pack
  exit 0
fi
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TEST_TIMEOUT:-50} python3 -m pytest -q -m gpu -p no:cacheprovider tests/backend/test_attention_sahead.py \
    > "$D/tests.log" 2>&1
  echo "hattn8 gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
fi
ARMS=${ARMS:-A S S A B T T B}
for x in $(echo $ARMS | tr ' ' '\n' | sort -u); do
  rows=f16-64,bf16-64,f16-128; case $x in B|T) rows=f16-64 ;; esac
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-30} python3 benchmarks/attention_prewarm.py --bench-rows $rows \
    --bench-blocks "$(blocks $x)" --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
wait
for x in $(echo $ARMS | tr ' ' '\n' | sort -u); do echo "hattn8 prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
i=0
for x in $ARMS; do
  i=$((i + 1))
  if [ "$(el)" -le ${BENCH_BY:-165} ]; then
    case $x in
      A|S) bench $x "$i$x" ${BENCH_TIMEOUT:-14} --only f16-64,bf16-64,f16-128 --full-only --seqs 1024,4096 --throwaway ;;
      *) bench $x "$i$x" ${BENCH_TIMEOUT:-10} --only f16-64 --full-only --seqs 1024,4096 --throwaway ;;
    esac
  else echo "hattn8 bench $i$x skipped ($(el) s)"; fi
done
python3 benchmarks/attention_ab.py "$D" --base A || true
python3 benchmarks/attention_ab.py "$D" --base B || true
pack
