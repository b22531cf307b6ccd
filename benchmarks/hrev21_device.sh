#!/usr/bin/env bash
# hrev21 (2026-12-06, round 21; no device time of its own): a NaN's bits on a real GPU. `to_bits` of a NaN is one
# pattern on both engines now (0x7FFFFFFF / 0x7FFF / 0x7FFF bf16 / 0x7FFFFFFFFFFFFFFF); before, the card gave its
# own NaNs (div.rn 0/0, sqrt of a negative, add of a NaN: 0x7FFFFFFF; cvt to f16 0x7FFF) where the interpreter gave
# x86's (0xFFC00000) and NumPy's payloads. llsim follows NumPy, so only a card shows the old disagreement.
# Expected (written before any run): 2 passed (the new NaN test and the bit casts' earlier gpu test), then, on an
# H100/H200, 7 passed: decode_split_tc (and the shared-arange variant) against SDPA with NaN/Inf past cache_len
# (the V mask's codegen changed: ZeroRows' exact i32 sums; skipped where the box has no PyTorch).
# ~60-90 s warm. usage: bash benchmarks/hrev21_device.sh
set -uo pipefail
. benchmarks/device_env.sh hrev21
python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_bitcast.py 2>&1 | tail -8
python3 -m pytest -q -p no:cacheprovider -m gpu tests/backend/test_decode_tc_pipeline.py -k "sdpa" 2>&1 | tail -8
