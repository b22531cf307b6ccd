#!/usr/bin/env bash
# Issue 15 prefill on the Hopper attention path (helper h15p), one device step, <= 70 s
# by its step timeouts (about 45 s on a warm H200 with 16 cores):
#   1. fill the compile cache on the device's cores (attention_prewarm.py --only prefill);
#      with NP=1 also the one-tile-a-block kernels (TILEC_ATTN_PERSISTENT=0, for step 4), with
#      PEEL=1 also the peeled ones (TILEC_ATTN_PEEL=1, alongside on half the cores)      <= 16 s
#   2. the prefill GPU tests against SDPA (std::attention's 8 variants, blocks 128x64 and
#      128x128 in turn: GQA, S not a multiple of the blocks, causal with S_q != S_k, lse;
#      the 4-D in-place test) and the user-written loop of test_attention_pipeline.py, with
#      TILEC_PERSISTENT_SMS=3 (the persistent kernels walk several tiles a CTA); with PEEL=1,
#      with TILEC_ATTN_PEEL=1 (the 128x64 and the D = 64 shapes take the peel)        <= 13 s
#   3. benchmarks/attention.py --prefill-only: f16/bf16, D 128/64, causal or not,
#      S = 1024, 4096, 16384 (24 rows, each checked against SDPA in f32), default       <= 19 s
#   3b. (PEEL=1) the f16 D = 64 rows again with TILEC_ATTN_PEEL=1 (the rows it changes) <= 7 s
#   4. (NP=1) the causal rows again with TILEC_ATTN_PERSISTENT=0 (the hardware's dynamic
#      order against the persistent walk's causal pairs)                              <= 10 s
# (The default rotates the loop at D = 128 only: TILEC_ATTN_ROTATE=auto.)
#   3c. (ROT=1) the 24 rows again with TILEC_ATTN_ROTATE=1 (the rotated overlap schedule:
#      S of block j with P V of block j-1, P carried packed; prewarmed alongside the default,
#      tested in step 2 with it too; DEFAULT_TESTS=0 tests it alone); ROT_AB=n then n rounds
#      of the f16 D = 128 rows, default and rotated in turn                      <= 19 + 16 n s
#   3d. (AB_VAR=NAME AB=n AB_ROWS="f16-128 f16-64") n rounds of those rows with NAME=0 then
#      NAME=1 (a codegen switch against its default; prewarmed with NAME=0 alongside, e.g.
#      TILEC_ATTN_ROWSTORE: the epilogue's row stores)                       <= 8 per row set s
#   5. compute-sanitizer memcheck and racecheck over attention_sanitize.py (prefill
#      cases incl. two consumer warpgroups, and decode; TILEC_PERSISTENT_SMS=2; with PEEL=1
#      TILEC_ATTN_PEEL=1: three of its four prefill cases take the peel)             <= 8 + 6 s
# (On a cold machine (2026-12-02, 09:48) a 9 s prewarm timed out before its imports were
# done, and the benchmark then compiled while it timed.)
# usage on the device machine, from the checkout's root (lark installed, as the
# lead's calls do):  bash benchmarks/attention_prefill_device.sh
# Writes ONE file: $OUT/h15p.tgz (prewarm*.log, tests.log, bench.log, bench_np.log,
# attention.json/.md, sanitizer_{memcheck,racecheck}.log).
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; D="$OUT/h15p"; mkdir -p "$D/np" "$D/peel"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}; mkdir -p "$TILEC_CACHE_DIR"
t0=$(date +%s)
cubin=(); command -v ptxas >/dev/null && cubin=(--cubin sm_90)
PEEL=${PEEL:-0}; ROT=${ROT:-0}; AB_VAR=${AB_VAR:-}; jobs=$(nproc)
[ "$PEEL$ROT" != 00 ] || [ -n "$AB_VAR" ] && jobs=$(( jobs / 2 > 0 ? jobs / 2 : 1 ))
if [ -n "$AB_VAR" ]; then
  env "$AB_VAR=0" timeout ${PREWARM_TIMEOUT:-16} python3 benchmarks/attention_prewarm.py --only prefill --jobs "$jobs" \
    "${cubin[@]}" > "$D/prewarm_ab.log" 2>&1 &
fi
mkdir -p "$D/rot"
if [ "$ROT" = 1 ]; then
  TILEC_ATTN_ROTATE=1 timeout ${PREWARM_TIMEOUT:-16} python3 benchmarks/attention_prewarm.py --only prefill --jobs "$jobs" \
    "${cubin[@]}" > "$D/prewarm_rot.log" 2>&1 &
fi
if [ "$PEEL" = 1 ]; then
  TILEC_ATTN_PEEL=1 timeout ${PREWARM_TIMEOUT:-16} python3 benchmarks/attention_prewarm.py --only prefill --jobs "$jobs" \
    "${cubin[@]}" > "$D/prewarm_peel.log" 2>&1 &
fi
timeout ${PREWARM_TIMEOUT:-16} python3 benchmarks/attention_prewarm.py --only prefill --jobs "$jobs" "${cubin[@]}" > "$D/prewarm.log" 2>&1
echo "h15p prewarm (rc $?, $(( $(date +%s) - t0 )) s): $(tail -1 "$D/prewarm.log")"
if [ "$PEEL" = 1 ]; then wait; echo "h15p prewarm, peeled (TILEC_ATTN_PEEL=1) ($(( $(date +%s) - t0 )) s): $(tail -1 "$D/prewarm_peel.log")"; fi
if [ -n "$AB_VAR" ]; then wait; echo "h15p prewarm, $AB_VAR=0 ($(( $(date +%s) - t0 )) s): $(tail -1 "$D/prewarm_ab.log")"; fi
if [ "$ROT" = 1 ]; then wait; echo "h15p prewarm, rotated (TILEC_ATTN_ROTATE=1) ($(( $(date +%s) - t0 )) s): $(tail -1 "$D/prewarm_rot.log")"; fi
if [ "${NP:-0}" = 1 ]; then
  TILEC_ATTN_PERSISTENT=0 timeout ${PREWARM_NP_TIMEOUT:-7} python3 benchmarks/attention_prewarm.py --only prefill --jobs "$(nproc)" \
    "${cubin[@]}" > "$D/prewarm_np.log" 2>&1
  echo "h15p prewarm, one tile a block (rc $?, $(( $(date +%s) - t0 )) s): $(tail -1 "$D/prewarm_np.log")"
fi
if [ "${DEFAULT_TESTS:-1}" = 1 ]; then
TILEC_ATTN_PEEL=$PEEL TILEC_PERSISTENT_SMS=3 timeout ${TEST_TIMEOUT:-13} python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_attention_pipeline.py \
  tests/std/test_attention_gpu.py -k "user_attention_loop_on_the_gpu or flash_attention_matches_sdpa or four_d" > "$D/tests.log" 2>&1
echo "h15p gpu tests (TILEC_ATTN_PEEL=$PEEL) (rc $?, $(( $(date +%s) - t0 )) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED" "$D/tests.log" | head -5
fi
if [ "$ROT" = 1 ]; then
  TILEC_ATTN_ROTATE=1 TILEC_PERSISTENT_SMS=3 timeout ${TEST_TIMEOUT:-13} python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_attention_pipeline.py \
    tests/std/test_attention_gpu.py -k "user_attention_loop_on_the_gpu or flash_attention_matches_sdpa or four_d" > "$D/tests_rot.log" 2>&1
  echo "h15p gpu tests (TILEC_ATTN_ROTATE=1) (rc $?, $(( $(date +%s) - t0 )) s): $(tail -1 "$D/tests_rot.log")"; grep -E "^FAILED" "$D/tests_rot.log" | head -5
fi
timeout ${BENCH_TIMEOUT:-19} python3 benchmarks/attention.py --prefill-only --reps ${REPS:-5} --out "$D" > "$D/bench.log" 2>&1
echo "h15p bench, persistent (default) (rc $?, $(( $(date +%s) - t0 )) s):"; grep -E "^\| (f16|bf16)" "$D/bench.log" | awk '!s[$0]++'
if [ "$PEEL" = 1 ]; then
  TILEC_ATTN_PEEL=1 timeout ${BENCH_PEEL_TIMEOUT:-7} python3 benchmarks/attention.py --prefill-only --only f16-64 --reps ${REPS:-5} \
    --out "$D/peel" > "$D/bench_peel.log" 2>&1
  echo "h15p bench, f16 D=64, last key block peeled (TILEC_ATTN_PEEL=1) (rc $?, $(( $(date +%s) - t0 )) s):"
  grep -E "^\| (f16|bf16)" "$D/bench_peel.log" | awk '!s[$0]++'
fi
if [ "$ROT" = 1 ]; then
  TILEC_ATTN_ROTATE=1 timeout ${BENCH_ROT_TIMEOUT:-19} python3 benchmarks/attention.py --prefill-only --reps ${REPS:-5} \
    --out "$D/rot" > "$D/bench_rot.log" 2>&1
  echo "h15p bench, all rows, rotated (TILEC_ATTN_ROTATE=1) (rc $?, $(( $(date +%s) - t0 )) s):"
  grep -E "^\| (f16|bf16)" "$D/bench_rot.log" | awk '!s[$0]++'
  # ROT_AB=n: n more alternating rounds of the f16 D = 128 rows, default then rotated
  for r in $(seq 1 "${ROT_AB:-0}"); do
    for rot in 0 1; do
      TILEC_ATTN_ROTATE=$rot timeout ${BENCH_AB_TIMEOUT:-8} python3 benchmarks/attention.py --prefill-only --only f16-128 \
        --reps ${REPS:-5} --out "$D/ab$r$rot" > "$D/bench_ab$r$rot.log" 2>&1
      echo "h15p bench, f16-128, round $r, TILEC_ATTN_ROTATE=$rot (rc $?, $(( $(date +%s) - t0 )) s):"
      grep -E "^\| (f16|bf16)" "$D/bench_ab$r$rot.log" | awk '!s[$0]++'
    done
  done
fi
for r in $(seq 1 "${AB:-0}"); do
  for rows in ${AB_ROWS:-f16-128}; do
    for val in 0 1; do
      env "$AB_VAR=$val" timeout ${BENCH_AB_TIMEOUT:-8} python3 benchmarks/attention.py --prefill-only --only "$rows" \
        --reps ${REPS:-5} --out "$D/ab$r$rows$val" > "$D/bench_ab$r$rows$val.log" 2>&1
      echo "h15p bench, $rows, round $r, $AB_VAR=$val (rc $?, $(( $(date +%s) - t0 )) s):"
      grep -E "^\| (f16|bf16)" "$D/bench_ab$r$rows$val.log" | awk '!s[$0]++'
    done
  done
done
if [ "${NP:-0}" = 1 ]; then
  TILEC_ATTN_PERSISTENT=0 timeout ${BENCH_NP_TIMEOUT:-10} python3 benchmarks/attention.py --prefill-only --causal-only --reps ${REPS:-5} \
    --out "$D/np" > "$D/bench_np.log" 2>&1
  echo "h15p bench, causal, one tile a block (TILEC_ATTN_PERSISTENT=0) (rc $?, $(( $(date +%s) - t0 )) s):"
  grep -E "^\| (f16|bf16)" "$D/bench_np.log" | awk '!s[$0]++'
fi
san=(${MEMCHECK_TIMEOUT:-8} ${RACECHECK_TIMEOUT:-6})
for i in 0 1; do
  tool=$([ $i = 0 ] && echo memcheck || echo racecheck)
  TILEC_ATTN_PEEL=$PEEL TILEC_ATTN_ROTATE=$([ "$ROT" = 1 ] && echo 1 || echo auto) TILEC_PERSISTENT_SMS=2 timeout ${san[$i]} compute-sanitizer --tool $tool --print-limit 10 python3 benchmarks/attention_sanitize.py gpu \
    > "$D/sanitizer_$tool.log" 2>&1
  echo "h15p $tool (TILEC_ATTN_PEEL=$PEEL TILEC_ATTN_ROTATE=$ROT) (rc $?, $(( $(date +%s) - t0 )) s): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$D/sanitizer_$tool.log" | tail -1)"
done
tar czf "$OUT/h15p.tgz" -C "$OUT" h15p && rm -rf "$D"
