#!/usr/bin/env bash
# hfix4 (2026-12-07 06:02 session): the wgmma kernels after `HopperOps.warpgroup_rows` moved the second consumer
# warpgroup's A descriptor in its 32-bit address field (it added the row offset to the 64-bit descriptor, the form
# ptxas 13.0 miscompiled in hwg's column split). CPU: 0 descriptor faults in the SASS of every wgmma kernel before
# and after (`benchmarks/ptx_sha.py --faults`), registers and spills unchanged, SASS +-8 instructions; PTX changed
# in every flash_attention / _lse kernel and the Qwen3 0.6B engine's Hopper gemm. Not yet run on a GPU.
#
#     bash benchmarks/hfix4_device.sh        (~120-180 s on an H100 / H200 with a fresh compile cache)
#
# Expected:
# - gpu tests (std's attention against SDPA, the attention pipeline's GPU cases, the persistent Hopper GEMM with
#   two consumer warpgroups): all passed, as on main (a wrong A descriptor would put the second warpgroup's rows on
#   the first's: errors of O(1)).
# - prefill rows (the new form only; attention.py, default switches): f16 D = 128 full S = 4,096 ~698-700 TFLOP/s on
#   the H100 (call 32: 698.6), f16 D = 64 as the last call's within +-1 %; causal alike. No change is expected
#   beyond the spread (the offset is set up once a tile, off the key loop).
set -uo pipefail
NAME=hfix4; . benchmarks/attention_arms.sh
arm() { echo ""; }
timeout ${TEST_TIMEOUT:-150} python3 -m pytest -q -n 2 -m gpu -p no:cacheprovider tests/std/test_attention_gpu.py \
  tests/backend/test_attention_pipeline.py tests/backend/test_gpu_gemm_persistent.py > "$D/tests.log" 2>&1
echo "hfix4 gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"
grep -E "^(FAILED|ERROR)" "$D/tests.log" | head -8 | cut -c1-300
bench N 1 ${BENCH_TIMEOUT:-100} --only f16-128,f16-64 --seqs 4096
pack
