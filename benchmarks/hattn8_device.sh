#!/usr/bin/env bash
# Issue 15, hattn8 (2026-12-07 06:02 session, written before any run; CPU-only so far): S of the next key block
# issued before this block's softmax (`TILEC_ATTN_SAHEAD=1`, opt-in; the overlapped loop, `attention_loop.s_ahead`).
#
# The model (RESULTS.md, hattn8): at D = 64 a 128 x 128 key block costs ~1,980 cycles (H100 stamps, h15u) against
# ~1,024 of tensor work and ~1,056 of MUFU per SM sub-partition: the two consumer warpgroups issue together, wait
# together for their S (the tensor cores then run S alone, the MUFU idles), then run the softmax under P V. Ahead,
# S(j + 1) is issued before softmax(j) and runs under it beside P V(j - 1), so the wait for S leaves the period.
# The price: a second S tile live through the softmax (64 registers a thread at BN = 128). At 128 x 128, D = 64 the
# default consumers already use ~190 of their 232 registers (ptxas 13.0: R188 the highest), so ahead the kernel
# spills (ptxas 13.0: 196 B / 228 B of spill stores / loads in the key loop, no wgmma serialised); at 128 x 64
# (BN = 64: S is 32 registers) it compiles clean (0 B). So this call measures two things:
#   1. 128 x 128 (the benchmark's blocks) A S S A: is the S wait worth more than the spills? (D = 64 S = 1,024 launches
#      the long keys' kernel under S: the short keys' variant is the chained rotated loop, which the switch leaves;
#      `attention_chain.make` asks for it only where the loop would be rotated.)
#   2. 128 x 64 (ATTN_BLOCKS=128x64, no spill either way) B T T B: the S wait's worth per block where registers
#      allow it, i.e. the premise of the lever.
#   A  default (128 x 128)        S  TILEC_ATTN_SAHEAD=1 (128 x 128)
#   B  ATTN_BLOCKS=128x64          T  ATTN_BLOCKS=128x64 TILEC_ATTN_SAHEAD=1
# Rows: f16 / bf16 D = 64 full S = 1,024 and 4,096, f16 D = 128 full S = 4,096 (a control: no D = 128 kernel changes;
# its 128 x 128 loop is rotated and two S tiles would not fit, `AHEAD_HEADROOM`).
# EXPECTED (H100, before any run):
#   S/A at D = 64: -6..+3 % (the S wait, ~10 % of a block by the D = 128 ncu samples' 9.2 % at the S wait, less the
#     spills' ~50 STL/LDL a block and, at S = 1,024, the chained variant's +2..5 % given up): most likely a loss;
#     a gain would say the S wait is larger than the samples suggest, and a register diet for 128 x 128 (P kept
#     packed, the two S tiles alternating in an unrolled loop) is the next build.
#   T/B at D = 64 (128 x 64): +3..+10 % if the premise holds (per 64-key block the S wait is the same share as at
#     BN = 128, and nothing spills); within the spread if the S wait is already hidden by the other warpgroup's
#     softmax (then the lever is closed: what remains is the per-warp softmax latency, not the order of issue).
#   D = 128 control: 1.000 +- the spread in both pairs (the same PTX).
#   Errors below 1e-2 against SDPA in f32 in every arm (the GPU tests below check the switch at 128 x 64 and
#   128 x 128: GQA, keys not a multiple of the block, causal, bf16, three launches the same bits).
#
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hattn8_device.sh      (REPS, BENCH_TIMEOUT, PREWARM_TIMEOUT, TESTS=0, ARMS adjust; ~150-180 s warm)
# Prints the tests' summary, one line a step and the table rows, then attention_ab.py's fold; writes $OUT/hattn8.tgz.
set -uo pipefail
NAME=hattn8; . benchmarks/attention_arms.sh
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
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TEST_TIMEOUT:-50} python3 -m pytest -q -m gpu -p no:cacheprovider tests/backend/test_attention_sahead.py \
    > "$D/tests.log" 2>&1
  echo "hattn8 gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
fi
ARMS=${ARMS:-A S S A B T T B}
for x in $(echo $ARMS | tr ' ' '\n' | sort -u); do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-30} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64,f16-128 \
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
      *) bench $x "$i$x" ${BENCH_TIMEOUT:-12} --only f16-64,bf16-64 --full-only --seqs 1024,4096 --throwaway ;;
    esac
  else echo "hattn8 bench $i$x skipped ($(el) s)"; fi
done
python3 benchmarks/attention_ab.py "$D" --base A || true
python3 benchmarks/attention_ab.py "$D" --base B || true
pack
