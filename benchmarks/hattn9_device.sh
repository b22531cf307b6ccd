#!/usr/bin/env bash
# Issue 15, hattn9 (2026-12-07 20:07 session, written before any run; CPU-only so far): the D = 64 prefill rows with
# FlashAttention-3's D = 64 tiling, a 192-row query block of three consumer warpgroups (64 rows each, 160 registers
# a thread; the producer warpgroup at 24), `TILEC_PREFILL_WG3=1` (examples/python/prefill_plan.py: 192 x 128 at
# D = 64 on sm_90; D = 128 keeps 128 x 128), against today's 128 x 128 and SDPA, in the same processes.
#
# What is new in the kernel (ptxas 13.0, sm_90a, RESULTS.md hattn9): at BM = 192 the attention pass no longer takes
# the key split of the walk's last round nor the short keys' chained variant (`attention_split.roomy`: their merge
# spilled 948 B / 424 B beside 160 registers); the 192 x 128 kernels now spill 4 B (one register once a tile, before
# the key loop), the key loop none, and an unmasked key block runs ~415 SASS instructions a warp, as 128 x 128's.
#   A  default (128 x 128 at D = 64 and 128)
#   G  TILEC_PREFILL_WG3=1 (192 x 128 at D = 64, the overlapped loop as at 128 x 128)
#   R  TILEC_PREFILL_WG3=1 TILEC_ATTN_ROTATE=1 (192 x 128 rotated: S of block j + 1 issued with P V of block j,
#      FlashAttention-3's IntraWGOverlap, which it uses at D = 64; 4-8 B spilled once a tile, key loop none)
# Rows (every arm, one process a run, arms alternated A G R G A A G: 3 / 3 / 1 runs, folded by
# benchmarks/attention_ab.py as the earlier A/B scripts; R's one run reads within a process's own spread, up to
# 7 % between processes: R/G from it is a hint, its Tile/SDPA of the same process the firmer reading): f16 and bf16 D = 64, full and causal, S = 1,024 / 4,096 /
# 16,384 (16k tokens a launch), and the controls f16 D = 128 full and causal S = 4,096 (the same kernels in every arm).
# EXPECTED (before any run; the H200's call 41 A: f16 D = 64 full S = 1,024 414 TFLOP/s 0.96x SDPA, S = 4,096 470
#   0.98x, causal S = 1,024 319 0.97x):
#   G/A, full: S = 16,384 -4..+6 %, S = 4,096 -10..+3 %, S = 1,024 -20..-6 %. Causal: S = 16,384 -6..+4 %,
#     S = 4,096 -12..0 %, S = 1,024 -25..-8 %. Why: the same ~415 instructions a warp a key block, but three warps a
#     SM sub-partition instead of two; whether that helps depends on what bounds a key block's period. If the
#     period were one warpgroup's latency chain (own S, then its softmax: ~1,980 cycles for two warpgroups' blocks),
#     a third warpgroup's block would fit in the same period (up to +50 %); but the 2026-12-03 run of 192 x 128
#     (then 16 B spilled in the loop, producer at 40) read S = 16,384 +0 %, S = 4,096 -12 %, S = 1,024 -20 % full,
#     i.e. the SM's MUFU (66 EX2 a warp a block, ~528 cycles) and tensor work (~512) did not overlap better with
#     three warpgroups, and D = 64 sits near 1 / (1 + 528 / 512) ~ 49 % of the tensor peak whatever the tiling
#     (SDPA's 480-500 TFLOP/s too). Below S = 16,384, 192-row blocks pad (S = 1,024: 1,152 rows computed, +12.5 %),
#     a third fewer tiles spread worse over 132 CTAs in the last round, and they lose the split and the chain that
#     gave 128 x 128 +2..+5 %.
#   R/G: -5..+5 % (FA3 rotates at D = 64; here the 128 x 128 rotation lost 0.7-2.5 % at D = 64, 2026-12-04).
#   D = 128 controls: G/A and R/A 1.000 +- the spread (the same kernels).
#   Errors below 1e-2 against SDPA in f32 on every row; the GPU tests (tests/std/test_attention_wg3_gpu.py,
#   192 x 128: S not a multiple of 192, causal S_q != S_k, GQA, lse, bf16, the tail and once walks) all pass.
# DECISION: TILEC_PREFILL_WG3 becomes the default at D = 64 (`prefill_plan.WG3_DEFAULT = "1"`) only if G (or R, with
#   TILEC_ATTN_ROTATE's rotation at three warpgroups as the pass's default there) beats A by more than both arms'
#   spreads on the S = 4,096 and 16,384 rows of both dtypes, full and causal, and loses at most 1 % at S = 1,024
#   (else a rule by S_q in the plan: 192 at S_q >= 4,096 where it wins there only). Otherwise it stays opt-in, and
#   issue 15's D = 64 rows are bound by the SM's exp rate, not the tiling.
#
# usage on the device machine, from the checkout's root (after `pip install --no-deps -e .`):
#   bash benchmarks/hattn9_device.sh        (REPS, ARMS, BENCH_TIMEOUT, BENCH_BY, PREWARM_TIMEOUT, TESTS=0; ~150 s warm)
#   bash benchmarks/hattn9_device.sh --cpu  (no GPU: the script's pieces on the interpreter, `attention.py --smoke`
#                                            under each arm and the fold; needs PyTorch's CPU build)
# Prints one line a step, each run's rows, attention_ab.py's fold (base A, then base G), the GPU tests' summary;
# writes $OUT/hattn9.tgz.
set -uo pipefail
NAME=hattn9; . benchmarks/attention_arms.sh
export ATTN_TRITON=0
unset TILEC_PREFILL_WG3 ATTN_BLOCKS
arm() {  # the environment of arm $1
  case $1 in
    A) echo "" ;;
    G) echo "TILEC_PREFILL_WG3=1" ;;
    R) echo "TILEC_PREFILL_WG3=1 TILEC_ATTN_ROTATE=1" ;;
  esac
}
ARMS=${ARMS:-A G R G A A G}
if [ "${1:-}" = --cpu ]; then  # the pieces, on the interpreter: each arm's smoke run, then the fold
  i=0
  for x in $ARMS; do
    i=$((i + 1))
    env $(arm $x) timeout ${BENCH_TIMEOUT:-120} python3 benchmarks/attention.py --smoke --prefill-only --reps 1 \
      --also f16-64-full-96 --out "$D/run$i$x" > "$D/bench$i$x.log" 2>&1
    echo "$NAME cpu smoke $i$x ($(name $x)) (rc $?, $(el) s): $(grep -c '^| f16' "$D/bench$i$x.log") rows"
  done
  python3 benchmarks/attention_ab.py "$D" --base A
  pack
  exit 0
fi
for x in $(echo $ARMS | tr ' ' '\n' | sort -u); do
  case $x in
    A) pre="--bench-rows f16-64,bf16-64,f16-128 --bench-blocks 128x128" ;;
    *) pre="--bench-rows f16-64,bf16-64 --bench-blocks 192x128" ;;  # (its D = 128 kernels are A's)
  esac
  env $(arm $x) timeout ${PREWARM_TIMEOUT:-45} python3 benchmarks/attention_prewarm.py $pre --jobs "$jobs" "${cubin[@]}" \
    > "$D/prewarm_$x.log" 2>&1 &
done
wait
for x in $(echo $ARMS | tr ' ' '\n' | sort -u); do echo "$NAME prewarm $x ($(name $x)) ($(el) s): $(tail -1 "$D/prewarm_$x.log")"; done
i=0
for x in $ARMS; do
  i=$((i + 1))
  if [ "$(el)" -le ${BENCH_BY:-120} ]; then
    bench $x "$i$x" ${BENCH_TIMEOUT:-20} --only f16-64,bf16-64 --also f16-128-full-4096,f16-128-causal-4096 --throwaway
  else echo "$NAME bench $i$x skipped ($(el) s)"; fi
done
python3 benchmarks/attention_ab.py "$D" --base A || true
python3 benchmarks/attention_ab.py "$D" --base G || true
if [ "${TESTS:-1}" = 1 ] && [ "$(el)" -le ${TESTS_BY:-125} ]; then
  xd=(); python3 -c "import xdist" 2>/dev/null && xd=(-n 8)  # (the compiles in parallel where pytest-xdist is there)
  timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -m gpu -p no:cacheprovider "${xd[@]}" tests/std/test_attention_wg3_gpu.py \
    > "$D/tests.log" 2>&1
  echo "$NAME gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
else echo "$NAME gpu tests skipped ($(el) s)"; fi
pack
