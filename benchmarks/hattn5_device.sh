#!/usr/bin/env bash
# Issue 15 prefill, hattn5 (2026-12-06 21:07-00:07, written before any run): the D = 64 S = 1,024 rows (0.96-0.98x
# SDPA on the H100), whose miss is the walk's last round: 4,096 tiles on 132 CTAs = 31 rounds + 4 tiles, the 4
# CTAs of a 32nd tile ending ~3 % after the 128 others. Arms, each its own process (`benchmarks/attention.py
# --throwaway`), f16 and bf16 full, S = 1,024 (the lever's rows) and 4,096 (controls: the long keys' kernels, which
# no arm changes), plus f16 D = 128 full S = 4,096 (a control: nothing here changes a D = 128 kernel):
#   A  this tree's default
#   H  TILEC_ATTN_CHAIN_HALVES=1: the chained short keys' variant's last round as 64-row halves, a tile's two
#      halves on two CTAs, one consumer warpgroup computing on each (the other keeps the barriers without
#      computing): 4 tiles -> 8 halves on 8 CTAs, no merge (`passes/attention_qsplit.py`)
#   C  TILEC_ATTN_CHAIN_SPLIT=1: the same last round split along the keys (h15x; 8 pieces of one block a tile on
#      32 CTAs, records and a merge), measured +0..+0.5 % in call 4's noisy processes: timed again beside H
# Order A H C C H A, then attention_ab.py's fold (--base A; a ratio counts only above both arms' spreads).
# EXPECTED (the model in RESULTS.md, hattn5; H200 block timeline of h15p call 2: the 128 CTAs of 31 tiles end at
# p0 / p50 / p90 ~322.6 / 325.1 / ~327 us, the 4 with a 32nd at 336; a tile 10.5 us):
#   H/A D = 64 full S = 1,024: +0.4..+1.2 % (f16 ~415-420 -> ~418-425 TFLOP/s; Tile / SDPA 0.96-0.97 -> ~0.97-0.98).
#       A half is a tile's work for one warpgroup alone on its SM: ~0.7 of a tile's time (call 6's block sweep:
#       64 x 128 blocks, one consumer warpgroup an SM, 297 TFLOP/s against 128 x 128's 417 at D = 64 S = 1,024),
#       so the last round ~7.3 us after its 8 CTAs' walk A (~326.5 us: the 8th latest of 8), ~334 against 336.
#       No arm reaches 1.0x: a perfect last round (every CTA ending together) is worth ~3.1 %, 0.965x -> ~0.995x.
#   C/A the same rows: +0..+1.4 % (the model: pieces ending ~331 us; measured +0..+0.5 % before).
#   Controls (D = 64 S = 4,096, f16 D = 128 S = 4,096): 1.000 +- the runs' spread in both arms (the same PTX).
#   If H/A is below +0.4 % on both dtypes, a lone warpgroup is slower than ~0.7 of a tile here (or its CTAs are
#   among the latest of walk A); the lever would then need the idle CTAs themselves (a dynamic last round).
# Before the benches: the GPU tests of the switch (test_attention_qsplit.py -m gpu: 4 launches against SDPA in f32,
# three launches the same bits; the benchmark's full launch on every SM: no tile never stored or wrong).
# One device step, ~150-170 s warm (each process cut by its own timeout; `el` guards keep it <= ~190 s).
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hattn5_device.sh        (REPS, BENCH_TIMEOUT, PREWARM_TIMEOUT, TESTS=0 adjust)
# Prints the tests' summary, one line a step and the table rows (| dtype D ... |), then attention_ab.py's fold;
# writes $OUT/hattn5.tgz.
set -uo pipefail
NAME=hattn5; . benchmarks/attention_arms.sh
export ATTN_TRITON=0  # (call 22: Triton's attention, tuned in the first process, cut a run at its timeout)
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    H) echo "TILEC_ATTN_CHAIN_HALVES=1" ;;
    C) echo "TILEC_ATTN_CHAIN_SPLIT=1" ;;
  esac
}
if [ "${TESTS:-1}" = 1 ]; then
  TILEC_ATTN_CHAIN_HALVES=1 timeout ${TEST_TIMEOUT:-70} python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/backend/test_attention_qsplit.py > "$D/tests.log" 2>&1
  echo "hattn5 gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
fi
for x in A H C; do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-30} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64,f16-128 \
    --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
wait
for x in A H C; do echo "hattn5 prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
i=0
for x in A H C C H A; do
  i=$((i + 1))
  if [ "$(el)" -le 175 ]; then
    bench $x "$i$x" ${BENCH_TIMEOUT:-14} --only f16-64,bf16-64,f16-128 --full-only --seqs 1024,4096 --throwaway
  else echo "hattn5 bench $i$x skipped ($(el) s)"; fi
done
python3 benchmarks/attention_ab.py "$D" --base A || true
pack
