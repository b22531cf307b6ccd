#!/usr/bin/env bash
# Issue 15, hattn7 (2026-12-07 03:10 session, written before any run; CPU-only so far).
#
# Decode (bf16, 32 query / 8 KV heads, D = 128, as CUDA graphs) at B=1 8k, B=1 32k and B=8 8k, in four processes
# alternated A S S A (`benchmarks/hattn7_decode.py`; the switches are read when a kernel is lowered and the runtime
# does not key its variants by them: an arm a process), each timing in 2 interleaved rounds:
#   pair     the default pair as attention.py runs it (tc split at B=1 8k, std's FMA split at 32k and B=8: K and V
#            past the L2), the merge `decode_combine` PDL "late";
#   tc pair  decode_split_tc + decode_combine on the same plan (BN, splits) at every row;
#   tc fold  attention_variants' decode_fused_tcj on that plan: the merge folded into each KV head's last share
#            (`last_block(2)`), run once the warp roles end by all 256 threads (TILEC_ATTN_LAST_BLOCK=join, which
#            hattn7_decode.py sets), NC = min(16, NS) shares a step (B=1 8k and B=8 8k one step, 32k two, the
#            next step's loads in flight): one launch;
#   and (PREFILL=1) f16 D = 128 full S = 4,096 prefill, the control (TILEC_ATTN_DIVS_IN_ROLE changes its kernel).
# Arms:
#   A  this tree's default
#   S  TILEC_MBAR_ONE_INIT=1 TILEC_ATTN_DIVS_IN_ROLE=1: the pipeline's start before its warp roles split, 292 ->
#      145 SASS instructions in decode_split_tc's B=1 8k kernel (one fence and barrier for the four mbarrier groups;
#      the fast divisors made by the consumers after the split, the producer dividing plainly: its path to its first
#      TMA 382 -> 260 instructions; `benchmarks/hattn7_start.py` prints the counts on the CPU).
# EXPECTED (H200; an H100 reads about the same at B=1 8k, whose 33.5 MB stay in the L2 between replays):
#   B=1 8k: pair = tc pair 12.7-13.1 us (RESULTS, hattn6: 2.3 graph launch, ~2.0 the split's chain to its first tile,
#     ~6.1 key loop at the L2's rate, 0.35 epilogue, ~0.7 tail, 2.0 the merge: 0.7 dependent launch + 1.1 block).
#     tc fold: tc pair -0.8..+0.4 us (11.9-13.3): it removes the merge's launch and block (~1.9) and puts on the
#     last share's path the roles' join (~0.05), the arrival (acq_rel atomic, ~0.5-0.8), one L2 round trip of
#     partials and the region's ~14 CTA barriers (the sums over a step's shares cross warps: ~0.5-1.0) and the
#     store (~0.1). hattn6's model: -0.4..-0.8.
#   B=1 32k (tc plan 64 / 32 shares, 256 tiles: two waves, from DRAM): tc pair ~37-41 us; pair (FMA) ~37-41;
#     tc fold = tc pair -0.8..+0.6 (4 merge steps).
#   B=8 8k (tc plan 64 / 4 shares, 256 tiles, DRAM-bound ~62-70 us): tc fold = tc pair -0.8..+0.4 (one step).
#   S vs A: -0.05..-0.25 us on each tc row (once a CTA), the prefill control 1.000 +- the spread (+-1 %: the producer
#     divides plainly each tile, ~40 instructions off the consumers' path); if S reads slower than A by more than
#     the spread on the prefill row, DIVS_IN_ROLE costs the producer's per-tile walk more than modelled.
#   Errors vs SDPA in f32: < 1e-2 on every kernel (~3e-3 as the pair's).
# Before the bench: the GPU tests of the fold (tests/backend/test_attention_last_block.py -m gpu: decode_fused_tc
# in the consumers and decode_fused_tcj joined, 4 shapes each against SDPA, twice a shape (the counters zero
# again)). ~150-190 s with a fresh cache.
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hattn7_device.sh      (REPS, ROUNDS, TESTS=0, PREFILL=0, ARMS, BENCH_TIMEOUT adjust)
# Prints the tests' summary, each process's table and an A/S summary; writes $OUT/hattn7.tgz.
set -uo pipefail
NAME=hattn7; . benchmarks/attention_arms.sh
unset TILEC_MBAR_ONE_INIT TILEC_ATTN_DIVS_IN_ROLE TILEC_ATTN_LAST_BLOCK
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    S) echo "TILEC_MBAR_ONE_INIT=1 TILEC_ATTN_DIVS_IN_ROLE=1" ;;
  esac
}
if [ "${TESTS:-1}" = 1 ]; then
  timeout ${TEST_TIMEOUT:-70} python3 -m pytest -q -m gpu -p no:cacheprovider tests/backend/test_attention_last_block.py \
    > "$D/tests.log" 2>&1
  echo "hattn7 gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
fi
i=0
for x in ${ARMS:-A S S A}; do
  i=$((i + 1))
  env $(arm $x) ARM="$i$x" OUT="$D" PREFILL=${PREFILL:-1} REPS=${REPS:-12} ROUNDS=${ROUNDS:-2} \
    timeout ${BENCH_TIMEOUT:-60} python3 benchmarks/hattn7_decode.py > "$D/decode_$i$x.log" 2>&1
  rc=$?
  echo "hattn7 decode $i$x ($(name $x)) (rc $rc, $(el) s):"
  grep -E "^(arm|B=|\|)" "$D/decode_$i$x.log" | cut -c1-240
  [ $rc -eq 0 ] || tail -4 "$D/decode_$i$x.log" | cut -c1-240
done
python3 - "$D" <<'EOF' || true
import json, statistics, sys
from pathlib import Path
runs = [json.loads(p.read_text()) for p in sorted(Path(sys.argv[1]).glob("hattn7_decode_*.json"))]
by = {}
for r in runs:
    for k, v in r["median"].items():
        by.setdefault(r["arm"][-1], {}).setdefault(k, []).append(v)
a, s = by.get("A", {}), by.get("S", {})
print("| row | A (median of processes) | S | S - A | S / A |")
print("| --- | --- | --- | --- | --- |")
for k in a:
    ma, ms = statistics.median(a[k]), statistics.median(s[k]) if k in s else float("nan")
    print(f"| {k} | {ma:.2f} | {ms:.2f} | {ms - ma:+.2f} | {ms / ma:.4f} |")
for row in sorted({k.rsplit(' ', 2)[0] for k in a if k.startswith('B=')}):
    f, t = a.get(f"{row} tc fold"), a.get(f"{row} tc pair")
    if f and t:
        print(f"{row}: tc fold - tc pair (A) {statistics.median(f) - statistics.median(t):+.2f} us")
EOF
pack
