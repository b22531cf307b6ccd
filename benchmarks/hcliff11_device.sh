#!/usr/bin/env bash
# hcliff11 (2026-12-07 08:53 session; written before any run, CPU-only so far). ~150-200 s on an H100, cold cache.
#
#     bash benchmarks/hcliff11_device.sh        (TESTS=0 / PREFILL=0 / PATHS=0 skip a part; REPS adjusts)
#
# 0. -m gpu: tests/backend/test_attention_once.py, the once variant as a launch picks it (f16 / bf16, D = 64 / 128,
#    3, 5 and 9 query blocks a head, 3-132 CTAs) against a float32 reference and its log-sum-exp; and
#    tests/backend/test_stream_loads.py, the hinted rings and the 4-token GEMV under TILEC_STREAM_AUTO=1 against
#    the interpreter: EXPECTED 8 passed.
# 1. Causal prefill of an odd number of 128-row query blocks a head (benchmarks/hcliff11_prefill.py, f16, 16k tokens
#    a call: B = 16,384 / S, 16 heads at D = 128, 32 at D = 64; std::attention vs SDPA in one process), the once
#    variant (O, the default: each head's middle tile once, two heads' middle tiles one pair) against the old walk
#    (A, TILEC_ATTN_ONCE=0: each middle tile twice), an arm a process, O A (ARMS="O A O A" for more). S = 1024
#    (8 blocks, even) is the control: the same kernels in both arms, ratio 1.00 +- the spread.
#    EXPECTED O/A time (the walk's rounds of equal pairs on 132 CTAs; the variant is the kernel without the split's
#    code and the tile boundary's switches, as the tail variant: +-3 % beside the rounds):
#      D = 128: S = 1100 (nf 9, B 14) ~0.89-0.93; S = 4200 (nf 33, B 3) ~0.86-0.97; S = 640 (nf 5) ~0.80-0.86;
#               S = 384 (nf 3) ~0.73-0.80
#      D = 64:  S = 1100 ~0.90-0.95; S = 4200 ~0.92-0.98; S = 640 ~0.83-0.88; S = 384 ~0.75-0.82
#      err < 1e-2 in both arms (the same values: every tile's key range is the old walk's).
# 2. hcliff11's natural kernels (benchmarks/hcliff11.tile, the docs' spellings) against PyTorch
#    (benchmarks/hcliff11_paths.py: ours ms, torch ms, ratio = torch / ours, err). EXPECTED (CPU reading of
#    sm_90a PTX, ptxas 13; RESULTS.md "hcliff11"):
#      softmax 1k / 8k ~0.8-1.2x (memory-bound, one row a block); softmax 64k ~0.9-1.6x (32 warps, 252 B spills
#      L1-resident; torch reads the row 3x); transpose ~0.6-1.0x (8-way shared-memory bank conflicts on the
#      transposed reads); add_rmsnorm ~0.8-1.2x; dwconv ~0.5-1.0x (4 row loads an output row, L2); cumsum
#      ~0.6-1.0x; argmax ~0.7-1.2x; embed ~0.7-1.1x; gemv (f16, 4 tokens, 64-row tiles: 128 CTAs of 4 warps, FMAs
#      through shared memory, no pipeline) ~0.1-0.3x; bias_silu ~0.8-1.2x; col_sum (64 CTAs, one 16 KB tile load a
#      CTA in flight) ~0.2-0.4x.
# 3. col_sum and gemv under TILEC_STREAM_AUTO=1 (new: the loop's loads through a per-thread cp.async ring of 3
#    stages, two tiles ahead; gemv's weight tile, its 4-token vector stays in registers; opt-in) against the default
#    (old), new old (STREAM_ARMS), a case a process. EXPECTED: col_sum new/old time ~0.5-0.75 (bytes in flight a CTA 16 ->
#    ~48 KB on 64 of 132 SMs), new ~0.4-0.8x torch; gemv new/old ~0.45-0.8 (the next tiles' loads under this
#    tile's FMAs: an iteration ~max(FMA phase, latency / 2) instead of their sum), new ~0.25-0.6x torch (still
#    128 CTAs of 4 warps and the FMAs through shared memory); err as old in both (the same sums, the same order).
set -u
. "$(dirname "$0")/arms.sh" TILEC_ATTN_ONCE TILEC_STREAM_AUTO  # (the arms share the kernels they both compile)
export ATTN_TRITON=0  # (attention.py imports its Triton peer otherwise; hcliff11_prefill.py times SDPA only)
# the once variant picked at launch (4 odd shapes) against f32 references
TEST_TIMEOUT=${TEST_TIMEOUT:-90} TESTS_TAIL=2 gpu_tests tests/backend/test_attention_once.py \
  tests/backend/test_stream_loads.py
if [ "${PREFILL:-1}" = 1 ]; then
  for a in ${ARMS:-O A}; do  # (hcliff11_prefill.py names the arm in its lines: ARM)
    ARM_TIMEOUT=${PREFILL_TIMEOUT:-90} arm $a TILEC_ATTN_ONCE=$([ "$a" = O ] && echo 1 || echo 0) ARM=$a -- \
      python3 benchmarks/hcliff11_prefill.py --reps ${REPS:-8}
  done
fi
if [ "${PATHS:-1}" = 1 ]; then
  ARM_TIMEOUT=${PATHS_TIMEOUT:-90} arm paths -- python3 benchmarks/hcliff11_paths.py --reps ${REPS:-10}
  for a in ${STREAM_ARMS:-new old}; do  # col_sum and gemv under TILEC_STREAM_AUTO
    for c in col_sum gemv; do
      ARM_TIMEOUT=${ARM_TIMEOUT:-40} arm $a TILEC_STREAM_AUTO=$([ $a = new ] && echo 1 || echo 0) -- \
        python3 benchmarks/hcliff11_paths.py --only $c --reps ${REPS:-10}
    done
  done
fi
