#!/usr/bin/env bash
# One device call for issue 17 (h17, 2026-12-03 fourth session): the ring
# decode attention with its loads that wait only on `pos` issued earlier
# (`Plan.ea`, `std::llm::attn_decode_ring_early`: the ring's first K/V copies
# right after the query's loads instead of after its norm and rotary; EA 3
# also the current token's rows before the key loop), alone and with PDL
# "late+loads" (the attention's `pos` read before its wait), against main's
# plan in ONE process (main first and last, EA 3 third and second-to-last:
# the card's drift), at 4B 1,024 with the per-kind profile of the first
# three rows, then 8,192; then the GPU tests of the form.
# V1/V8: the variants; T1/T8/TT: the steps' timeouts.
# From the checkout's root: OUT=dir bash benchmarks/early_attention_device.sh;
# one file back, $OUT/ea.tgz.
set -uo pipefail
. benchmarks/device_env.sh ea
nvidia-smi -L; date -u; echo "tree $(cat COMMIT 2>/dev/null || git log -1 --format=%h)"
V1=${V1:-'[{}, {"ea": 1}, {"ea": 3}, {"pdl": "late+loads"}, {"ea": 3, "pdl": "late+loads"},
  {"ea": 3, "short_ns": 8}, {"ea": 1, "pdl": "late+loads"}, {"ea": 3}, {}]'}
V8=${V8:-'[{}, {"ea": 3}, {}]'}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-70}; pack
}
ab ab_4b ${T1:-90} --model 4b --contexts 1024 --variants "$V1" --profile-first 3
TAIL=5 ab ab_4b_8k ${T8:-25} --model 4b --contexts 8192 --variants "$V8" --rounds 2
timeout ${TT:-35} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py \
  -k "early_ring or pdl_decodes" > "$D/tests.log" 2>&1; tail -4 "$D/tests.log"; pack
date -u
