#!/usr/bin/env bash
# One device call for the split merge folded into the O projection (issue 17,
# h17, eighth session): `Plan.om` = (BN, MB) of `merge_gemv_add` (the
# attention's split merge in the O GEMV's prologue, the residual add by
# atomics: one launch a layer fewer) against main's plan (`combine_splits` +
# `gemv_add`). benchmarks/decode_ab.py at Qwen3-4B ctx 1,024 (the plan
# repeated last: the card's drift), the first two variants profiled per
# kind; then 0.6B; then the GPU test of the fused step against TorchQwen3.
# From the checkout's root: OUT=dir bash benchmarks/merge_o_device.sh; one
# file back, $OUT/om.tgz.
set -uo pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; D=$(mktemp -d /tmp/om.XXXX)/om; mkdir -p "$D"
export TILEC_CACHE_DIR=${TILEC_CACHE_DIR:-/tmp/tilec-cache}
pack() { tar -C "$(dirname "$D")" -czf "$OUT/om.tgz" om; }
nvidia-smi -L
V4B='[{}, {"om": [128, 4]}, {"om": [64, 0]}, {"om": [128, 5]}, {"om": [64, 6]}, {}]'
V06='[{}, {"om": [32, 4]}, {"om": [64, 0]}]'
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-40}; pack
}
ab ab_4b ${T1:-45} --model 4b --contexts 1024 --variants "${V4B_OVERRIDE:-$V4B}" --profile-first ${PROF:-2}
TAIL=5 ab ab_06b ${T2:-15} --model 0.6b --contexts 1024 --variants "$V06"
timeout ${TEST_TIMEOUT:-25} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "merge_folded" > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
