#!/usr/bin/env bash
# A confirming device call for issue 17 (h17, 2026-12-03 fifth session): the
# streamed down projection (`Plan.sk`, `plan.STREAM_DOWN`) against the
# one-wave form in one decode_ab process, alternating, at
# 4B 1,024 (per-kind profiles of the first two rows) and 8,192; then the GPU
# test of the streamed GEMVs against TorchQwen3. From the checkout's root:
# OUT=dir bash benchmarks/stream_confirm_device.sh; one file back, $OUT/skc.tgz.
set -uo pipefail
. benchmarks/device_env.sh skc
nvidia-smi -L; date -u; echo "tree ${TREE:-unknown: pass TREE=<commit>}"
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | grep -v "^|---" | grep -v "^| \(embed\|kv_append\|argmax_step\|combine\)" | tail -${TAIL:-40}; pack
}
ON='{"sk": {"down": [32, 256, 3, 3]}}'
ab skc_4b ${T1:-45} --model 4b --contexts 1024 --variants "[{}, $ON, {}, $ON, {}, $ON]" --profile-first 2
TAIL=5 ab skc_4b_8k ${T8:-25} --model 4b --contexts 8192 --variants "[{}, $ON, {}, $ON]" --rounds 2
timeout ${TT:-25} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py -k "streamed" \
  > "$D/tests.log" 2>&1; tail -2 "$D/tests.log"; pack
date -u
