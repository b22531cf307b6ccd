#!/bin/bash
# hrev14 (hostile review, round 14): the GPU checks this round could only run
# on llsim. One step, <= 120 s on a warm H100/H200:
#  1. tests/backend/test_cluster.py's GPU tests: `#[cluster]` kernels against
#     the interpreter (llsim cannot run clusters; round 13's open item 4).
#     Expected: all pass (they passed when clusters landed).
#  2. benchmarks/kernel_diff.py on the real GPU for ~60 s: random element-wise
#     kernel bodies (--wide: shapes, arg-reductions, scans, any shift amount) on
#     a type's edge values, stored results bit for bit against the interpreter.
#     Expected: "0 disagreements" (llsim sm_80/sm_90a gave 0 on 4,000 programs
#     after round 14's fix; a disagreement here would be the hardware or ptxas
#     differing from llsim's model, e.g. a float->int conversion of NaN/inf, a
#     shift past the width, an f16/bf16 rounding).
# Prints one line a result.
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH=$PWD
timeout 55 python3 -m pytest -q -p no:cacheprovider tests/backend/test_cluster.py -m gpu 2>&1 | tail -1 | sed 's/^/cluster gpu tests: /'
timeout 62 python3 -W ignore benchmarks/kernel_diff.py 14 100000 --device --wide --seconds 55 2>&1 | tail -8 | sed 's/^/kernel_diff gpu: /'
