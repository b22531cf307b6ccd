#!/usr/bin/env bash
# One device call for issue 17 (h17, 2026-12-03 fourth session): what each
# kind of launch costs the decode step where it sits in the chain
# (`decode_ab.py --marginal-first`: the step's graph with one kind of launch
# left out at a time, `decode._marginal_step`), for `attn_decode_ring` (ea 0)
# and the default `attn_decode_ring_early` (ea 3), at 4B 1,024 (then 8,192
# for ea 3): why the attention's 1.2 us alone became 0.2 us in the step.
# V1/V8: the variants; T1/T8: the steps' timeouts.
# From the checkout's root: OUT=dir bash benchmarks/step_marginal_device.sh;
# one file back, $OUT/mg.tgz.
set -uo pipefail
. benchmarks/device_env.sh mg
nvidia-smi -L; date -u; echo "tree $(cat COMMIT 2>/dev/null || git log -1 --format=%h)"
V1=${V1:-'[{"ea": 0}, {}, {"ea": 0}]'}
V8=${V8:-'[{}]'}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-80}; pack
}
ab mg_4b ${T1:-60} --model 4b --contexts 1024 --variants "$V1" --rounds 2 --marginal-first 2
ab mg_4b_8k ${T8:-30} --model 4b --contexts 8192 --variants "$V8" --rounds 2 --marginal-first 1
date -u
