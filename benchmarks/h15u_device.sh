#!/usr/bin/env bash
# Issue 15 prefill, h15u round 1 (2026-12-05): the rows still under SDPA are all at S = 1,024 (D = 64 full and
# causal, bf16 D = 128 full), plus f16 D = 128 full S = 4096 under 700 TFLOP/s. Measurements that decide what to
# build (benchmarks/RESULTS.md, "h15u", expectations written before the run). Default kernels are main's.
# One device step, ~140 s on a warm H100/H200 with 16 cores, <= ~150 s by its step timeouts and budget guards.
# From the repo root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. prewarm (attention_prewarm.py, cubins too) of every arm at once, and beside it the attention GPU
#      tests (tests/std + tests/backend -m gpu -k attention, -n 6; incl. test_attention_stagger's GPU cases)  <= 45 s
#   2. set 1, A A on f16-64, bf16-64 at S = 1024 (full and causal). (Round 1 on 2026-12-05 13:20 ran A G H A here,
#      G / H = TILEC_ATTN_STAGGER=1 / 2, the chained variant's warpgroups one / two key blocks apart: no faster
#      and wrong results at 132 CTAs; removed. benchmarks/RESULTS.md, "h15u".)                       <= 2 x 12 s
#   3. cycle stamps (TILEC_ATTN_STAMPS=1, benchmarks/probes/attention_stamps.py; the chained variant's
#      consumers are stamped since h15u, and "lag_vs_wg0" says how far apart the warpgroups' tiles start):
#      S = the default's f16 D = 64 full and causal S = 1024 and bf16 D = 128 full S = 1024          <= 16 s
#   4. set 2, A F F A on f16-128, bf16-128 full S = 4096: F = TILEC_ATTN_SPLIT_FORMS=1 (the last round's split
#      as a second compiled form: at D = 128 never timed; its key loop 641 / 688 SASS instructions against the
#      default's 641 / 686, unlike SPLIT_WIDE's 703 / 729, which lost 5.7 %)                           <= 4 x 8 s
#   5. set 3, D E on f16-64, bf16-64 full S = 1024: D = TILEC_ATTN_CHAIN=0 (the long keys' kernel, with the
#      last round split), E = TILEC_ATTN_CHAIN=0 TILEC_ATTN_SPLIT=0 (without): D - E = what the split is worth
#      at S = 1024, which the chained short variant (the default there) cannot do                      <= 2 x 7 s
# The steps past 2 are skipped as the budget runs out (~150 s in all).
# usage on the device machine, from the checkout's root:  bash benchmarks/h15u_device.sh
# Prints one line a step, the table rows (| dtype D ... |) and the stamps' phases; writes $OUT/h15u.tgz.
# Round 2 (small, ~70 s): ROUND=2 B_ENV="TILEC_ATTN_TAIL_D=64" bash benchmarks/h15u_device.sh: prewarm of A (the
# default) and B (B_ENV) beside the tail's GPU tests, then A B B A on the causal rows of ROWS2 (f16-128,bf16-128).
set -uo pipefail
if [ "${ROUND:-1}" = 2 ]; then
  export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
  OUT=${OUT:-/tmp/out}; D="$OUT/h15u2"; mkdir -p "$D"
  export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}; mkdir -p "$TILEC_CACHE_DIR"
  unset TILEC_ATTN_TAIL TILEC_ATTN_TAIL_D TILEC_ATTN_QDOUBLE TILEC_ATTN_STAGES
  B_ENV=${B_ENV:-TILEC_ATTN_TAIL_D=64}; ROWS2=${ROWS2:-f16-128,bf16-128}
  t0=$(date +%s)
  cubin=(); command -v ptxas >/dev/null && cubin=(--cubin sm_90)
  jobs=$(( $(nproc) / 3 > 0 ? $(nproc) / 3 : 1 ))
  timeout 30 python3 benchmarks/attention_prewarm.py --bench-rows "$ROWS2" --jobs "$jobs" "${cubin[@]}" \
    > "$D/prewarm_A.log" 2>&1 &
  env $B_ENV timeout 30 python3 benchmarks/attention_prewarm.py --bench-rows "$ROWS2" --jobs "$jobs" "${cubin[@]}" \
    > "$D/prewarm_B.log" 2>&1 &
  timeout 30 python3 -m pytest -q -p no:cacheprovider -m gpu -n 4 tests/backend/test_attention_tail.py > "$D/tests.log" 2>&1
  echo "h15u2 tail gpu tests (rc $?, $(( $(date +%s) - t0 )) s): $(tail -1 "$D/tests.log")"
  wait
  echo "h15u2 prewarm ($(( $(date +%s) - t0 )) s): A $(tail -1 "$D/prewarm_A.log"); B ($B_ENV) $(tail -1 "$D/prewarm_B.log")"
  i=0
  for x in A B B A; do
    i=$((i + 1)); e=""; [ $x = B ] && e=$B_ENV
    env $e timeout 14 python3 benchmarks/attention.py --prefill-only --only "$ROWS2" --causal-only --reps 5 \
      --out "$D/run$i$x" > "$D/bench$i$x.log" 2>&1
    echo "h15u2 bench $i$x (${e:-default}) (rc $?, $(( $(date +%s) - t0 )) s):"
    grep -E "^\| (f16|bf16)" "$D/bench$i$x.log" | awk '!s[$0]++'
  done
  tar czf "$OUT/h15u2.tgz" -C "$OUT" h15u2 && rm -rf "$D"
  exit 0
fi
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; D="$OUT/h15u"; mkdir -p "$D"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}; mkdir -p "$TILEC_CACHE_DIR"
unset TILEC_ATTN_QDOUBLE TILEC_ATTN_SPLIT_FORMS TILEC_ATTN_CHAIN TILEC_ATTN_SPLIT TILEC_ATTN_STAMPS TILEC_ATTN_TAIL
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
cubin=(); command -v ptxas >/dev/null && cubin=(--cubin sm_90)
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    F) echo "TILEC_ATTN_SPLIT_FORMS=1" ;;
    D) echo "TILEC_ATTN_CHAIN=0" ;;
    E) echo "TILEC_ATTN_CHAIN=0 TILEC_ATTN_SPLIT=0" ;;
    S) echo "TILEC_ATTN_STAMPS=1" ;;
  esac
}
rows_of() {  # the prewarm rows of arm $1
  case $1 in
    A) echo "f16-64,bf16-64,f16-128,bf16-128" ;;
    D|E) echo "f16-64,bf16-64" ;;
    F) echo "f16-128,bf16-128" ;;
    S) echo "f16-64,bf16-128" ;;
  esac
}
name() { local e; e=$(arm "$1"); echo "${e:-default}"; }
jobs=$(( $(nproc) / 5 > 0 ? $(nproc) / 5 : 1 ))
for x in A F D E S; do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-40} python3 benchmarks/attention_prewarm.py --bench-rows "$(rows_of $x)" \
    --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
timeout ${TEST_TIMEOUT:-45} python3 -m pytest -q -p no:cacheprovider -m gpu -n 6 tests/std tests/backend -k attention \
  > "$D/tests.log" 2>&1
echo "h15u gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR" "$D/tests.log" | head -8
wait
for x in A F D E S; do echo "h15u prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
bench() {  # arm $1, rows $2, seqs $3, label $4, timeout $5, more args
  local x=$1 rows=$2 seqs=$3 label=$4 to=$5; shift 5
  env $(arm $x) timeout "$to" python3 benchmarks/attention.py --prefill-only --only "$rows" --seqs "$seqs" \
    --reps ${REPS:-5} --out "$D/run$label" "$@" > "$D/bench$label.log" 2>&1
  echo "h15u bench $label, arm $x ($(name $x)) (rc $?, $(el) s):"
  grep -E "^\| (f16|bf16)" "$D/bench$label.log" | awk '!s[$0]++'
}
stamps() {  # arm $1, rows $2, timeout $3
  env $(arm $1) timeout "$3" python3 benchmarks/probes/attention_stamps.py --reps 3 --rows "$2" --out "$D/stamps$1" \
    > "$D/stamps$1.log" 2>&1
  echo "h15u stamps, arm $1 ($(name $1)) (rc $?, $(el) s):"; grep -E "^\S+: stamped|^  (wg|producer)" "$D/stamps$1.log"
}
i=0
for x in A A; do i=$((i + 1)); bench $x f16-64,bf16-64 1024 "1$i$x" ${BENCH1_TIMEOUT:-12}; done
if [ "$(el)" -le 100 ]; then stamps S f16-64-full-1024,f16-64-causal-1024,bf16-128-full-1024 ${STAMPS_TIMEOUT:-16}
else echo "h15u stamps S skipped ($(el) s)"; fi
i=0
for x in A F F A; do
  i=$((i + 1))
  if [ "$(el)" -le 132 ]; then bench $x f16-128,bf16-128 4096 "2$i$x" ${BENCH2_TIMEOUT:-8} --full-only
  else echo "h15u set 2 run $i skipped ($(el) s)"; fi
done
i=0
for x in D E; do
  i=$((i + 1))
  if [ "$(el)" -le 140 ]; then bench $x f16-64,bf16-64 1024 "3$i$x" ${BENCH3_TIMEOUT:-7} --full-only
  else echo "h15u set 3 run $i skipped ($(el) s)"; fi
done
tar czf "$OUT/h15u.tgz" -C "$OUT" h15u && rm -rf "$D"
