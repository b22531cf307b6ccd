#!/usr/bin/env bash
# Issue 17, h17r (2026-12-05, session 11:48-14:48), round 1: the engine's decode at Qwen3-4B ctx 1,024 on the
# card the loan gives (H100 or H200), main's plan against opt-in forms that change no default kernel:
#   tk   `argmax_fold` (this branch): the greedy token choice with the LM head's 9,496 per-block maxima folded lane
#        by lane over chunks of TK (2 reductions a step) instead of `argmax_step` (3 block reductions a chunk of
#        1,024: 10 chunks, ~30 reductions in a row, one block, at the end of every step)
#   mr   `combine_rows` (h17, 2026-12-04; never run on a GPU for time): the split merge with no barrier
#   rs   small tiles held whole by every thread (H100 call A: +0.4 %), and the three stacked
#   short_ns 17 / 32 with mr: 17 or 32 splits a KV head below 8,192 positions (2 key tiles a split at 1,025-1,031,
#        not 3: cdiv(33, 16) = 3), merged by `combine_rows` (H200 2026-12-04: 32 splits -0.55 % with
#        `combine_splits`, whose block grew 1.46 -> 2.06 us); 17: 136 blocks (8 KV heads), 17 rows to fold
# One device step, <= ~150 s warm on a 16-core H100/H200. From the checkout's root after
# `pip install --no-deps -e .`, TILEC_CACHE_DIR set by the caller:
#   1. decode_ab.py --model 4b --contexts 1024 --rounds 4 --reps 6, main's plan first and last (same tokens
#      in every row), one process; each row printed as it finishes                                   <= 105 s
#   2. the GPU tests of the new form and of `mr`: tests/llm/test_engine_gpu.py -k "folded_token or
#      merge_by_rows" (4 tests: greedy tokens = argmax_step's in both graphs, teacher-forced logits against
#      TorchQwen3, argmax_fold on ties across chunks at the LM head's 9,496 blocks)                     <= 40 s
# Expected: benchmarks/RESULTS.md, section "h17r". Prints the rows ("ctx   1024 {...} NNN tok/s ...") and one
# line a step; writes $OUT/h17r.tgz (logs, ab json).
# usage on the device machine, from the checkout's root:  bash benchmarks/h17r_device.sh
set -uo pipefail
. benchmarks/device_env.sh h17r
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
V=${V:-'[{}, {"tk": 4096}, {"mr": 16}, {"rs": 1}, {"rs": 1, "mr": 16, "tk": 4096}, {"short_ns": 17, "mr": 16}, {"short_ns": 32, "mr": 16}, {}]'}
timeout ${AB_TIMEOUT:-105} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 4 --reps 6 \
  --variants "$V" --out "$D/ab" > "$D/ab.log" 2>&1
echo "h17r decode_ab (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab.log"
timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -p no:cacheprovider -m gpu tests/llm/test_engine_gpu.py \
  -k "folded_token or merge_by_rows" > "$D/tests.log" 2>&1
echo "h17r gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR|Error" "$D/tests.log" | head -8
pack; echo "h17r done ($(el) s): $OUT/h17r.tgz"
