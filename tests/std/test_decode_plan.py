"""The flash-decoding launch rule (`examples/python/decode_plan.py`): what
it promises for any shape, and what it gives the issue's benchmark shapes
(the plans measured best on the H200, benchmarks/RESULTS.md, issue 15)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
from decode_plan import MAX_SPLITS, TILE_BYTES, cdiv, combine_ns, decode_block, decode_plan

SHAPES = list(itertools.product(
    (1, 2, 4, 8, 16, 32, 64, 132, 264, 1000),  # kv_rows = batch x KV heads
    (1, 4, 8),  # query heads per KV head
    (1, 20, 63, 64, 128, 300, 1000, 4096, 8192, 32768, 131072),  # cache length
    (64, 128, 256),  # head dim
    (78, 132),  # SMs
))


@pytest.mark.parametrize("blocks_per_sm", [1, 2, 3])
def test_every_plan_keeps_the_rules_promises(blocks_per_sm):
    for rows, g, n, d, sms in SHAPES:
        bn, splits, dc = decode_plan(rows, g, n, d, sms, blocks_per_sm=blocks_per_sm)
        kb = cdiv(n, bn)
        what = (rows, g, n, d, sms, bn, splits, dc)
        assert bn in (32, 64) and (bn == 32 or bn * d * 2 <= TILE_BYTES), what
        assert 1 <= splits <= MAX_SPLITS, what
        # one wave: never more blocks than the slots, unless a row alone overfills them
        assert splits == 1 or rows * splits <= blocks_per_sm * sms, what
        # every share has a key block, and at least two when there are two
        per = cdiv(kb, splits)
        assert (splits - 1) * per < kb, what
        assert kb < 2 or per >= 2, what
        # the merge: NS the next power of two, the column chunk a divisor of D,
        # the merge tile within 1,024 elements unless DC is down to 8
        ns = combine_ns(splits)
        assert ns >= splits and ns & (ns - 1) == 0 and ns < 2 * splits + 1, what
        assert d % dc == 0 and dc >= 8, what
        assert ns * g * dc <= 1024 or dc == 8 or dc == d, what


def test_the_key_block_is_the_largest_that_still_fills_the_card():
    # 64 keys when every share of one wave keeps two key blocks of 64 ...
    assert decode_block(8, 8192, 128, 264) == 64     # 33 shares a row: 4,224 keys needed
    assert decode_block(8, 4224, 128, 264) == 64
    assert decode_block(8, 4223, 128, 264) == 32     # one key short
    assert decode_block(64, 512, 128, 264) == 64     # 4 shares a row
    assert decode_block(1000, 128, 128, 264) == 64   # more rows than slots: one share, two blocks
    # ... never a K tile over 16 KB, so never 64 keys at D = 256 or in f32 at D = 128
    assert decode_block(8, 1 << 20, 256, 264) == 32
    assert decode_block(8, 1 << 20, 128, 264, elem_bytes=4) == 32
    # short caches take 32
    assert decode_block(8, 300, 128, 264) == 32


def test_the_merge_takes_smaller_column_chunks_as_the_splits_grow():
    # (splits, DC) at G = 4, D = 128: the merge tile NS x G x DC <= 1,024
    got = [decode_plan(rows, 4, 1 << 20, 128, 132)[1:] for rows in (264, 132, 66, 33, 16, 8)]
    assert got == [(1, 128), (2, 128), (4, 64), (8, 32), (16, 16), (33, 8)]
    assert combine_ns(33) == 64  # 33 shares: NS 64, DC already at its floor of 8
    # a caller's cap: the old 4,096-element merge tile
    assert decode_plan(8, 4, 8192, 128, 132, combine_tile=4096)[2] == 32


def test_the_issue_shapes_get_the_plans_measured_best():
    # 32 query / 8 KV heads, D = 128, bf16, 132 SMs (the H200): the final call
    # of 2026-12-02 (3f14ec5) measured BN 64 best at batch 8 (3.06 / 3.72 TB/s,
    # 4 splits) and the 1,024-element merge tile best at batch 1 (32 splits, DC 8)
    for ctx in (8192, 32768):
        assert decode_plan(8, 4, ctx, 128, 132) == (64, 32, 8)
        assert decode_plan(64, 4, ctx, 128, 132) == (64, 4, 64)
    # a caller's key block is kept
    assert decode_plan(8, 4, 8192, 128, 132, bn=32) == (32, 32, 8)
