#!/usr/bin/env bash
# Issue 15 prefill, h15t (2026-12-05): TILEC_ATTN_TAIL's new default "auto" (the D = 64 long keys' kernel asks for
# the tail variant, which causal launches over keys longer than 1,024 run: that kernel without the split's code,
# with the tail; passes/attention_tail.py) against TILEC_ATTN_TAIL=0 (the kernels as before: what main ran).
# One device step, ~130 s on a warm H100/H200 with 16 cores (lark installed, torch present), <= ~150 s by its step
# timeouts and budget guards. From main's root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. prewarm (attention_prewarm.py --bench-rows f16-64,bf16-64,f16-128,bf16-128, cubins too) of the three
#      settings at once: A = TILEC_ATTN_TAIL=0; B = the default (unset); C = TILEC_ATTN_TAIL_D=64,128 (D = 128's
#      long keys' kernel asks for the tail variant too, which ptxas spills 4 B in: not the default)      <= 25 s
#   2. the prefill GPU tests: tests/std + tests/backend -m gpu -k attention (-n 6, ~36 tests; incl.
#      test_attention_tail.py's "default" case, the tail variant picked by the launch)                  <= 40 s
#   3. the D = 64 and D = 128 causal rows (f16, bf16; S = 1024 / 4096 / 16384; benchmarks/attention.py
#      --prefill-only --causal-only --reps 5; rows printed as they finish) in the order A B B A     <= 4 x 20 s
#   4. arm C once, the D = 128 causal rows (skipped past 115 s)                                        <= 10 s
#   5. the anomaly check: bf16 D = 64 causal S = 1024 alone, 3 times, the default (h15s's B run gave
#      39.8 TFLOP/s once, median 1.73 ms for 0.22; the default runs the short keys' chained variant
#      there without the tail, as A does: expected ~310-320 each time)                                 <= 3 x 7 s
# Expected (benchmarks/RESULTS.md, "h15t"): B over A +1.5..+2.6 % on D = 64 causal S = 4096 and 16384
# (the same PTX as h15s's arm B, which gained +1.8..+2.6 % there over its arm A: TILEC_ATTN_SPLIT=0, and A
# here, the default kernel's copy without the split's code, measured 420-425 at S = 4096, ~1 % below that
# arm A), within the spread (+-1 %) at S = 1024 (D = 64: the same kernel in both arms) and on every D = 128
# row (the same kernels in both arms: the spread of the measurement). C over A at D = 128 S = 4096 / 16384:
# the model's +1..+2 % less the spill's cost (unknown: a per-tile reload, outside the key loop, is likely).
# usage on the device machine, from the checkout's root:  bash benchmarks/h15t_device.sh
# Prints one line a step and the table rows (| dtype D ... |); writes $OUT/h15t.tgz (logs, json).
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; D="$OUT/h15t"; mkdir -p "$D"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}; mkdir -p "$TILEC_CACHE_DIR"
unset TILEC_ATTN_TAIL TILEC_ATTN_TAIL_D TILEC_ATTN_SPLIT TILEC_ATTN_SPLIT_FORMS
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
cubin=(); command -v ptxas >/dev/null && cubin=(--cubin sm_90)
jobs=$(( $(nproc) / 3 > 0 ? $(nproc) / 3 : 1 ))
ROWS=${ROWS:-f16-64,bf16-64,f16-128,bf16-128}
arm() {  # the environment of arm $1 (A: the kernels as before, B: the default, C: D = 128 asks too)
  case $1 in
    A) echo "TILEC_ATTN_TAIL=0" ;;
    B) echo "" ;;
    C) echo "TILEC_ATTN_TAIL_D=64,128" ;;
  esac
}
name() { local e; e=$(arm "$1"); echo "${e:-default}"; }
for x in A B C; do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-25} python3 benchmarks/attention_prewarm.py --bench-rows "$ROWS" \
    --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
wait
for x in A B C; do echo "h15t prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 tests/std tests/backend -k attention \
  > "$D/tests.log" 2>&1
echo "h15t gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR" "$D/tests.log" | head -8
bench() {  # arm $1, rows $2, label $3, timeout $4, more args
  local x=$1 rows=$2 label=$3 to=$4; shift 4
  env $(arm $x) timeout "$to" python3 benchmarks/attention.py --prefill-only --only "$rows" --causal-only \
    --reps ${REPS:-5} --out "$D/run$label" "$@" > "$D/bench$label.log" 2>&1
  echo "h15t bench $label, arm $x ($(name $x)) (rc $?, $(el) s):"
  grep -E "^\| (f16|bf16)" "$D/bench$label.log" | awk '!s[$0]++'
}
i=0
for x in A B B A; do
  i=$((i + 1)); bench $x "$ROWS" "$i$x" ${BENCH_TIMEOUT:-20}
done
if [ "$(el)" -le 115 ]; then bench C f16-128,bf16-128 5C ${BENCH_C_TIMEOUT:-10}; else echo "h15t arm C skipped ($(el) s)"; fi
for j in 1 2 3; do
  if [ "$(el)" -le 143 ]; then bench B bf16-64 "a$j" ${ANOMALY_TIMEOUT:-7} --seqs 1024; else echo "h15t anomaly $j skipped ($(el) s)"; fi
done
tar czf "$OUT/h15t.tgz" -C "$OUT" h15t && rm -rf "$D"
