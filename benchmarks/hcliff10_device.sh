#!/usr/bin/env bash
# (herf, 2026-12-07 08:53 session: hcliff10's MUFU erf is gone; `TILEC_ERF_F32=1`, the default now, is herf's f32
# algorithm of correctly rounded operations on both engines: benchmarks/herf_device.sh measures it.)
# hcliff10 (2026-12-07): f32 `erf` computed in f32 (`codegen/arith.ferf`, `fastmath.ERF_SMALL`/`ERF_BIG`: x + x Q(x^2)
# below |x| = 1, sign(x) (1 - exp(-t^2 + P(t - 2.5))) above, within 2 ulp) instead of the interpreter's f64 series
# rounded once (`f64math.erf_f32`, `TILEC_ERF_F32=0`: ~138 SASS instructions an element, 56 FSEL and ~56 on the
# half-rate FP64 pipe; hcliff9's measurement). New and old arms in separate processes, each against PyTorch in the
# same process; ~80-120 s on an H100. Also `TILEC_STATIC_DIMS=1` (opt-in) on the 32,768 layernorm.
#
#     bash benchmarks/hcliff10_device.sh
#
# Lines are huser16_paths.py's and cliffs.py's (ours ms, torch ms, ratio = torch / ours; err), prefixed by arm. Expected (RESULTS.md
# 'hcliff10'; CPU-only estimate, not measured):
# - `mlp erf` (the natural fused MLP, exact GELU, T = 16384, D = 128, H = 512; call 18: 0.83x torch): the erf was
#   ~36 M warp-instructions of issue (~38 us) against torch's whole MLP (~25 us); the f32 form is ~35 FP32-pipe
#   instructions an element (about `mlp tanh`'s GELU, which measured 1.77x). Expect new **~1.4-1.8x torch**, old
#   ~0.8x; new/old time ~0.45-0.6.
# - `mlp inner erf` (the attention pipeline; call 18: 0.49x torch's inner chain): expect new ~0.8-1.3x, old ~0.5x.
# - layernorm rows of 32,768 (cliffs.py, examples/layernorm.tile's kernel at [1, 32768], 16 warps; call 18: 0.92x
#   torch), old = default, new = `TILEC_STATIC_DIMS=1` (opt-in: the `w`/`b` rows' bounds checks fold to the type's N;
#   ptxas: 340 B spills -> none, 127 registers). It moves 2 x 4 x 1024 x 32768 B = 268 MB (~90 us at ~3 TB/s): the
#   spills' local traffic is L1/L2-resident, so expect new ~0.95-1.05x torch (+3..+12 %), old ~0.92x; and
#   layernorm 4,096 (no spills either way, 227 -> 229 registers) unchanged within the spread (~1.4x).
# - gpu tests: tests/backend/test_erf32.py's gpu case (herf: the card bit for bit against the interpreter; call 35
#   ran test_erf_f32_fast.py, hcliff10's MUFU form, now removed) and the erf user programs on the card against the
#   interpreter (o01, c02, e06, p16): expect all passed.
set -u
. "$(dirname "$0")/arms.sh"
ARM_TIMEOUT=45 arm new TILEC_ERF_F32=1 -- python3 benchmarks/huser16_paths.py --only erf --reps 20
ARM_TIMEOUT=45 arm old TILEC_ERF_F32=0 -- python3 benchmarks/huser16_paths.py --only erf --reps 20
for a in old new; do  # the switch read at compile time: each arm its own process
  ARM_TIMEOUT=40 arm $a $([ $a = new ] && echo TILEC_STATIC_DIMS=1) -- python3 benchmarks/cliffs.py --only layernorm \
    --reps 20
done
TEST_TIMEOUT=40 TESTS_TAIL=3 gpu_tests -n 4 tests/backend/test_erf32.py tests/user/test_user_gpu.py \
  -k "erf or o01 or c02 or e06 or p16"
