#!/usr/bin/env bash
# Issue 17, h17t (2026-12-05, session 17:27-20:27): the engine's decode at Qwen3-4B ctx 1,024 on the card the loan
# gives (the issue names the H200), this branch's plan against the variants below, one process, the same tokens.
# This branch's default plan on sm_90 (promoted from h17r's rounds on the H100: +0.85 % at 1,024, +0.95 % at 8,192):
#   PDL "late+loads", O and down trigger the next GEMV at their entry (`Plan.ge` ("o", "down")), gate/up and QKV
#   at ST -1 (their first K step read before their wait), small tiles replicated (`Plan.rs` 1).
# Round 1 rows (ROUND=1, the default), ctx 1,024:
#   {}      the default above (first and last row)
#   OLD     main's plan before the promotion (PDL "late", no entry trigger, no peel, rs 0): the promotion on this card
#   attn    (this branch, new) `Plan.ge` + "attn": the ring attention alone triggers at its entry, so the split
#           merge's 32 blocks are scheduled while the attention runs and wait there (H100 trace, main: the merge's
#           first block starts 0.26 us after the attention's last block ends, its wait returns 0.19 us later);
#           the O GEMV after the merge as before (unlike `pe`, which moved O's blocks beside the attention's)
#   me      the merge triggers the O GEMV at its entry, O not peeled (h17r measured it only with O peeled)
#   ns32    32 splits a KV head below 8,192 (2 key tiles a split at 1,025-1,031, not 3) with the merge of 32 shares
#           at 1 barrier (small tiles up to 32 elements replicated, `rs` 32)
#   tw      (this branch, new) `Plan.tw` 16,384: the greedy token choice as `argmax_wide`, one block of 32 warps
#           over all 9,496 block maxima as one tile (10 a thread, both loads before the first barrier, 2
#           reductions) instead of `argmax_step` (4 warps, 10 chunks of 1,024: 2 L2 round trips and 3 block
#           reductions a chunk; 18.2 us of the H100's step in the lead's trace)
#   tk      h17r's `argmax_fold` 4,096 (4 warps, a tie on the H100) beside it, on the same card
#   down-1  down at ST -1: its first K step read during its wait (0.36 us after gate/up's end on the H100), no trigger
#   attn+tw both new forms
# Round 2 (ROUND=2, ~95 s): `tw` (promoted on this branch after round 1) and `me` apart at 4B 1,024 and 8,192,
# then at 0.6B and 8B (1,024): what their promotion needs (the lead's me + tw row lost 0.8 % at 0.6B).
# One device step, <= ~120 s warm on a 16-core H100/H200, from the checkout's root after `pip install --no-deps -e .`,
# TILEC_CACHE_DIR set by the caller:
#   1. decode_ab.py --model 4b --contexts 1024 --rounds 4 --reps 6, 10 rows of 1-7 s warm (round 2: 1,024 and
#      8,192, 3 rounds)                                                                                   <= 80 s
#   2. GPU tests (round 1): the new forms against TorchQwen3 (`attention_entry`, `wide_token`: also argmax_wide
#      at 9,496 maxima against NumPy's first maximum), the default plan (now with ge + rs) teacher-forced over 64
#      steps, and `ge` O, gate/up, down with early loads                                                    <= 40 s
# Expected: benchmarks/RESULTS.md, section "h17t". Prints the rows ("ctx   1024 {...} NNN tok/s ...") and one line a
# step; writes $OUT/h17t.tgz (logs, ab json).
# usage on the device machine, from the checkout's root:  bash benchmarks/h17t_device.sh  (ROUND=2 bash ...)
set -uo pipefail
. benchmarks/device_env.sh h17t
t0=$(date +%s)
el() { echo $(( $(date +%s) - t0 )); }
OLD='{"pdl": "late", "ge": [], "rs": 0, "tw": 0, "st": {"gate_up": 1, "qkv": 1}}'
A='"ge": ["o", "down", "attn"]'
if [ "${ROUND:-1}" = 2 ]; then
  # round 1's winners apart, where the lead's round 2 (me + tw: 0.6B -0.8 %) left it open: the token choice
  # (`tw`: 16,384 = argmax_wide, 0 = argmax_step; rows for both, whichever the tree's default is) and the merge's
  # entry trigger (`me`), at 4B 1,024 and 8,192, then 0.6B and 8B at 1,024; the default first and last
  V2=${V2:-'[{}, {"tw": 0}, {"tw": 16384}, {"me": 1}, {"st": {"down": -1}}, {}]'}
  timeout ${AB_TIMEOUT:-60} python3 benchmarks/decode_ab.py --model 4b --contexts 1024,8192 --rounds 4 --reps 6 \
    --variants "$V2" --out "$D/ab2" > "$D/ab2.log" 2>&1
  echo "h17t round 2 decode_ab 4b (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab2.log"
  V3=${V3:-'[{}, {"tw": 0}, {"tw": 16384}, {"me": 1}, {}]'}
  for m in 0.6b 8b; do
    timeout ${AB3_TIMEOUT:-30} python3 benchmarks/decode_ab.py --model $m --contexts 1024 --rounds 4 --reps 6 \
      --variants "$V3" --out "$D/ab_$m" > "$D/ab_$m.log" 2>&1
    echo "h17t round 2 decode_ab $m (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab_$m.log"
  done
  pack; echo "h17t done ($(el) s): $OUT/h17t.tgz"; exit 0
fi
V=${V:-'[{}, '"$OLD"', {'"$A"'}, {"me": 1}, {"short_ns": 32, "rs": 32}, {"tw": 16384}, {"tk": 4096, "tw": 0},
  {"st": {"down": -1}}, {'"$A"', "tw": 16384}, {}]'}
timeout ${AB_TIMEOUT:-80} python3 benchmarks/decode_ab.py --model 4b --contexts 1024 --rounds 4 --reps 6 \
  --variants "$V" --out "$D/ab" > "$D/ab.log" 2>&1
echo "h17t decode_ab (rc $?, $(el) s):"; grep -E "^(NVIDIA|ctx|.*failed)" "$D/ab.log"
timeout ${TEST_TIMEOUT:-40} python3 -m pytest -q -p no:cacheprovider -m gpu tests/llm/test_engine_gpu.py \
  -k "attention_entry or wide_token or teacher_forced_logits_match_torch_at_every_step or gemv_entry" \
  > "$D/tests.log" 2>&1
echo "h17t gpu tests (rc $?, $(el) s): $(tail -1 "$D/tests.log")"; grep -E "^FAILED|^ERROR|Error" "$D/tests.log" | head -8
pack; echo "h17t done ($(el) s): $OUT/h17t.tgz"
