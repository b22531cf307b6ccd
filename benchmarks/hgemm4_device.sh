#!/usr/bin/env bash
# hgemm4 (2026-12-06, round 18): GEMM epilogues that fell off the Hopper pipeline, the rule on (default) and off
# (TILEC_GEMM_EPILOGUE_OPS=0: as before round 18), one process an arm, on the same card. One step, ~60-100 s on an
# H100 (each process cut at 55 s: <= 115 s in all).
#
#     bash benchmarks/hgemm4_device.sh
#
# One line a case and arm: ours, TFLOP/s, torch's (cuBLAS then its element-wise epilogue kernels), ratio = torch /
# ours, same = allclose. Expected (benchmarks/hgemm4_device.py's header): rule on, every case ~ the linear
# baseline's ratio (0.95-1.15x: the same wgmma pipeline, the small tile's expression a few register ops a column);
# rule off, scaled_bias / col_mask / item_scale / col_scale on sm_80's ring + mma.sync, ~0.4-0.7x.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
timeout 55 python3 benchmarks/hgemm4_device.py --reps 20 2>&1 | grep -v '^#'
TILEC_GEMM_EPILOGUE_OPS=0 timeout 55 python3 benchmarks/hgemm4_device.py --reps 20 --only _ 2>&1 | grep -v '^#'
