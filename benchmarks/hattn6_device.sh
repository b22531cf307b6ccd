#!/usr/bin/env bash
# Issue 15, hattn6 (2026-12-07 00:03 session, written before any run; CPU-only so far).
#
# Part 1, prefill: `TILEC_ATTN_CHAIN_SPLIT=dyn` (hattn5's key split of the chained short keys' variant's last round,
# its pieces run by the first CTAs out of walk A by tickets; refused from landing L3 to hattn6, now the ticket has a
# shared word of its own: `EmitterCore.handoff_word`). Arms, each its own process (`benchmarks/attention.py
# --throwaway`), alternated A D D A: f16 / bf16 D = 64 full S = 1,024 (the lever's rows: 4,096 tiles on 132 CTAs, 31
# rounds + 4 tiles) with S = 4,096 beside them (the long keys' kernel: no arm changes it), and f16 D = 128 full
# S = 4,096 (a control: nothing here changes a D = 128 kernel).
#   A  this tree's default
#   D  TILEC_ATTN_CHAIN_SPLIT=dyn TILEC_ATTN_CHAIN_TAIL=0: the last 4 tiles as 8 one-block pieces each on the
#      32 CTAs that took the first tickets, the last piece of a tile merging its 8 records (2 an iteration)
# EXPECTED (hattn5's model, RESULTS "the D = 64 S = 1,024 rows' last round as 64-row halves"; H200 timeline: the
# 128 CTAs of 31 tiles end at p0 / p50 / p90 ~322.6 / 325.1 / ~327 us, the 4 with a 32nd at 336; the first 32 out
# at ~324 us, pieces ~4.3 us + its merge ~0.3): D/A D = 64 full S = 1,024 **+0.5..+2.0 %** on both dtypes (the model
# says +2.2 %; the static key split C measured ~1 % under its model in call 4, so ~+1 % is as likely); H100 f16
# ~415-420 -> ~420-426 TFLOP/s, Tile / SDPA 0.97-0.98 -> ~0.98-0.99 (not 1.0x: a perfect last round is ~3.2 %).
# Controls (D = 64 S = 4,096, f16 D = 128 S = 4,096): 1.000 +- the runs' spread (their PTX is the same in both arms).
# If D/A is within the spread on both dtypes, a piece's fixed costs (its boundary, record, merge through the L2)
# eat the placement's gain, as they ate C's.
# Before the bench: the GPU tests of the ticketed split (test_attention_qsplit.py -m gpu -k ticketed: 2 launches
# against SDPA, three launches the same bits, i.e. the tickets' counter zero again after each; the benchmark's
# full launch on every SM, no tile unwritten or wrong).
#
# Part 2 (run after part 1), decode at B=1 8k (bf16, 32 / 8 heads, D = 128; as graphs): `benchmarks/hattn6_decode.py`, one process, 3
# interleaved rounds of: the default tc pair; the tc pair with TILEC_LDG_EARLY=1 (built 2026-12-04, never measured);
# the FMA pair on the same plan (BN 64, 16 shares); std's decode_fused (the merge folded into each head's last share,
# atomic arrival); attention_variants.tile's decode_fused_aw (the same, `arrive_wait = 1`); then SDPA eager and as
# a graph, and under each backend forced (which kernel the rows' "SDPA" is).
# EXPECTED (H200, RESULTS 2026-12-04 h15d; an H100 reads ~the same us here: the 33.5 MB are L2-resident between
# replays on both):
#   tc pair 12.7-13.1 us (61-62 % of copy on the H200; H100 ~12.8, 86 % of its 3.0 TB/s); SDPA graph 13.6-13.9.
#   tc pair ldg: -0.1..-0.4 us against tc pair (the merge block's second L2 round trip; 1.10 us a block now).
#   fma pair 16-17.5; fma fold (atomic) 16.5-18.5; fma fold aw = fold -0.6..+0.2 (h17r's engine: aw = atomic).
#   "a tc fold would read" = tc pair - (fma pair - fold aw): 12.2-13.3 us, i.e. the fold is worth <= ~0.5 us at
#   B=1 8k: it removes the merge's dependent launch (~0.7 us) but puts its arrival and round trips (~0.5-1.0 us) on
#   the critical path. If that number is >= 0.5 us under the tc pair, folding the merge into the tc split (which
#   the attention pipeline cannot host today: RESULTS, hattn6) is the next build; if not, nothing at B=1 8k is left
#   above the graph's launch (~2.3 us), the L2's rate for the bytes (~5.8) and the tc chain (~2.0).
#   tc pair with TILEC_ATTN_FASTDIV=0 (two more processes, D F D): -0.05..-0.25 us against the default processes'
#       tc pair (the fast divisions' set-up, a 31-compare bit length and a 64-bit division subroutine, ~110 of the
#       292 SASS instructions before the warp roles split, off the producer's path to its first TMA; the tile's
#       own i32 divisions come back inside the roles, once: one tile a CTA at B=1 8k).
#   SDPA backends: the default within ~2 % of FLASH_ATTENTION; MATH 3-10x slower (K and V repeated for GQA, several
#   kernels): ">= 2x SDPA" holds only against such a path, never against the flash kernel (RESULTS, hattn6).
#
# One device step: the prefill part first (~110-120 s), then the decode part (~50-80 s; skipped past DECODE_BY,
# 150 s); PREFILL=0 or DECODE=0 run one part (each process cut by its own timeout, `el` guards).
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hattn6_device.sh      (REPS, BENCH_TIMEOUT, PREWARM_TIMEOUT, TESTS=0, PREFILL=0, DECODE=0 adjust)
# Prints the tests' summary, one line a step and the table rows, then attention_ab.py's fold; writes $OUT/hattn6.tgz.
set -uo pipefail
NAME=hattn6; . benchmarks/attention_arms.sh
export ATTN_TRITON=0
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    D) echo "TILEC_ATTN_CHAIN_SPLIT=dyn TILEC_ATTN_CHAIN_TAIL=0" ;;
  esac
}
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TEST_TIMEOUT:-45} python3 -m pytest -q -m gpu -p no:cacheprovider -k "ticketed" \
    tests/backend/test_attention_qsplit.py > "$D/tests.log" 2>&1
  echo "hattn6 gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
fi
if [ "${PREFILL:-1}" = 1 ]; then
  ARMS=${ARMS:-A D D A}
  for x in $(echo $ARMS | tr ' ' '\n' | sort -u); do
    env $(arm $x) timeout ${PREWARM_TIMEOUT:-25} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64,f16-128 \
      --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
  done
  wait
  for x in $(echo $ARMS | tr ' ' '\n' | sort -u); do echo "hattn6 prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
  i=0
  for x in $ARMS; do
    i=$((i + 1))
    if [ "$(el)" -le 110 ]; then
      bench $x "$i$x" ${BENCH_TIMEOUT:-12} --only f16-64,bf16-64,f16-128 --full-only --seqs 1024,4096 --throwaway
    else echo "hattn6 bench $i$x skipped ($(el) s)"; fi
  done
  python3 benchmarks/attention_ab.py "$D" --base A || true
fi
if [ "${DECODE:-1}" = 1 ] && [ "$(el)" -le ${DECODE_BY:-150} ]; then
  OUT="$D" timeout ${DECODE_TIMEOUT:-70} python3 benchmarks/hattn6_decode.py > "$D/decode.log" 2>&1
  rc=$?
  echo "hattn6 decode (rc $rc, $(el) s):"; grep -E "^(card|plan|tc fixed|round|\||fold|sdpa)" "$D/decode.log" | cut -c1-240
  [ $rc -eq 0 ] || tail -5 "$D/decode.log" | cut -c1-240
  # the tc pair under TILEC_ATTN_FASTDIV=0 (a setting the runtime does not key its variants by: a process of its
  # own), then the default again in one more: D F D for the tc pair
  for fd in 0 auto; do
    if [ "$(el)" -le ${DECODE_BY:-150} ]; then
      OUT="$D" TC_ONLY=1 TILEC_ATTN_FASTDIV=$fd timeout ${DECODE_TC_TIMEOUT:-40} python3 benchmarks/hattn6_decode.py \
        > "$D/decode_fd$fd.log" 2>&1
      echo "hattn6 decode tc pair, TILEC_ATTN_FASTDIV=$fd (rc $?, $(el) s):"
      grep -E "^(tc fixed|round|\| tc)" "$D/decode_fd$fd.log" | cut -c1-240
    fi
  done
fi
pack
