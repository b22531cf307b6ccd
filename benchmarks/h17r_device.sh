#!/usr/bin/env bash
# Issue 17, h17r (2026-12-05, session 11:48-14:48), round 1: the engine's decode at Qwen3-4B ctx 1,024 on the
# card the loan gives (H100 or H200), main's plan against opt-in forms that change no default kernel:
#   tk   `argmax_fold` (this branch): the greedy token choice with the LM head's 9,496 per-block maxima folded lane
#        by lane over chunks of TK (2 reductions a step) instead of `argmax_step` (3 block reductions a chunk of
#        1,024: 10 chunks, ~30 reductions in a row, one block, at the end of every step)
#   mr   `combine_rows` (h17, 2026-12-04; never run on a GPU for time): the split merge with no barrier
#   me   (this branch) the split merge alone triggers the O GEMV at its entry, and under "late+loads" the O GEMV
#        (ST -1) reads its first weight tile (8 x 2,048, 32 KB a block, 10 MB in all) before its wait, while the
#        merge runs (~1-2 us a layer in which the DRAM idles); the row without `me` is the control (O's blocks
#        scheduled only once the merge's blocks pass their loop)
#   ge   (this branch) the GEMVs named trigger the next launch at their entry: the next GEMV's blocks take the
#        room the running GEMV leaves (every decode GEMV has one shared-memory configuration, unlike the
#        attention and the merge, which made the trigger "last" for every kernel lose 4.4 % on the H200), and
#        under "late+loads" with the next GEMV at ST -1 read their first weight tile during the running GEMV's
#        tail; O and down (-> gate/up, -> the next QKV), or gate/up alone (-> down): never two adjacent, so no
#        chain of early launches (the trigger "entry" for every kernel: -11 %)
#   rs   small tiles held whole by every thread (H100 call A: +0.4 %), here stacked with mr and tk
#   short_ns 17 with mr: 17 splits a KV head below 8,192 positions (2 key tiles a split at 1,025-1,031, not 3:
#        cdiv(33, 16) = 3), 136 blocks, merged by `combine_rows` (17 rows to fold)
# One device step, <= ~150 s warm on a 16-core H100/H200. From the checkout's root after
# `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. decode_ab.py --model 4b --contexts 1024 --rounds 4 --reps 6, main's plan first and last (same tokens
#      in every row), one process; each row printed as it finishes                                   <= 110 s
#   2. the GPU tests of the new forms (5): tests/llm/test_engine_gpu.py -k "folded_token or merge_trigger or
#      gemv_entry": tk: greedy tokens = argmax_step's in both graphs, argmax_fold on ties across chunks at 9,496
#      blocks; me with combine_splits and with combine_rows (mr 16), ge with every later GEMV peeled:
#      teacher-forced logits against TorchQwen3, the greedy tokens of the plan without PDL              <= 35 s
# Expected: benchmarks/RESULTS.md, section "h17r". Prints the rows ("ctx   1024 {...} NNN tok/s ...") and one
# line a step; writes $OUT/h17r.tgz (logs, ab json).
# Round 2 (ROUND=2): V2's plans (round 1's winner apart and with rs) at 1,024 and 8,192, main's first and last,
# <= 100 s (decode_ab's 14 rows, ~3 s a row after a 1-2 s engine start on a warm cache).
# usage on the device machine, from the checkout's root:  bash benchmarks/h17r_device.sh  (ROUND=2 bash ...)
set -uo pipefail
. benchmarks/device_env.sh h17r
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
E='"pdl": "late+loads", "st": {"o": -1}'
L='"pdl": "late+loads"'
V=${V:-'[{}, {"tk": 4096}, {"mr": 16}, {"me": 1, '"$E"'}, {"me": 1, "mr": 16, '"$E"'}, {'"$E"'},
  {"ge": ["o", "down"], '"$L"', "st": {"gate_up": -1, "qkv": -1}}, {"ge": ["gate_up"], '"$L"', "st": {"down": -1}},
  {"rs": 1, "mr": 16, "tk": 4096}, {"short_ns": 17, "mr": 16}, {}]'}
if [ "${ROUND:-1}" = 2 ]; then  # round 2: round 1's winner (ge [o, down], +0.4..+0.5 %) taken apart and with rs, at
  # 1,024 and 8,192 (what promoting it needs): the entry triggers alone (no early loads), O -> gate/up alone, down ->
  # the next QKV alone; no tests (round 1's 5 GPU tests passed)
  L='"pdl": "late+loads"'
  V2=${V2:-'[{}, {"ge": ["o", "down"], '"$L"', "st": {"gate_up": -1, "qkv": -1}}, {"ge": ["o", "down"]},
    {"ge": ["o"], '"$L"', "st": {"gate_up": -1}}, {"ge": ["down"], '"$L"', "st": {"qkv": -1}},
    {"ge": ["o", "down"], "rs": 1, '"$L"', "st": {"gate_up": -1, "qkv": -1}}, {}]'}
  timeout ${AB_TIMEOUT:-100} python3 benchmarks/decode_ab.py --model 4b --contexts 1024,8192 --rounds 4 --reps 6 \
    --variants "$V2" --out "$D/ab2" > "$D/ab2.log" 2>&1
  echo "h17r round 2 decode_ab (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab2.log"
  pack; echo "h17r done ($(el) s): $OUT/h17r.tgz"; exit 0
fi
timeout ${AB_TIMEOUT:-110} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 4 --reps 6 \
  --variants "$V" --out "$D/ab" > "$D/ab.log" 2>&1
echo "h17r decode_ab (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab.log"
timeout ${TEST_TIMEOUT:-35} python3 -m pytest -q -p no:cacheprovider -m gpu tests/llm/test_engine_gpu.py \
  -k "folded_token or merge_trigger or gemv_entry" > "$D/tests.log" 2>&1
echo "h17r gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR|Error" "$D/tests.log" | head -8
pack; echo "h17r done ($(el) s): $OUT/h17r.tgz"
