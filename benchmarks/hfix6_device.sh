#!/usr/bin/env bash
# hfix6 (2026-12-07 08:53 session; CPU-only when written): the GPU halves of what hfix6 moved without running them
# on a card. (1) tests/backend/test_attention_last_block.py's two SDPA tests (4 cases each), now through one shared
# helper (`_matches_sdpa`, with test_decode_wg_pipeline's `_sdpa_case` drawing q, k, v as before); (2) the GPU cases
# of the tests whose stand-in devices and shared kernels changed (misaligned tensors, bf16 in f32 memory, the GPU
# error tests); (3) benchmarks/hrev24_device.sh, whose kernels now come from tests/backend/shared_kernels.py; (4) a
# bad TILEC_LAUNCH / TILEC_PREWARM on a real card: E0604 at the launch, exit 3. Expected (written before any run):
# "N passed, 0 failed" for (1)+(2); hrev24's three `ok` lines; two rows "rc=3 E0604". ~60-120 s warm.
# usage: bash benchmarks/hfix6_device.sh
set -uo pipefail
. benchmarks/device_env.sh hfix6
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_attention_last_block.py \
  tests/backend/test_misaligned_tensors.py tests/backend/test_bf16_f32_memory.py tests/runtime/test_gpu_errors_user.py \
  > "$D/tests.log" 2>&1
echo "tests rc=$?"; grep -E "^FAILED|^ERROR|passed|failed" "$D/tests.log" | tail -8 | cut -c1-200
timeout 120 bash benchmarks/hrev24_device.sh 2>&1 | tail -4
for sw in TILEC_LAUNCH=fast TILEC_PREWARM=no; do
  env "$sw" timeout 60 python3 -m tilelang run --device gpu examples/add.tile > "$D/$sw.out" 2> "$D/$sw.err"
  echo "$sw rc=$? $(grep -o 'error\[E0604\]' "$D/$sw.err" | head -1)"
done
pack
