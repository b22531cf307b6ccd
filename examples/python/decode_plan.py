"""How to launch `std::attention`'s flash decoding for a shape: the key
block, the number of splits of the cache, the merge's column chunk.

    from decode_plan import decode_plan, combine_ns
    bn, splits, dc = decode_plan(batch * kv_heads, group, cache_len, head_dim, sms)

No PyTorch here (the rule is arithmetic on the shape and the card's SM
count), so it is tested without a GPU (`tests/std/test_decode_plan.py`) and
shared by `torch_attention.py` and the benchmarks.

What the rule follows (measured on the H200, benchmarks/RESULTS.md, issue
15, h15d):

- A decode step is a read of the cache, so every SM should be busy from
  the first moment to the last: the rows (batch x KV heads) are split into
  as many shares as fill `blocks_per_sm` blocks an SM once (one wave; a
  second, partial wave leaves most SMs idle at its end), at most 64 (the
  merge reads every share), each share at least two key blocks (the ring of
  key blocks in flight needs a loop to fill).
- The key block is the largest of 64 and 32 keys whose K and V tiles stay
  within 16 KB each (64 keys at D = 128 in bf16: the ring of
  `decode_split`'s stages holds a few of them) and that still leaves every
  share two key blocks: a longer key block spends fewer instructions a key
  on the loop's fixed work (the online softmax's rescale, the ring's wait
  and copies), measured 5-7 % faster at BN = 64 than 32 where shares are
  long. Short caches take 32.
- The merge (`decode_combine`) costs a launch plus about 1 us per 1,024
  elements of its block's tile (NS x G x DC): its column chunk DC is halved
  (down to 8, one 16-byte store of bf16) until the tile holds at most
  `combine_tile` elements, so a many-split merge runs as many small blocks.
"""

from __future__ import annotations

KEY_BLOCKS = (64, 32)  # the key blocks the rule chooses from, largest first
TILE_BYTES = 16 * 1024  # the most a K (or V) key block may take
MAX_SPLITS = 64


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def decode_block(kv_rows: int, cache_len: int, d: int, slots: int, elem_bytes: int = 2) -> int:
    """The key block BN: the largest of `KEY_BLOCKS` whose [BN, D] tile is at
    most `TILE_BYTES` and for which the shares that fill `slots` blocks
    still get two key blocks each; the smallest when none does."""
    want = max(1, min(MAX_SPLITS, slots // max(1, kv_rows)))  # shares a row wants
    for bn in KEY_BLOCKS:
        if bn * d * elem_bytes <= TILE_BYTES and cache_len >= 2 * bn * want:
            return bn
    return KEY_BLOCKS[-1]


def decode_plan(kv_rows: int, group: int, cache_len: int, d: int, sms: int, bn: int | None = None,
                blocks_per_sm: int = 2, combine_tile: int = 1024, elem_bytes: int = 2) -> tuple[int, int, int]:
    """(BN, splits, DC) for flash decoding `kv_rows` = batch * KV heads rows
    of `group` query heads each over `cache_len` cached positions of head
    dim `d` on a card of `sms` SMs (`bn`: a key block of the caller's
    choosing instead of the rule's). The split count need not be a power of
    two: the merge's NS is the next one (`combine_ns`)."""
    slots = blocks_per_sm * sms
    bn = bn or decode_block(kv_rows, cache_len, d, slots, elem_bytes)
    key_blocks = max(1, cdiv(cache_len, bn))
    splits = max(1, min(MAX_SPLITS, slots // max(1, kv_rows), key_blocks // 2))
    splits = cdiv(key_blocks, cdiv(key_blocks, splits))  # no empty share
    dc = d
    while combine_ns(splits) * group * dc > combine_tile and dc % 16 == 0:
        dc //= 2
    return bn, splits, dc


def combine_ns(splits: int) -> int:
    """`decode_combine`'s NS for `splits` shares: the next power of two."""
    return 1 << max(0, splits - 1).bit_length()
