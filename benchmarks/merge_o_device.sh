#!/usr/bin/env bash
# Device calls for the O projection after the attention (issue 17, h17,
# eighth session). MODE=om: `Plan.om` = (BN, MB) of `merge_gemv_add` (the
# attention's split merge in the O GEMV's prologue, the residual add by
# atomics: one launch a layer fewer) against main's plan (`combine_splits` +
# `gemv_add`), the first two variants profiled per kind, 0.6B, the GPU test
# of the fused step against TorchQwen3. MODE=pe (default): `Plan.pe` (the
# ring attention and the merge trigger at entry: the O GEMV's blocks resident
# during the attention) with PDL "+loads" (their first weight tile read
# there), at 4B 1,024 (the plan repeated last: the card's drift), 8,192 and
# 32,768, 0.6B, then the GPU test of PDL's tokens. benchmarks/decode_ab.py.
# SKIP06=1: no 0.6B; V4B_OVERRIDE, T1/T2/T3, TEST_TIMEOUT: the variants and step timeouts.
# From the checkout's root: OUT=dir bash benchmarks/merge_o_device.sh; one
# file back, $OUT/om.tgz.
set -uo pipefail
. benchmarks/device_env.sh om
nvidia-smi -L
if [[ ${MODE:-pe} == om ]]; then
  V4B='[{}, {"om": [128, 4]}, {"om": [64, 0]}, {"om": [128, 5]}, {"om": [64, 6]}, {}]'
  V06='[{}, {"om": [32, 4]}, {"om": [64, 0]}]'; VL=''; K=merge_folded; PROF=${PROF:-2}
else
  L='"pdl": "late+loads", "pe": 1, "st": {"o": -1}'
  V4B="[{}, {\"pdl\": \"late+loads\", \"st\": {\"o\": -1}}, {\"pe\": 1}, {$L}, {$L, \"bk\": {\"o\": 4096}},
   {\"pdl\": \"late+loads\", \"pe\": 1, \"st\": {\"o\": -1, \"qkv\": -1, \"gate_up\": -1, \"down\": -1}}, {}]"
  V06="[{}, {$L}]"; VL="[{}, {$L}]"; K=pdl_decodes; PROF=${PROF:-0}
fi
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-40}; pack
}
ab ab_4b ${T1:-45} --model 4b --contexts 1024 --variants "${V4B_OVERRIDE:-$V4B}" --profile-first $PROF
[[ -n $VL ]] && TAIL=6 ab ab_4b_long ${T3:-20} --model 4b --contexts 8192,32768 --variants "$VL"
[[ ${SKIP06:-0} == 1 ]] || TAIL=5 ab ab_06b ${T2:-15} --model 0.6b --contexts 1024 --variants "$V06"
timeout ${TEST_TIMEOUT:-30} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "$K" > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
