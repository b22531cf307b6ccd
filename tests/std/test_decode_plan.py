"""The flash-decoding launch rule (`examples/python/decode_plan.py`): what
it promises for any shape, and what it gives the issue's benchmark shapes
(the plans measured best on the H200, benchmarks/RESULTS.md, issue 15)."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "python"))
from decode_plan import (
    MAX_SPLITS,
    MIN_SHARE,
    TILE_BYTES,
    cdiv,
    combine_ns,
    decode_block,
    decode_plan,
    merge_pdl,
    split_kernel,
)

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
        # more than one block an SM only for shares of MIN_SHARE bytes or more
        assert splits == 1 or rows * splits <= sms or n * 2 * d * 2 / splits >= MIN_SHARE, what
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


def test_the_key_block_is_the_largest_that_leaves_two_key_blocks_a_share():
    # 64 keys when each of the shares keeps two key blocks of 64 ...
    assert decode_block(8192, 128, 33) == 64     # 4,224 keys needed
    assert decode_block(4224, 128, 33) == 64
    assert decode_block(4223, 128, 33) == 32     # one key short
    assert decode_block(128, 128, 1) == 64       # one share, two blocks
    # ... never a K tile over 16 KB, so never 64 keys at D = 256 or in f32 at D = 128
    assert decode_block(1 << 20, 256, 8) == 32
    assert decode_block(1 << 20, 128, 8, elem_bytes=4) == 32
    # short caches take 32
    assert decode_block(300, 128, 16) == 32


def test_a_second_block_an_sm_only_for_long_shares():
    # batch 1 (8 KV heads), 132 SMs: 16 shares fill the SMs once; 33 would
    # fill two blocks an SM, taken only while a share reads >= 256 KB
    # (512 keys at D = 128 in bf16)
    assert decode_plan(8, 4, 8192, 128, 132)[1] == 16     # 33 shares would be 248 keys
    assert decode_plan(8, 4, 16896, 128, 132)[1] == 33    # 33 x 512 keys: two blocks an SM
    # fewer positions: 31 shares of 512 keys at most (28: 9 key blocks each, none empty)
    assert decode_plan(8, 4, 16000, 128, 132)[1] == 28
    assert decode_plan(8, 4, 8192, 128, 132, min_share=0)[1] == 32
    assert decode_plan(8, 4, 8192, 128, 132, blocks_per_sm=1)[1] == 16
    # fewer rows than SMs always get every SM, however short the shares
    assert decode_plan(8, 4, 1024, 128, 132)[1] == 16


def test_the_merge_takes_smaller_column_chunks_as_the_splits_grow():
    # (splits, DC) at G = 4, D = 128: the merge tile NS x G x DC <= 1,024
    got = [decode_plan(rows, 4, 1 << 20, 128, 132)[1:] for rows in (264, 132, 66, 33, 16, 8)]
    assert got == [(1, 128), (2, 128), (4, 64), (8, 32), (16, 16), (33, 8)]
    assert combine_ns(33) == 64  # 33 shares: NS 64, DC already at its floor of 8
    # a caller's cap: the old 4,096-element merge tile
    assert decode_plan(8, 4, 32768, 128, 132, combine_tile=4096)[2] == 32


def test_the_issue_shapes_get_the_plans_measured_best():
    # 32 query / 8 KV heads, D = 128, bf16, 132 SMs (the H200): the final call
    # of 2026-12-02 (3f14ec5) measured BN 64 best at batch 8 (3.06 / 3.72 TB/s,
    # 4 splits) and the 1,024-element merge tile best at batch 1 (DC 8 at 32 splits)
    # and, in the call that measured this rule (4ae5a61), 16 shares best at
    # batch 1 and 8,192 positions, 32 at 32,768
    assert decode_plan(8, 4, 8192, 128, 132) == (64, 16, 16)
    assert decode_plan(8, 4, 32768, 128, 132) == (64, 32, 8)
    for ctx in (8192, 32768):
        assert decode_plan(64, 4, ctx, 128, 132) == (64, 4, 64)
    # a caller's key block is kept
    assert decode_plan(8, 4, 32768, 128, 132, bn=32) == (32, 32, 8)


def test_the_tensor_core_split_where_the_cache_fits_in_l2_on_hopper():
    l2 = 50 * 2**20  # the H100 / H200 L2 (GH100: 50 MB)
    # the issue's shapes (32 / 8 heads, D = 128, bf16): batch 1 at 8,192 positions is
    # 33.5 MB (the pair 14.2 against 16.9 us on the H200); 32,768 (134 MB) and
    # batch 8 stream from DRAM, where the FMA split is as fast or faster
    assert split_kernel(8, 4, 8192, 128, 90, l2) == "tc"
    assert [split_kernel(8, 4, 32768, 128, 90, l2), split_kernel(64, 4, 8192, 128, 90, l2)] == ["fma", "fma"]
    # not Hopper, a head dim wgmma's tiles do not take, more than 64 query rows a KV head
    assert split_kernel(8, 4, 8192, 128, 80, l2) == "fma"
    assert split_kernel(8, 4, 8192, 96, 90, l2) == "fma"
    assert split_kernel(1, 128, 1024, 128, 90, l2) == "fma"


def test_the_merge_with_programmatic_dependent_launch_from_hopper_on():
    # PDL exists from sm_90 (the runtime refuses it before): the merge takes it
    # there, the split never (the rule has no switch for it)
    assert [merge_pdl(sm) for sm in (70, 80, 86, 89, 90, 100)] == [False] * 4 + [True] * 2
