#!/usr/bin/env bash
# One device call for the decode GEMVs' read rate (issue 17, h17, 2026-12-03
# second session, round 2): gate/up and down in the LM head's form (small
# row tiles, many blocks in several waves at MB 3, the weights through the
# cp.async ring, ST 4) against main's one-wave register forms, in one
# process (main's plan first and last: the card's drift), at 4B 1,024 with
# a per-kind profile of main's plan and the combined forms (8,192 if T2 > 0); then
# the GEMVs alone (gemv_sweep.py, with cuBLAS) and the GPU tests of the forms.
# T1/T2/TS/TT: the steps' timeouts; V1/VL: the variants.
# From the checkout's root: OUT=dir bash benchmarks/gemv_waves_device.sh; one
# file back, $OUT/gw.tgz.
set -uo pipefail
. benchmarks/device_env.sh gw
# TREE: the commit synced to the device (inside .dev/NAME/tree `git log` shows the device checkout's)
nvidia-smi -L; date -u; echo "tree ${TREE:-unknown: pass TREE=<commit>}"
g() {  # gate/up: BN BK ST MB
  echo "\"bn\": {\"gate_up\": $1}, \"bk\": {\"gate_up\": $2}, \"st\": {\"gate_up\": $3}, \"mb\": {\"gate_up\": $4}"; }
d() {  # down: BN BK ST MB
  echo "\"bn\": {\"down\": $1}, \"bk\": {\"down\": $2}, \"st\": {\"down\": $3}, \"mb\": {\"down\": $4}"; }
BOTH='"bn": {"gate_up": 8, "down": 4}, "bk": {"gate_up": 256, "down": 1024}, "st": {"gate_up": 4, "down": 4}, "mb": {"gate_up": 3, "down": 3}'
# the four per-layer GEMVs in the head's form (QKV [8, 512]: 768 blocks, O [4, 1024]: 640)
ALL='"bn": {"qkv": 8, "o": 4, "gate_up": 8, "down": 4}, "bk": {"qkv": 512, "o": 1024, "gate_up": 256, "down": 1024}, "st": {"qkv": 4, "o": 4, "gate_up": 4, "down": 4}, "mb": {"qkv": 3, "o": 3, "gate_up": 3, "down": 3}'
V1=${V1:-"[{}, {$BOTH}, {$ALL}, {$(g 8 256 4 3)}, {$(g 8 256 4 4)}, {$(g 16 256 4 3)},
  {$(d 4 1024 4 3)}, {$(d 4 512 4 3)}, {}]"}
VL=${VL:-"[{}, {$BOTH}]"}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-60}; pack
}
ab ab_4b ${T1:-50} --model 4b --contexts 1024 --variants "$V1" --profile-first 3
[ "${T2:-0}" -gt 0 ] && TAIL=4 ab ab_4b_8k $T2 --model 4b --contexts 8192 --variants "$VL" --rounds 2
sw() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/gemv_sweep.py --reps 5 --out "$D/$n" "$@" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | grep -v "^plan:" | tail -12; pack
}
sw sw_gu ${TS:-8} --mats gate_up --only 1:32:256:3,4:8:256:3,4:16:256:3,4:8:256:4
sw sw_dn ${TS:-8} --mats down --only 1:8:2048:3,4:4:1024:3,4:4:512:3,4:4:1024:4
timeout ${TT:-20} python3 -m pytest -q -p no:cacheprovider \
  "tests/llm/test_engine_gpu.py::test_many_wave_ring_gemvs_match_torch[8-4]" > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
date -u
