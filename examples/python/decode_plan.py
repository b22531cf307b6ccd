"""How to launch `std::attention`'s flash decoding for a shape: the key
block, the number of splits of the cache, the merge's column chunk.

    from decode_plan import decode_plan, combine_ns, fused_nc, merge_pdl, split_kernel
    bn, splits, dc = decode_plan(batch * kv_heads, group, cache_len, head_dim, sms)
    # which split: "tc" (`decode_split_tc`, Hopper tensor cores) or "fma" (`decode_split`)
    kind = split_kernel(batch * kv_heads, group, cache_len, head_dim, sm, l2_bytes)
    # one launch (`decode_fused`, the merge by each head's last block):
    nc = fused_nc(splits)
    # the merge launched with programmatic dependent launch, the split without:
    with cuda_pdl.scoped(merge_pdl(sm), "late"): ...  # decode_combine's launch

No PyTorch here (the rule is arithmetic on the shape and the card's SM
count), so it is tested without a GPU (`tests/std/test_decode_plan.py`) and
shared by `torch_attention.py` and the benchmarks.

What the rule follows (measured on the H200, benchmarks/RESULTS.md, issue
15, h15d):

- A decode step is a read of the cache, so every SM should be busy from
  the first moment to the last: the rows (batch x KV heads) are split into
  as many shares as fill `blocks_per_sm` blocks an SM once (one wave; a
  second, partial wave leaves most SMs idle at its end), at most 64 (the
  merge reads every share).
- But a block has a fixed cost (its prologue, the first key blocks' trip
  to memory before the ring is full, the merge of its warps' states, its
  stores: a split over a one-position cache took 12.8 us on the H200, the
  whole 8,192-position one 20.8), and a second block on an SM doubles
  what the SM pays for them. So the shares fill every SM once, and the
  rows take more shares, up to `blocks_per_sm` an SM, only while each
  still reads `min_share` bytes of K and V or more (256 KB: 512 keys at
  D = 128 in bf16). Measured: at batch 1 and 8,192 positions, 16 shares
  of 512 keys (one block an SM) ran 7 % faster than 32 of 256 (two);
  at 32,768 positions 32 shares of 1,024 keys ran 6 % faster than 16 of
  2,048, and at batch 8 two blocks an SM won too (4 shares of 2,048 keys
  or more). A share is also at least two key blocks (the ring of key
  blocks in flight needs a loop to fill).
- The key block is the largest of 64 and 32 keys whose K and V tiles stay
  within 16 KB each (64 keys at D = 128 in bf16: the ring of
  `decode_split`'s stages holds a few of them) and that still leaves every
  share two key blocks: a longer key block spends fewer instructions a key
  on the loop's fixed work (the online softmax's rescale, the ring's wait
  and copies), measured 5-7 % faster at BN = 64 than 32 where shares are
  long. Short caches take 32.
- The split kernel: `decode_split_tc` (the attention pipeline on Hopper's
  tensor cores, ~410 SASS instructions a thread a key block of 64) where
  the card is sm_90 and the step's K and V fit in its L2 (they stay there
  from one step to the next: the loop, not the memory, is the limit, and
  std's FMA loop runs ~1,300), else `decode_split`: on the H200 at batch 1
  and 8,192 positions (33.5 MB) the pair took 14.2 us against 16.9; at 134
  MB and more the two stream the same (38.7 against 38.1 us split alone at
  batch 1, 32,768 positions) or the FMA loop wins (batch 8: -3 %).
- The launches: on sm_90 and later the merge is launched with programmatic
  dependent launch (PDL, `tilelang.runtime.cuda_pdl`, trigger "late"), so
  in a CUDA graph its launch overlaps the split's drain; the split is
  launched without it. Measured on the H200 (graphs, each form in the same
  process as the plain pair, three runs on three cards): a fraction of a
  microsecond either way, tc at 8,192 positions -0.4 / +0.1 / -0.2 us on
  14.5-14.7, FMA at 32,768 -0.4 / +0.1 / +0.4 on 40.6-41.4, a tie at batch
  8: not a lever, kept as the engine's form. A split
  launched with PDL too gained at most 0.2 us more with the FMA split and
  made the tc pair 2x slower (14.7 -> 26.0 us: a persistent grid scheduled
  early behind the merge's trigger).
- The merge (`decode_combine`) costs a launch plus about 1 us per 1,024
  elements of its block's tile (NS x G x DC): its column chunk DC is halved
  (down to 8, one 16-byte store of bf16) until the tile holds at most
  `combine_tile` elements, so a many-split merge runs as many small blocks.
"""

from __future__ import annotations

KEY_BLOCKS = (64, 32)  # the key blocks the rule chooses from, largest first
TILE_BYTES = 16 * 1024  # the most a K (or V) key block may take
MAX_SPLITS = 64
MIN_SHARE = 256 * 1024  # the fewest bytes of K and V a share reads (a block's fixed cost)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def shares(kv_rows: int, cache_len: int, d: int, sms: int, blocks_per_sm: int = 2, elem_bytes: int = 2,
           min_share: int = MIN_SHARE) -> int:
    """How many shares a row wants: one block on every SM, and more, up to
    `blocks_per_sm` an SM and `MAX_SPLITS` a row, while each share still
    reads `min_share` bytes of K and V."""
    rows = max(1, kv_rows)
    once = max(1, sms // rows)
    long_enough = cache_len * 2 * d * elem_bytes // max(1, min_share)
    return max(1, min(MAX_SPLITS, max(1, blocks_per_sm * sms // rows), max(once, long_enough)))


def decode_block(cache_len: int, d: int, want: int, elem_bytes: int = 2) -> int:
    """The key block BN: the largest of `KEY_BLOCKS` whose [BN, D] tile is at
    most `TILE_BYTES` and that leaves `want` shares two key blocks each;
    the smallest when none does."""
    for bn in KEY_BLOCKS:
        if bn * d * elem_bytes <= TILE_BYTES and cache_len >= 2 * bn * want:
            return bn
    return KEY_BLOCKS[-1]


def decode_plan(kv_rows: int, group: int, cache_len: int, d: int, sms: int, bn: int | None = None,
                blocks_per_sm: int = 2, combine_tile: int = 1024, elem_bytes: int = 2,
                min_share: int = MIN_SHARE) -> tuple[int, int, int]:
    """(BN, splits, DC) for flash decoding `kv_rows` = batch * KV heads rows
    of `group` query heads each over `cache_len` cached positions of head
    dim `d` on a card of `sms` SMs (`bn`: a key block of the caller's
    choosing instead of the rule's). The split count need not be a power of
    two: the merge's NS is the next one (`combine_ns`)."""
    want = shares(kv_rows, cache_len, d, sms, blocks_per_sm, elem_bytes, min_share)
    bn = bn or decode_block(cache_len, d, want, elem_bytes)
    key_blocks = max(1, cdiv(cache_len, bn))
    splits = max(1, min(want, key_blocks // 2))
    splits = cdiv(key_blocks, cdiv(key_blocks, splits))  # no empty share
    dc = d
    while combine_ns(splits) * group * dc > combine_tile and dc % 16 == 0:
        dc //= 2
    return bn, splits, dc


def split_kernel(kv_rows: int, group: int, cache_len: int, d: int, sm: int, l2_bytes: int,
                 elem_bytes: int = 2) -> str:
    """"tc" for `decode_split_tc` (tensor cores: sm_90, D a multiple of 64 up
    to 256, at most 64 query heads a KV head) where the step's K and V bytes
    fit in `l2_bytes`, else "fma" for `decode_split`."""
    kv = 2 * kv_rows * cache_len * d * elem_bytes
    fits = sm == 90 and d % 64 == 0 and d <= 256 and group <= 64
    return "tc" if fits and kv <= l2_bytes else "fma"


def merge_pdl(sm: int) -> bool:
    """Whether `decode_combine` is launched with programmatic dependent
    launch (PDL: sm_90 and later; the split never is)."""
    return sm >= 90


def fused_nc(splits: int, most: int = 8) -> int:
    """`decode_fused`'s step: its last block merges a KV head's shares NC
    at a time (one round trip to L2 a step: the fewer steps, the shorter the
    tail), at most `most` (8: a [G, 8, D] step keeps lanes along D and the
    sums in each thread; 16 made the backend lay lanes along the shares,
    through shared memory that cost the split its second block an SM)."""
    return min(most, combine_ns(splits))


def combine_ns(splits: int) -> int:
    """`decode_combine`'s NS for `splits` shares: the next power of two."""
    return 1 << max(0, splits - 1).bit_length()
