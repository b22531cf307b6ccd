#!/usr/bin/env bash
# One device call for issue 17 (h17, 2026-12-03 third session): the decode
# step's split merge inside the ring attention (`Plan.fm` = NC: the block of
# each KV head that arrives last merges the head's splits, NC a step, by
# `if last_block(1)`; no `combine_splits` launch: 5 launches a layer instead
# of 6) against main's plan in ONE process, main's plan first and last and
# fm 8 second and second-to-last (the card's drift), at 4B 1,024 (with the
# per-kind profile of the first two rows), then 8,192; then the GPU tests of
# the form (teacher-forced logits against TorchQwen3 in both graph APIs) and
# of std::attention's fused decode (the group counters in graphs: one buffer
# a capture now). V1/V8: the variants; T1/T8/TT: the steps' timeouts.
# From the checkout's root: OUT=dir bash benchmarks/merge_in_attention_device.sh;
# one file back, $OUT/fm.tgz.
set -uo pipefail
. benchmarks/device_env.sh fm
nvidia-smi -L; date -u; echo "tree $(cat COMMIT 2>/dev/null || git log -1 --format=%h)"
V1=${V1:-'[{}, {"fm": 8}, {"fm": 4}, {"fm": 16}, {"fm": 8, "short_ns": 8}, {"fm": 8, "pe": 1},
  {"fm": 8, "pdl": "late+loads", "st": {"o": -1}}, {"fm": 8}, {}]'}
V8=${V8:-'[{}, {"fm": 8}, {}]'}
ab() {  # name timeout args...
  local n=$1 t=$2; shift 2
  timeout $t python3 benchmarks/decode_ab.py "$@" --out "$D/$n" > "$D/$n.log" 2>&1
  grep -v Warn "$D/$n.log" | grep -v "^$" | tail -${TAIL:-60}; pack
}
ab ab_4b ${T1:-90} --model 4b --contexts 1024 --variants "$V1" --profile-first 2
TAIL=5 ab ab_4b_8k ${T8:-25} --model 4b --contexts 8192 --variants "$V8" --rounds 2
timeout ${TT:-45} python3 -m pytest -q -p no:cacheprovider tests/llm/test_engine_gpu.py tests/std/test_attention_gpu.py \
  -k "merge_inside_the_ring or fused_decoding_matches_sdpa" > "$D/tests.log" 2>&1; tail -4 "$D/tests.log"; pack
date -u
