#!/usr/bin/env bash
# One device call for the decode step's launch boundaries (issue 17, h17,
# 2026-12-03 second session): PDL's "last" trigger (each kernel lets the next
# grid launch at its main loop's last iteration, so the next GEMV's blocks
# that fit beside it are resident while its last loads drain) and "+loads"
# as it now compiles (the GEMVs' peeled first weight tile, ST -1, before
# `griddepcontrol.wait` in the SASS too: plain `ld.global`, which ptxas keeps
# there; it sank the `ld.global.nc` of before below the wait). Against
# main's plan in one process (first and last row: the card's drift), at 4B
# 1,024, then 8,192; then the GPU tests of the forms.
# benchmarks/decode_ab.py. T1/T2/TT: the steps' timeouts; V1/VL: the variants.
# From the checkout's root: OUT=dir bash benchmarks/pdl_last_device.sh; one
# file back, $OUT/pl.tgz.
set -uo pipefail
. benchmarks/device_env.sh pl
nvidia-smi -L; date -u; git log -1 --format='tree %h %s' 2>/dev/null || cat COMMIT 2>/dev/null
PEEL='"st": {"qkv": -1, "o": -1, "gate_up": -1, "down": -1}'
MB4='"mb": {"qkv": 4, "o": 4, "gate_up": 4, "down": 4}, "bk": {"o": 1024, "down": 1024}'
V1=${V1:-"[{}, {\"pdl\": \"last\"}, {\"pdl\": \"late+loads\", $PEEL}, {\"pdl\": \"last+loads\", $PEEL},
  {\"pdl\": \"last+loads\", $PEEL, $MB4}, {\"pdl\": \"last+loads\", $PEEL, \"pe\": 1}, {}]"}
VL=${VL:-"[{}, {\"pdl\": \"last+loads\", $PEEL}]"}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-45}; pack
}
ab ab_4b ${T1:-75} --model 4b --contexts 1024 --variants "$V1"
TAIL=6 ab ab_4b_8k ${T2:-25} --model 4b --contexts 8192 --variants "$VL" --rounds 2
timeout ${TT:-40} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "last_trigger or pdl_decodes" > "$D/tests.log" 2>&1; tail -3 "$D/tests.log"; pack
date -u
