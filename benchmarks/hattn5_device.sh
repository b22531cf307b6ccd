#!/usr/bin/env bash
# Issue 15 prefill, hattn5 (2026-12-06 21:07-00:07, written before any run): the D = 64 S = 1,024 rows (0.96-0.98x
# SDPA on the H100), whose miss is the walk's last round: 4,096 tiles on 132 CTAs = 31 rounds + 4 tiles, the 4
# CTAs of a 32nd tile ending ~3 % after the 128 others. Arms, each its own process (`benchmarks/attention.py
# --throwaway`), f16 and bf16 full, S = 1,024 (the lever's rows) and 4,096 (controls: the long keys' kernels, which
# no arm changes), plus f16 D = 128 full S = 4,096 (a control: nothing here changes a D = 128 kernel):
#   A  this tree's default
#   H  TILEC_ATTN_CHAIN_HALVES=1: the chained short keys' variant's last round as 64-row halves, a tile's two
#      halves on two CTAs, one consumer warpgroup computing on each (the other keeps the barriers without
#      computing): 4 tiles -> 8 halves on 8 CTAs, no merge (`passes/attention_qsplit.py`), each CTA's half by its
#      place in the round (static)
#   Y  TILEC_ATTN_CHAIN_HALVES=dyn: the same halves run by the first 8 CTAs out of walk A (a ticket: an atomic
#      on a counter by the producer after walk A, passed to the consumers through shared memory and a barrier)
#   D  TILEC_ATTN_CHAIN_SPLIT=dyn: the last round split along the keys (h15x's C: 8 pieces of one block a tile, records
#      and a merge) with its pieces run by the first 32 CTAs out of walk A, by the same tickets (its merge 2 records
#      an iteration: at 3, ptxas spilled 48 B)
#   C  (ARMS="A C C A" or any order) TILEC_ATTN_CHAIN_SPLIT=1: C static, measured +0..+0.5 % in call 4
# Order A H Y D D Y H A (ARMS overrides), then attention_ab.py's fold (--base A; a ratio counts only above both
# arms' spreads).
# EXPECTED (the model in RESULTS.md, hattn5; H200 block timeline of h15p call 2: the 128 CTAs of 31 tiles end at
# p0 / p50 / p90 ~322.6 / 325.1 / ~327 us, the 4 with a 32nd at 336; a tile 10.5 us):
#   H/A D = 64 full S = 1,024: +0.4..+1.2 % (f16 ~415-420 -> ~418-425 TFLOP/s; Tile / SDPA 0.96-0.97 -> ~0.97-0.98).
#       A half is a tile's work for one warpgroup alone on its SM: ~0.7 of a tile's time (call 6's block sweep:
#       64 x 128 blocks, one consumer warpgroup an SM, 297 TFLOP/s against 128 x 128's 417 at D = 64 S = 1,024),
#       so the last round ~7.3 us after its 8 CTAs' walk A (~326.5 us: the 8th latest of 8), ~334 against 336.
#   Y/A the same rows: +1.0..+2.0 % (the first 8 CTAs out of walk A at ~323 us: ~330.3 against 336; Y/H +0.5..+1 %).
#   D/A the same rows: +1.0..+2.3 % (the model: the first 32 out at ~324 us, pieces ending ~328.5; C measured ~1 %
#       under its model, so ~+1.3 % is as likely: D against Y says whether the pieces' records cost more than
#       the lone warpgroup's 0.7 of a tile).
#       No arm reaches 1.0x: a perfect last round (every CTA ending together) is worth ~3.2 %, 0.965x -> ~0.995x.
#   C/A (where run) the same rows: +0..+1.4 % (the model: pieces ending ~331 us; measured +0..+0.5 % before).
#   Controls (D = 64 S = 4,096, f16 D = 128 S = 4,096): 1.000 +- the runs' spread in both arms (the same PTX).
#   If H/A and Y/A are both below +0.4 % on both dtypes, a lone warpgroup takes more than ~0.7 of a tile here
#   (the halves' cost, not their placement); if Y gains and H does not, the placement is what mattered.
# Before the benches: the GPU tests of both settings (test_attention_qsplit.py -m gpu: 4 launches against SDPA in f32,
# three launches the same bits, which under "dyn" also says the tickets' counter is zero again after a launch; the
# benchmark's full launch on every SM: no tile never stored or wrong).
# One device step, ~160-200 s warm (each process cut by its own timeout; `el` guards keep it <= ~200 s).
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
    Y) echo "TILEC_ATTN_CHAIN_HALVES=dyn" ;;
    D) echo "TILEC_ATTN_CHAIN_SPLIT=dyn TILEC_ATTN_CHAIN_TAIL=0" ;;  # refused at landing L3, accepted again by hattn6
    C) echo "TILEC_ATTN_CHAIN_SPLIT=1" ;;
  esac
}
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TEST_TIMEOUT:-75} python3 -m pytest -q -m gpu -p no:cacheprovider \
    tests/backend/test_attention_qsplit.py > "$D/tests.log" 2>&1
  echo "hattn5 gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
fi
ARMS=${ARMS:-A H Y Y H A}
for x in $(echo $ARMS | tr ' ' '\n' | sort -u); do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-30} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64,f16-128 \
    --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
wait
for x in $(echo $ARMS | tr ' ' '\n' | sort -u); do echo "hattn5 prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
i=0
for x in $ARMS; do
  i=$((i + 1))
  if [ "$(el)" -le 185 ]; then
    bench $x "$i$x" ${BENCH_TIMEOUT:-13} --only f16-64,bf16-64,f16-128 --full-only --seqs 1024,4096 --throwaway
  else echo "hattn5 bench $i$x skipped ($(el) s)"; fi
done
python3 benchmarks/attention_ab.py "$D" --base A || true
pack
