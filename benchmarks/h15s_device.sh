#!/usr/bin/env bash
# Issue 15 prefill, h15s (2026-12-05): the causal walk's tail as single tiles, heaviest first
# (TILEC_ATTN_TAIL, passes/attention_tail.py), against the pairs' walk; one device step, <= ~130 s
# by its step timeouts on a warm H200 with 16 cores (lark installed, torch present):
#   1. prewarm (attention_prewarm.py --bench-rows f16-64,bf16-64, cubins too) of three settings at once:
#      the default; A = TILEC_ATTN_SPLIT=0 TILEC_ATTN_TAIL=0; B = TILEC_ATTN_SPLIT=0 TILEC_ATTN_TAIL=1.
#      (The tail is not put in kernels with the split's code, the default D = 64 kernel for keys longer
#      than 1,024: so both arms run the kernels without it; at S = 1024 the short keys' chained variant,
#      which has no split code, is the same kernel in the default and in A)                    <= 25 s
#   2. the D = 64 causal rows (f16 and bf16, S = 1024 / 4096 / 16384; benchmarks/attention.py
#      --prefill-only --only f16-64,bf16-64 --causal-only --reps 5): the default once, then A B B A A B
#      (3 rounds, each arm first and last alike)                                            <= 7 x 9 s
#   3. tests/backend/test_attention_tail.py -m gpu (the tail on 3-5 CTAs against a float32 reference,
#      4 cases incl. D = 128's short variant and ragged rows)                                  <= 40 s
# Expected (benchmarks/RESULTS.md, "CPU (not yet measured): attention prefill, the causal walk's tail"):
# B over A +1.5..+2.5 % on every row (the model of the walk: -2.2 % of the largest CTA's share at S = 1024,
# -2.0 % at 4096, -1.9 % at 16384); A = the default within the spread at S = 1024 (same kernel) and
# -0..-1 % / +0..+1 % at S >= 4096 (no split code: where the default's copy path runs, the same walk).
# TAILN=4: arm B with the last 4 item rounds as the tail instead of 2 (the model: +2.2 / +2.6 / +2.7 %, if the
# tail's ~29 MB of K and V stay in the L2).
# usage on the device machine, from the checkout's root:  bash benchmarks/h15s_device.sh
# Prints one line a step and the table rows (| dtype D ... |); writes $OUT/h15s.tgz (logs, json).
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; D="$OUT/h15s"; mkdir -p "$D"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}; mkdir -p "$TILEC_CACHE_DIR"
t0=$(date +%s)
cubin=(); command -v ptxas >/dev/null && cubin=(--cubin sm_90)
jobs=$(( $(nproc) / 3 > 0 ? $(nproc) / 3 : 1 ))
ROWS=${ROWS:-f16-64,bf16-64}
arm() {  # the environment of arm $1 (D: the default, A: pairs, B: the tail)
  case $1 in
    D) echo "TILEC_ATTN_TAIL=0" ;;
    A) echo "TILEC_ATTN_SPLIT=0 TILEC_ATTN_TAIL=0" ;;
    B) echo "TILEC_ATTN_SPLIT=0 TILEC_ATTN_TAIL=${TAILN:-1}" ;;
  esac
}
for x in D A B; do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-25} python3 benchmarks/attention_prewarm.py --bench-rows "$ROWS" \
    --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
wait
for x in D A B; do echo "h15s prewarm $x ($(arm $x)) ($(( $(date +%s) - t0 )) s): $(tail -1 "$D/prewarm_$x.log")"; done
i=0
for x in D A B B A A B; do
  i=$((i + 1))
  env $(arm $x) timeout ${BENCH_TIMEOUT:-9} python3 benchmarks/attention.py --prefill-only --only "$ROWS" --causal-only \
    --reps ${REPS:-5} --out "$D/run$i$x" > "$D/bench$i$x.log" 2>&1
  echo "h15s bench $i, arm $x ($(arm $x)) (rc $?, $(( $(date +%s) - t0 )) s):"
  grep -E "^\| (f16|bf16)" "$D/bench$i$x.log" | awk '!s[$0]++'
done
# EXTRA=f16-128 (optional, ~40 s more: not prewarmed, compiled in the bench processes): one A B round of those rows' causal
# rows too (D = 128: 1,024 pairs on 132 CTAs, 7.76 rounds run as 8; expected alike, +1..+3 %)
for rows in ${EXTRA:-}; do
  for x in A B; do
    env $(arm $x) timeout ${BENCH_EXTRA_TIMEOUT:-20} python3 benchmarks/attention.py --prefill-only --only "$rows" \
      --causal-only --reps ${REPS:-5} --out "$D/extra$rows$x" > "$D/bench_extra$rows$x.log" 2>&1
    echo "h15s bench $rows, arm $x ($(arm $x)) (rc $?, $(( $(date +%s) - t0 )) s):"
    grep -E "^\| (f16|bf16)" "$D/bench_extra$rows$x.log" | awk '!s[$0]++'
  done
done
timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -p no:cacheprovider -m gpu -n 4 tests/backend/test_attention_tail.py \
  > "$D/tests.log" 2>&1
echo "h15s gpu tests (rc $?, $(( $(date +%s) - t0 )) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED" "$D/tests.log" | head -5
tar czf "$OUT/h15s.tgz" -C "$OUT" h15s && rm -rf "$D"
