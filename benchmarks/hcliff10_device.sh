#!/usr/bin/env bash
# hcliff10 (2026-12-07): f32 `erf` computed in f32 (`codegen/arith.ferf`, `fastmath.ERF_SMALL`/`ERF_BIG`: x + x Q(x^2)
# below |x| = 1, sign(x) (1 - exp(-t^2 + P(t - 2.5))) above, within 2 ulp) instead of the interpreter's f64 series
# rounded once (`f64math.erf_f32`, `TILEC_ERF_F32=0`: ~138 SASS instructions an element, 56 FSEL and ~56 on the
# half-rate FP64 pipe; hcliff9's measurement). New and old arms in separate processes, each against PyTorch in the
# same process; ~60-110 s on an H100.
#
#     bash benchmarks/hcliff10_device.sh
#
# Lines are huser16_paths.py's (ours ms, torch ms, ratio = torch / ours; err), prefixed by arm. Expected (RESULTS.md
# 'hcliff10'; CPU-only estimate, not measured):
# - `mlp erf` (the natural fused MLP, exact GELU, T = 16384, D = 128, H = 512; call 18: 0.83x torch): the erf was
#   ~36 M warp-instructions of issue (~38 us) against torch's whole MLP (~25 us); the f32 form is ~35 FP32-pipe
#   instructions an element (about `mlp tanh`'s GELU, which measured 1.77x). Expect new **~1.4-1.8x torch**, old
#   ~0.8x; new/old time ~0.45-0.6.
# - `mlp inner erf` (the attention pipeline; call 18: 0.49x torch's inner chain): expect new ~0.8-1.3x, old ~0.5x.
# - `mlp tanh` (new arm only): the reference the erf form should now approach (~1.8x).
# - gpu-check: tests/backend/test_erf_f32_fast.py's gpu case (every 1021st f32 of [0, 4.5) and its negation on the
#   card within 2 ulp of math.erf: the real MUFU's error, which the CPU tests model) and the erf user programs on
#   the card against the interpreter (o01, c02, e06, p16): expect all passed.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
run() {  # arm, case (--only), reps, env...
  local arm=$1 case=$2 reps=$3; shift 3
  env "$@" timeout 45 python3 benchmarks/huser16_paths.py --only "$case" --reps "$reps" 2>&1 | grep -v '^#' \
    | sed "s/^/$arm /"
}
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
run new erf 20
run old erf 20 TILEC_ERF_F32=0
run new "mlp tanh" 20
timeout 40 python3 -m pytest -q -p no:cacheprovider -m gpu -n 4 tests/backend/test_erf_f32_fast.py \
  tests/user/test_user_gpu.py -k "erf or o01 or c02 or e06 or p16" 2>&1 | tail -3 | sed "s/^/gpu-check /"
