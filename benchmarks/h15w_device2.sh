#!/usr/bin/env bash
# Issue 15 prefill, h15w round 2 (2026-12-05; the lead's last call): the rotation across the tile boundary
# in its two orders against the default, after round 1 (benchmarks/h15w_device.sh) found "1" right at the
# benchmark's scale. `TILEC_ATTN_XROT=2` (Y) waits for the pending P V after the deferred block's row max and
# issues the next tile's first S then: 52 B of spills against "1"'s 208 B (X), but less overlap (ptxas puts
# the block's exponentials before that S). Expectations in RESULTS.md ("h15w", round 2) before the run.
# One device step, ~95 s on a warm H100/H200 with 16 cores, <= ~125 s by its step timeouts and guards.
# From the repo root after `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. prewarm of A, X and Y on f16-64 and bf16-64 (cubins too), and beside it test_attention_xrot's
#      benchmark-scale GPU cases under TILEC_ATTN_XROT=2 (512 x 1024 x 64, every SM, full and causal)   <= 35 s
#   2. ARMS (default "A X Y Y X A"; Y only where step 1 passed) on f16-64, bf16-64 at S = 1024          <= 6 x 11 s
#   3. the stamps of Y (f16 D = 64 full S = 1024) where time is left                                   <= 12 s
# usage on the device machine, from the checkout's root:  bash benchmarks/h15w_device2.sh
# Prints one line a step and the table rows (| dtype D ... |); writes $OUT/h15w2.tgz.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; D="$OUT/h15w2"; mkdir -p "$D"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}; mkdir -p "$TILEC_CACHE_DIR"
unset TILEC_ATTN_QDOUBLE TILEC_ATTN_XROT TILEC_ATTN_CHAIN TILEC_ATTN_ROTATE TILEC_ATTN_SPLIT TILEC_ATTN_STAMPS \
  TILEC_PERSISTENT_SMS
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
cubin=(); command -v ptxas >/dev/null && cubin=(--cubin sm_90)
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    Q) echo "TILEC_ATTN_QDOUBLE=1" ;;
    X) echo "TILEC_ATTN_XROT=1" ;;
    Y) echo "TILEC_ATTN_XROT=2" ;;
    S) echo "TILEC_ATTN_STAMPS=1 TILEC_ATTN_XROT=2" ;;
  esac
}
name() { local e; e=$(arm "$1"); echo "${e:-default}"; }
ARMS=${ARMS:-A X Y Y X A}
jobs=$(( $(nproc) / 4 > 0 ? $(nproc) / 4 : 1 ))
for x in $(echo "$ARMS" | tr ' ' '\n' | sort -u); do
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-40} python3 benchmarks/attention_prewarm.py --bench-rows f16-64,bf16-64 \
    --jobs "$jobs" "${cubin[@]}" > "$D/prewarm_$x.log" 2>&1 &
done
TILEC_ATTN_XROT=2 timeout ${SCALE_TIMEOUT:-35} python3 -m pytest -q -p no:cacheprovider -m gpu -n 2 \
  tests/backend/test_attention_xrot.py > "$D/scale.log" 2>&1
rc=$?
echo "h15w2 benchmark-scale tests under TILEC_ATTN_XROT=2 (rc $rc, $(el) s): $(tail -1 "$D/scale.log")"
grep -E "^FAILED|^ERROR|never stored" "$D/scale.log" | head -4
y_ok=0; [ $rc -eq 0 ] && grep -qE "2 passed" "$D/scale.log" && y_ok=1
wait
for x in $(echo "$ARMS" | tr ' ' '\n' | sort -u); do
  echo "h15w2 prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"
done
bench() {  # arm $1, label $2, timeout $3
  env $(arm $1) timeout "$3" python3 benchmarks/attention.py --prefill-only --only f16-64,bf16-64 --seqs 1024 \
    --reps ${REPS:-5} --out "$D/run$2" > "$D/bench$2.log" 2>&1
  echo "h15w2 bench $2, arm $1 ($(name $1)) (rc $?, $(el) s):"
  grep -E "^\| (f16|bf16)" "$D/bench$2.log" | awk '!s[$0]++'
}
i=0
for x in $ARMS; do
  i=$((i + 1))
  if [ "$x" = Y ] && [ $y_ok -ne 1 ]; then echo "h15w2 bench $i$x skipped (XROT=2 not right at scale)"; continue; fi
  if [ "$(el)" -le 108 ]; then bench $x "$i$x" ${BENCH_TIMEOUT:-11}; else echo "h15w2 bench $i$x skipped ($(el) s)"; fi
done
if [ $y_ok -eq 1 ] && [ "$(el)" -le 108 ]; then
  env $(arm S) timeout ${STAMPS_TIMEOUT:-12} python3 benchmarks/probes/attention_stamps.py --reps 3 \
    --rows f16-64-full-1024 --out "$D/stampsS" > "$D/stampsS.log" 2>&1
  echo "h15w2 stamps, arm S ($(name S)) (rc $?, $(el) s):"; grep -E "^\S+: stamped|^  (wg|producer)" "$D/stampsS.log"
else echo "h15w2 stamps skipped ($(el) s)"; fi
tar czf "$OUT/h15w2.tgz" -C "$OUT" h15w2 && rm -rf "$D"
