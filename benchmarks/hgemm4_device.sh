#!/usr/bin/env bash
# hgemm4 (2026-12-06, round 18) on the GPU, one step (<= 90 s on an H100: each process cut by `timeout`):
#
#     bash benchmarks/hgemm4_device.sh            # parts fma + fmasplit
#     STEP=epilogue bash benchmarks/hgemm4_device.sh   # or STEP=fma, STEP=fmasplit
#
# Part `epilogue` (~50-70 s): GEMM epilogues that fell off the Hopper pipeline, the rule on (default) and off
# (TILEC_GEMM_EPILOGUE_OPS=0: as before round 18), one process an arm. One line a case and arm: ours, TFLOP/s,
# torch's (cuBLAS then its element-wise epilogue kernels), ratio = torch / ours, same = allclose. Expected
# (benchmarks/hgemm4_device.py's header): rule on, every case ~ the linear baseline's ratio (0.95-1.15x: the same
# wgmma pipeline, the small tile's expression a few register ops a column); rule off, scaled_bias / col_mask /
# item_scale / col_scale on sm_80's ring + mma.sync, ~0.4-0.7x.
#
# Part `fma` (~35-50 s): f32 GEMMs on the FMA pipeline with A (nn) or A and B^T (nt) stored transposed in their
# rings (TILEC_FMA_TRANSPOSE=1, opt-in), beside the default rows and tn (`python benchmarks/fma_gemm.py
# --transpose`). Expected, and why: ptxas 13 gives the transposed 128x128x16 kernels 128 registers with no
# spill (nn 168 -> 128, nt 168 -> 128: the `.maxnreg 128` of 8 warps with a transposed ring, 2 CTAs an SM),
# the registers tn has (0.92x in call 22, nn 0.83x, nt 0.81x): expect nn and nt at 128x128x16 ~0.88-0.92x if the
# 4-byte copies (a thread's 16-byte run of a row by 4 cp.async.ca) keep up; MAXNREG=255 (151 registers, one CTA
# an SM) tells occupancy from the copies. 64x64x16: 159 / 129 registers (6 CTAs an SM either way): ~the default's
# 0.82x, nt maybe above (254 -> 129 registers). If the transposed rows read below the defaults, the copies cost
# more than the reads save (then an LDG.128 + 4 STS path is the next try).
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# Part `fmasplit` (~15-30 s): f32 GEMMs of few tiles on the FMA pipeline, split-K's variant (now the default for
# few tiles) vs one tile a CTA (TILEC_GEMM_SPLITK=0) vs torch (`hgemm4_device.py --fma-split`; expected there).
# `all` = fma + fmasplit (the epilogue part ran in call 25: STEP=epilogue runs it again).
step="${STEP:-all}"
if [ "$step" = epilogue ]; then
  timeout 36 python3 benchmarks/hgemm4_device.py --reps 20 2>&1 | grep -v '^#'
  TILEC_GEMM_EPILOGUE_OPS=0 timeout 30 python3 benchmarks/hgemm4_device.py --reps 20 --only _ 2>&1 | grep -v '^#'
fi
if [ "$step" = all ] || [ "$step" = fma ]; then
  timeout 52 python3 benchmarks/fma_gemm.py --transpose --reps 8 2>&1 | grep -v '^  File\|^Traceback'
fi
if [ "$step" = all ] || [ "$step" = fmasplit ]; then
  timeout 35 python3 benchmarks/hgemm4_device.py --fma-split --reps 10 2>&1 | grep -v '^#'
fi
