#!/usr/bin/env bash
# One device call for the decode GEMVs' shared-memory ring (issue 17, h17,
# sixth session): `std::llm`'s GEMVs with ST >= 3 stream their weight tiles
# through a per-thread cp.async ring of ST stages (`stream_loads`) instead of
# register loads. benchmarks/decode_ab.py at Qwen3-4B ctx 1,024 (main's plan
# against ring variants per matrix, the plan repeated last: the card's
# drift), the first two variants profiled per kind; then 0.6B; then the GPU
# test of the ring GEMVs against TorchQwen3. From the checkout's root:
# OUT=dir bash benchmarks/gemv_ring_device.sh; one file back, $OUT/ring.tgz.
set -uo pipefail
. benchmarks/device_env.sh ring
nvidia-smi -L
ALL='"bk": {"qkv": 256, "o": 512, "gate_up": 128, "down": 512, "lm": 256}, "st": {"qkv": 4, "o": 4, "gate_up": 4, "down": 4, "lm": 4}'
V4B="[{}, {$ALL}, {\"bk\": {\"o\": 512, \"down\": 512}, \"st\": {\"o\": 4, \"down\": 4}},
 {\"bk\": {\"gate_up\": 128}, \"st\": {\"gate_up\": 4}}, {\"bk\": {\"qkv\": 256}, \"st\": {\"qkv\": 4}},
 {\"bk\": {\"lm\": 256}, \"st\": {\"lm\": 4}}, {\"bk\": {\"o\": 512, \"down\": 512}, \"st\": {\"o\": 6, \"down\": 6}}, {}]"
V06='[{}, {"bk": {"qkv": 256, "o": 512, "gate_up": 256, "down": 512, "lm": 256}, "st": {"qkv": 4, "o": 4, "gate_up": 4, "down": 4, "lm": 4}}, {}]'
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-40}; pack
}
ab ab_4b ${T1:-80} --model 4b --contexts 1024 --variants "${V4B_OVERRIDE:-$V4B}" --profile-first 2
TAIL=8 ab ab_06b ${T2:-30} --model 0.6b --contexts 1024 --variants "$V06"
timeout ${TEST_TIMEOUT:-30} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "ring_gemvs" > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
