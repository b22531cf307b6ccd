#!/bin/bash
# hrev31 (hostile review, round 31: the standard library with run-time values): benchmarks/std_diff.py's cases
# on the real GPU in place of llsim, ~150 s in all on a warm H100/H200. Each family's accepted programs (std
# attention prefill/decode/merge at the edges of their cache lengths, splits and shapes; std::llm's embeddings,
# greedy picks, top-p chain and decode attention with device positions past the cache, negative and i32::MAX)
# run on the interpreter and on the GPU; their tensors must agree (floats within 2e-2, integers exactly), and no
# launch may fault (an access outside a buffer is an illegal-address error on a card).
# Expected: each family's line without MISS / WRONG / GPU / DIFFER / ICE (llsim sm_80 and sm_90a gave none in
# 1,050 cases: FUZZING.md, round 31); a DIFFER here would be the hardware (TMA's out-of-bounds fill, an f16/bf16
# rounding, a NaN's path through max) departing from llsim's model.
cd "$(dirname "$0")/.." || exit 1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}  # keep the preamble's /tmp/site (lark): call 43 lost it
for fam in prefill decode llm llmattn; do
    timeout 45 python3 -W ignore benchmarks/std_diff.py 3131 100000 --family "$fam" --gpu --seconds 35 2>&1 \
        | tail -6 | sed "s/^/std_diff $fam gpu: /"
done
