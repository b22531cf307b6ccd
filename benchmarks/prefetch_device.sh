#!/usr/bin/env bash
# One device call for the decode GEMVs' next-weights L2 prefetch (issue 17,
# h17, 2026-12-03): `Plan.pf` (std::llm's `prefetch_next`: once its loads are
# back, each GEMV block bulk-prefetches into L2 its share of the next
# matrix's first columns; the QKV GEMV's share of all of W_o runs during the
# attention) against main's plan, at 4B 1,024 (main's plan profiled per kind
# first, and repeated last: the card's drift), then 8,192 and 32,768 with the
# two prefetch forms expected to pay, then the GPU tests of the plan form.
# benchmarks/decode_ab.py. T1/T2/TT: the steps' timeouts; V1/VL: the variants.
# CALL=2 (the second call): benchmarks/l2_probe.py (an issuer's cost, a
# reader's gain from L2), then the same forms by lines (`prefetch_lines`,
# PL 1) at 4B 1,024, then the GPU tests.
# From the checkout's root: OUT=dir bash benchmarks/prefetch_device.sh; one
# file back, $OUT/pf.tgz.
set -uo pipefail
. benchmarks/device_env.sh pf
nvidia-smi -L; date -u
O='"o": [8, 4096]'                                  # all of W_o, by the QKV GEMV (21 MB at 4B)
G='"gate_up": [64, 256], "down": [16, 2048], "qkv": [32, 512]'  # the next GEMV's first K step
V1=${V1:-"[{}, {\"pf\": {$O}}, {\"pf\": {\"o\": [8, 2048]}}, {\"pf\": {$G}}, {\"pf\": {$O, $G}},
  {\"pf\": {$O, \"gate_up\": [64, 512], \"down\": [8, 4096], \"qkv\": [32, 1024]}}, {}]"}
VL=${VL:-"[{}, {\"pf\": {$O, $G}}]"}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-45}; pack
}
if [[ ${CALL:-1} == 2 ]]; then
  timeout ${TP:-30} python3 benchmarks/l2_probe.py --reps 5 > "$D/probe.log" 2>&1; tail -12 "$D/probe.log"; pack
  OL='"o": [8, 4096, 1]'; GL='"gate_up": [64, 256, 1], "down": [16, 2048, 1], "qkv": [32, 512, 1]'
  V2="[{}, {\"pf\": {$OL}}, {\"pf\": {$GL}}, {}]"
  ab ab_4b_lines ${T1:-30} --model 4b --contexts 1024 --variants "$V2" --rounds 2
else
  ab ab_4b ${T1:-90} --model 4b --contexts 1024 --variants "$V1" --profile-first 1
  TAIL=8 ab ab_4b_long ${T2:-40} --model 4b --contexts 8192,32768 --variants "$VL"
fi
timeout ${TT:-20} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "prefetch$([[ ${CALL:-1} == 2 ]] || echo ' or ring_gemvs')" > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
date -u
