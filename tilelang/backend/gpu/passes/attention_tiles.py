"""A persistent grid for the Hopper attention pipeline (`passes/attention.py`).

Without it each (head, query block) tile is a CTA, and with one CTA an SM
(the warp-specialised kernel takes the whole register file) every tile pays
the CTA's fixed costs alone: launch, barrier set-up, the Q copy and the first
K/V copies before any product, the epilogue's stores after the last one. As
a persistent kernel the runtime launches at most one CTA per SM
(`GpuKernel.persistent`, `KernelABI.persistent`) and each CTA walks a list
of tiles: its producer copies the next tile's Q (once the consumers have
released the Q buffer, right after their last S = Q K^T) and its first K/V
blocks while the consumers still run this tile's epilogue. The K/V ring's
counter and the Q barrier's phase run on from tile to tile.

The tile order is computed in the kernel from the logical grid (each axis
`cdiv(dim, tile)` of the largest `&mut` partition, exactly the grid the
launch would have had), so any launch size is correct: the logical grid
(one tile a CTA, as the simulator runs it), the capped one, or one CTA.

- The tiles that read the same K and V (the grid axes the K/V offsets
  depend on: the heads) stay together, their query blocks walked from the
  last (FlashAttention's grid order: measured on the H200, it beat sections
  of several heads sized to the L2, 2026-12-02).
- Round r of the walk gives CTA c item r*P + c when r is even and
  r*P + P-1-c when it is odd (P CTAs, a "snake").
- When the work is uneven (a causal kernel: the first and the last query
  block run different trip counts, checked at run time) an item is a pair
  of tiles, a head's i-th heaviest with its i-th lightest, whose sums are
  equal: a static walk of single tiles left 30 % of the time idle at
  S = 16384, where each head's blocks fill about one round.

Every `block_id(a)` / `num_blocks(a)` of the kernel reads the tile's logical
position / the logical grid; the scalar ops before the loop (the block's
offsets, bounds, asserts) run once per tile in each role.
"""

from __future__ import annotations

import dataclasses

from tilelang.backend.env_switch import flag, mode, number
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import attention_tail, switches
from .attention_tail import Tail
from .build import _Build
from .context import Fresh
from .rewrite import map_ops, substitute, substitute_region, with_regions


def enabled(k: g.GpuKernel) -> bool:
    """Whether the attention kernel `k` becomes persistent
    (`TILEC_ATTN_PERSISTENT=0` opts out; kernels that print keep one tile a
    block, so that their output keeps its launch order)."""
    if not flag("TILEC_ATTN_PERSISTENT", "1"):
        return False
    return not any(isinstance(op, ir.Print) for op in g.walk(k.body)) and bool(
        [p for p in k.tensor_params if p.mutable and p.tile_shape])


@dataclasses.dataclass(frozen=True, slots=True)
class Walk:
    """The values (defined before the roles) that a role's tile loop reads:
    this CTA's number of tiles and, per round, what `_tile` computes."""

    rounds: ir.Value  # tiles this CTA runs
    c: ir.Value  # this CTA's launch position
    P: ir.Value  # CTAs launched
    sizes: tuple[ir.Value, ...]  # the logical grid
    kv: tuple[int, ...]  # grid axes of the K/V positions
    fast: tuple[int, ...]  # the others
    nf: ir.Value  # tiles a kv position has (query blocks of a head)
    pairs: ir.Value  # bool: the walk hands out pairs of tiles
    # items a group of kv positions has (the divisor of an item's index): nf tiles or cdiv(nf, 2) pairs of one kv
    # position; with `once` and pairs of an odd nf, nf pairs of two kv positions (`_tile`)
    nh: ir.Value
    split: Split | None = None  # the last round's tiles split along their keys (`attention_split`)
    divs: tuple[FastDiv, ...] = ()  # `fast_divisor`s of the divisors `_tile` divides by (`TILEC_ATTN_FASTDIV`)
    tail: Tail | None = None  # the last rounds' pairs as single tiles, heaviest first (`attention_tail`)
    once: bool = False  # pairs of an odd nf run the middle tile once (`walk_setup`'s `once`)


@dataclasses.dataclass(frozen=True, slots=True)
class FastDiv:
    """A launch-constant divisor `d` (>= 1) with what makes a division by it
    a multiply-high, an add and a shift (`fast_divisor`, `divide`)."""

    d: ir.Value  # i32
    m: ir.Value | None  # u32 multiplier; None: a plain division (`TILEC_ATTN_DIVS_IN_ROLE`: none in this role)
    shift: ir.Value | None  # u32, ceil(log2 d)


# The value rows' widths (the second product's columns, D) where the tile boundary's three switches are on
# by default ("auto") in every kernel, not only the short keys' variant: the walk's fast divisions (`fastdiv`),
# Q released in the rotated loop's last iteration (`q_early`) and the producer warp at 24 registers
# (`attention.producer_budget`, where that gives the consumers more). H100, call 24 (2026-12-06 18:12, main
# c919a5e7; RESULTS.md "call 24"), the prefill table in four alternated processes, D / P / D2 / P2 with P =
# all three on: D = 128 non-causal P won every row, f16 579 / 675 / 703 -> 583-592 / 689 / 709 TFLOP/s at
# S = 1k / 4k / 16k, bf16 590-597 / 696-698 / 727 -> 598 / 709-712 / 735 (call 23, non-causal: f16 / bf16 S = 4k
# +2.1 / +2.4 %, 16k +1.1 / +1.2 %); D = 128 causal within +-0.5 %. At D = 64 P lost on every row, 1-3 %
# (f16 full S = 4k 485-489 -> 472-477; the chained variant's producer spills 48 B at 24): left as it was. Not
# in the causal tail variant (`attention_tail`, the causal launches over long keys): under all three ptxas 13.0
# spills 24 B there (16 B without the fast walk; 0 as it was), and P read -0.1..-0.5 % on its rows (D = 128 causal
# S = 4k / 16k), so it stays the kernel it was.
BOUNDARY_D = (128,)


def wide_boundary(d: int, tailed: bool) -> bool:
    """Whether "auto" turns the tile boundary's switches on in a kernel of value rows `d` wide outside the
    short keys' variant (`tailed`: the causal tail variant, which keeps them off)."""
    return d in BOUNDARY_D and not tailed


# The walk's per-tile arithmetic (a tile's position from the round: i32
# divisions by launch constants, each a ~40-instruction sequence with a
# reciprocal on the MUFU in SASS, recomputed every tile) cost the consumers
# 750-930 cycles a tile on the H200, on their path to the next tile's first
# S (cycle stamps, RESULTS 2026-12-04 session 15:51). "1": each divisor's
# multiplier is computed once a CTA and a division is a multiply-high, an add
# and a shift (exact for dividends in [0, 2^31), as the walk's are).
# On the H200 it won every S = 1024 row (+1.2..+3.8 %) and lost 0.4-2.2 % on the
# longer ones (the split kernel at D = 64 most; not understood: the per-tile
# SASS is shorter); so "auto": in the short keys' variant (`short`,
# `attention_chain.SHORT_D`) and at the widths of `BOUNDARY_D` (the H100, call 24).
FASTDIV_DEFAULT = "auto"


def fastdiv(auto: bool) -> bool:
    """`TILEC_ATTN_FASTDIV`: "1", "0", or "auto" (unset): `auto` (the short keys' variant, and
    `wide_boundary`)."""
    want = mode("TILEC_ATTN_FASTDIV", FASTDIV_DEFAULT, ("0", "1", "auto"))
    return want == "1" or (want == "auto" and auto)


def _cast(b: _Build, x: ir.Value, dt: DType) -> ir.Value:
    r = b.fresh.value(dt, ())
    b.ops.append(ir.Cast(r, x))
    return r


# `TILEC_ATTN_DIVS_IN_ROLE` (on by default; "0": off; hattn7): the fast divisions' set-up (the multiplier: a
# 31-step bit length and a 64-bit division, ~110 of the 292 SASS instructions every thread of `decode_split_tc`'s
# B=1 8k launch ran before the warp roles split) made by the consumers after the split, while the producer's
# first copies are in flight; the producer, one thread whose per-tile division waits on nothing of the
# consumers', divides plainly (`FastDiv.m` None), so its first TMA no longer waits for it. The default since
# the H100 timed it with `TILEC_MBAR_ONE_INIT` (2026-12-07, call 32: decode B=1 8k 13.00 -> 12.86 us, B=1 32k
# -0.20..-0.28 us, B=8 8k -0.31..-0.37 us; the f16 D = 128 S = 4,096 prefill 699.5 -> 698.6 TFLOP/s, inside the
# default's spread 698.4-700.2). The prefill kernels keep it too: their consumers reach their first wgmma in as
# many SASS instructions either way (the set-up moves across the split: f16 D = 128 S = 4,096, 599 -> 598 from
# the kernel's start), the producer its first TMA in fewer (472 -> 386; hpromote, RESULTS).
DIVS_IN_ROLE_DEFAULT = "1"


# `TILEC_ATTN_ONCE` (unset: "1"; "0": as before; hcliff11): a causal walk of pairs over an odd number nf of query
# blocks a kv position ran each kv position's middle tile twice (paired with itself: nk (nf + 1) / 2 pairs); it pairs
# two kv positions' middle tiles instead, cdiv(nk nf, 2) pairs: 1 / (nf + 1) of the work fewer (nf = 3: 25 %; 9: 10 %)
ONCE_DEFAULT = "1"
# the once variant's `TensorFacts.split_walk`: the kernel (without the split's code, as the tail variant) whose walk
# is `once`, launched where the walk hands out pairs of an odd nf (`odd_pairs`; the request beside the tail's,
# `attention_split.tail_request`): in the kernel every launch runs, the once walk's set-up made ptxas 13.0 spill
# 64-100 B in the D = 64 key loops (the launches of an even nf, most of them, would pay for nothing)
ONCE_KIND = "once"


def once_default() -> bool:
    """`TILEC_ATTN_ONCE` (unset or "1": `walk_setup`'s `once` in the kernels whose walk can hand out pairs of an
    odd nf; "0": the middle tile twice)."""
    return flag("TILEC_ATTN_ONCE", ONCE_DEFAULT)


def odd_pairs(b: _Build, pairs: ir.Value, nf: ir.Value) -> ir.Value:
    """Whether a walk hands out pairs (`pairs`) of an odd number `nf` of query blocks a kv position (bool, `b`'s
    op): where the once variant runs (`ONCE_KIND`)."""
    E = ir.ElemOp
    odd = b.elem(E.EQ, b.elem(E.AND, nf, b.const(1)), b.const(1), dtype=DType.BOOL)
    return b.elem(E.AND, pairs, odd, dtype=DType.BOOL, hint="once")


def divs_in_role() -> bool:
    """`TILEC_ATTN_DIVS_IN_ROLE` (unset or "1": the fast divisors made in the consumer role, `in_role`; "0": before
    the split, by every thread)."""
    return flag("TILEC_ATTN_DIVS_IN_ROLE", DIVS_IN_ROLE_DEFAULT)


def in_role(b: _Build, w: Walk) -> Walk:
    """`w` with each divisor the walk set up plain (`walk_setup`'s `divs_in_role`) given its multiplier and
    shift, computed by `b`'s ops (a role's, before its tile loop)."""
    return dataclasses.replace(w, divs=tuple(fast_divisor(b, f.d) if f.m is None else f for f in w.divs))


def fast_divisor(b: _Build, d: ir.Value) -> FastDiv:
    """`d`'s multiplier and shift (round-up method: l = ceil(log2 d),
    m = floor(2^32 (2^l - d) / d) + 1 < 2^32; then n / d = (mulhi(n, m) + n) >> l
    for 0 <= n < 2^31), computed where `b`'s ops run (once a CTA). A `d`
    below 1 is taken as 1 (no tile divides by it: the grid is then empty)."""
    E = ir.ElemOp
    U64 = DType.U64
    d1 = b.elem(E.MAXIMUM, d, b.const(1))
    zero, one = b.const(0), b.const(1)
    lg = zero
    for i in range(31):  # ceil(log2 d): how many powers 2^i (i < 31) lie below d
        lg = b.elem(E.ADD, lg, b.elem(E.WHERE, b.elem(E.GT, d1, b.const(1 << i), dtype=DType.BOOL), one, zero))
    d64, l64, one64, c32 = (_cast(b, x, U64) for x in (d1, lg, one, b.const(32)))
    num = b.elem(E.SHL, b.elem(E.SUB, b.elem(E.SHL, one64, l64, dtype=U64), d64, dtype=U64), c32, dtype=U64)
    m = b.elem(E.ADD, b.elem(E.DIV, num, d64, dtype=U64), one64, dtype=U64)
    return FastDiv(d, _cast(b, m, DType.U32), _cast(b, lg, DType.U32))


def divide(b: _Build, n: ir.Value, d: ir.Value, divs: tuple[FastDiv, ...]) -> ir.Value:
    """n / d (i32, n >= 0): through `d`'s `FastDiv` where `divs` has one, else a division."""
    E = ir.ElemOp
    fd = next((f for f in divs if f.d is d), None)
    if fd is None or fd.m is None or fd.shift is None:
        return b.elem(E.DIV, n, d)
    U64 = DType.U64
    n64 = _cast(b, _cast(b, n, DType.U32), U64)  # (n >= 0: its bits, zero-extended)
    m64, l64, c32 = (_cast(b, x, U64) for x in (fd.m, fd.shift, b.const(32)))
    hi = b.elem(E.SHR, b.elem(E.MUL, n64, m64, dtype=U64), c32, dtype=U64)
    return _cast(b, b.elem(E.SHR, b.elem(E.ADD, hi, n64, dtype=U64), l64, dtype=U64), DType.I32)


@dataclasses.dataclass(frozen=True, slots=True)
class Split:
    """The last round split: each of its tiles cut into `pieces` key ranges
    (1: not split), the walk's only value of its own (`split_marks` derives
    the rest from the walk's values where it needs them, so nothing else of
    the split lives through the key loop); `items`: the walk's items, N."""

    pieces: ir.Value
    kvs: ir.Value  # kv positions (N = nh * kvs)
    on: ir.Value  # bool: the last round is split (the same in every CTA: else every tile runs whole)
    # (`plan_pairs`) bool: a walk of pairs would split its last round (the pairs form's `on`)
    on_pairs: ir.Value | None = None
    pairs: bool = False  # the pairs form: the last round's pairs cut along both tiles' keys (`tile_loop`)
    rows: bool = False  # the pieces are the tile's 64-row halves, each on its whole keys (`halves`)


SPLIT_ROUNDS = 3  # the last round's pieces take at most this many rounds (records a CTA: `codegen/split.py`)
SPLIT_EDGE = 3  # a tile's start and end, in key blocks (the H200: ~2.6 at D = 128, RESULTS.md 2026-12-03);
# `TILEC_ATTN_SPLIT_EDGE` overrides it (tests: 0 splits the simulator's small tiles too)


@dataclasses.dataclass(frozen=True, slots=True)
class Marks:
    """Values the roles' tile ops read and `tile_loop` defines for each tile
    of a split walk: the key loop's bounds (`lower`, `upper`: the tile's, or
    its piece's) from the user's (`lower0`, `upper0`), and the walk's values
    `split_marks` needs (the round, P, c, nh, the kv positions, the pieces)."""

    lower: ir.Value
    upper: ir.Value
    lower0: ir.Value
    upper0: ir.Value
    round: ir.Value
    P: ir.Value
    c: ir.Value
    nh: ir.Value
    kvs: ir.Value
    pieces: ir.Value


def split_marks(b: _Build, r: ir.Value, P: ir.Value, c: ir.Value, nh: ir.Value, kvs: ir.Value,
                pieces: ir.Value, pairs: bool = False) -> dict[str, ir.Value]:
    """Round `r`'s piece of a split walk (pieces of P CTAs, c this one, nh
    items a kv position, `kvs` of them, tiles cut in `pieces`): "cut" (bool:
    the round runs a piece), "tile" (its tile's item then), "piece" (0 when
    whole), "pieces" (1 when whole), "group" (its tile's place in the last
    round: its counter), "slot" (its number q: its record) and "left" (the
    last round's tiles: piece i of group g is record g + i * left). Piece q
    (0 .. left * pieces) is piece q / left of tile q % left of the last
    round; CTA place p (the last round's snake place) runs q = p, p + P, ...
    `pairs` (the pairs form; `r` a round of tiles, two an item): the
    tile's half h = r % 2 of its pair has counter 2 g + h and record 2 q + h
    ("left": 2 left, the records' stride from one piece to the next)."""
    E = ir.ElemOp
    one, zero = b.const(1), b.const(0)
    half = None
    if pairs:
        half, r = b.elem(E.AND, r, one), b.elem(E.SHR, r, one)
    n = b.elem(E.MUL, nh, kvs)
    last = b.elem(E.SUB, b.elem(E.DIV, b.elem(E.ADD, n, b.elem(E.SUB, P, one)), P), one)
    odd = b.elem(E.EQ, b.elem(E.AND, last, one), one, dtype=DType.BOOL)
    place = b.elem(E.WHERE, odd, b.elem(E.SUB, b.elem(E.SUB, P, one), c), c)
    left = b.elem(E.MAXIMUM, b.elem(E.SUB, n, b.elem(E.MUL, last, P)), one)
    cut = b.elem(E.AND, b.elem(E.GT, pieces, one, dtype=DType.BOOL), b.elem(E.GE, r, last, dtype=DType.BOOL),
                 dtype=DType.BOOL, hint="cut")
    q = b.elem(E.ADD, b.elem(E.MUL, b.elem(E.SUB, r, last), P), place, hint="piece")
    group = b.elem(E.REM, q, left)
    out = {"cut": cut, "tile": b.elem(E.ADD, b.elem(E.MUL, last, P), group),
           "piece": b.elem(E.WHERE, cut, b.elem(E.DIV, q, left), zero), "pieces": b.elem(E.WHERE, cut, pieces, one),
           "group": group, "slot": q, "left": left}
    if half is not None:
        two = b.const(2)
        out.update({"group": b.elem(E.ADD, b.elem(E.MUL, group, two), half),
                    "slot": b.elem(E.ADD, b.elem(E.MUL, q, two), half), "left": b.elem(E.MUL, left, two)})
    return out


def launch_and_grid(b: _Build, k: g.GpuKernel,
                    widen: tuple[int, int] = (-1, 1)) -> tuple[ir.Value, ir.Value, list[ir.Value], ir.TensorParam]:
    """`b`'s ops for a walk's start: (this CTA's linear index c, the CTAs launched P, the logical grid's
    sizes: the largest `&mut` partition's tiles along each axis, as the launch computes them; that
    partition's parameter; `widen` (axis, f): f tiles side by side along the axis count as one)."""
    E = ir.ElemOp
    R = k.grid_rank
    launch = [b.i32(f"launch_{'xyz'[a]}") for a in range(R)]
    nb = [b.i32() for _ in range(R)]
    b.ops += [ir.BlockId(launch[a], a) for a in range(R)]
    b.ops += [ir.NumBlocks(nb[a], a) for a in range(R)]
    c, P = launch[-1], nb[-1]
    for a in range(R - 2, -1, -1):
        c = b.elem(E.ADD, b.elem(E.MUL, c, nb[a]), launch[a])
        P = b.elem(E.MUL, P, nb[a])
    mut = max((p for p in k.tensor_params if p.mutable and p.tile_shape), key=lambda p: p.rank)
    assert mut.tile_shape is not None
    sizes: list[ir.Value] = []
    for a in range(R):
        if a >= mut.rank:
            sizes.append(b.const(1))
            continue
        d = b.i32("dim")
        b.ops.append(ir.TensorDim(d, mut.name, a))
        t = mut.tile_shape[a] * (widen[1] if a == widen[0] else 1)
        sizes.append(b.elem(E.DIV, b.elem(E.ADD, d, b.const(t - 1)), b.const(t), hint="grid"))
    return c, P, sizes, mut


def walk_setup(b: _Build, k: g.GpuKernel, kv: set[int], outside: list[object],
               bounds: tuple[ir.Value, ...], split: int = 0, fast_div: bool = False, form: str = "",
               plan_pairs: bool = False, tail: int = 0, widen: tuple[int, int] = (-1, 1),
               divs_in_role: bool = False, single: bool = False, once: bool = False) -> Walk:
    """The walk's values (`Walk`), computed by `b`'s ops before the roles;
    `fast_div`: the divisions `_tile` makes each tile by multipliers (`fastdiv`);
    `form` (`split_form`): "single", single tiles whatever the work (the
    single tiles' split form: launched only where the walk would hand out
    single tiles, and correct, unbalanced, anywhere else); "pairs", pairs
    whatever the work, the last round's pairs cut along both tiles' keys
    (correct anywhere too); `plan_pairs`: `Split.on_pairs` computed as well
    (the first form's request); `tail`: the last item rounds of pairs dealt
    out as single tiles (`attention_tail`; not with `split` or `form`); `widen` (axis, f): the grid of f
    tiles side by side along the axis (a wide GEMM tile, `gemm_widen`); `divs_in_role`: with `fast_div`, the
    divisors without their multipliers (plain divisions until a role computes them, `in_role`); `single`:
    single tiles whatever the work, each tile once (a `last_block` region's arrival, `attention.py`); `once`
    (`once_default`; every walk of a kernel alike): pairs of an odd number of query blocks run each tile once, two
    kv positions' middle tiles one pair (`_tile`), not each middle tile paired with itself."""
    """The walk's values, computed once (before the roles split). `outside`:
    the kernel's scalar ops before its loop; `bounds`: the loop's (lower,
    upper), computed by them. `split` > 0: where the walk hands out single
    tiles, each of the last round's tiles is cut along its keys into s
    pieces (at most `split` and the first tile's key blocks n), s = k P / left
    for the k in 1 .. SPLIT_ROUNDS that makes the last round's estimated time
    shortest (c = ceil(left s / P) rounds of n / s blocks and SPLIT_EDGE
    blocks of a tile's start and end, and s / 4 blocks of the merge); not
    where no s >= 2 beats a whole tile (n + SPLIT_EDGE)."""
    E = ir.ElemOp
    R = k.grid_rank
    c, P, sizes, mut = launch_and_grid(b, k, widen)
    fast = tuple(a for a in range(R) if a not in kv)
    kvs = tuple(a for a in range(R) if a in kv)

    def prod(axes: tuple[int, ...]) -> ir.Value:
        v = b.const(1)
        for a in axes:
            v = b.elem(E.MUL, v, sizes[a])
        return v

    nf, nk = prod(fast), prod(kvs)
    zero, one = b.const(0), b.const(1)
    # Uneven work (the first and the last query block of the first kv
    # position run different trip counts: a causal kernel) is handed out in
    # pairs, the i-th heaviest tile of a head with its i-th lightest, whose
    # sum is the same for every pair; one CTA runs both (an odd middle tile
    # twice, the same values stored again, unless `once`).
    want = form or ("single" if single else mode("TILEC_ATTN_WALK", "auto", ("auto", "pairs", "sections")))
    if want == "auto":
        ends = [_bounds(b, outside, bounds, _position(b, sizes, fast, kvs, f, zero), sizes)
                for f in (zero, b.elem(E.SUB, nf, one))]
        same = b.elem(E.AND, b.elem(E.EQ, ends[0][0], ends[1][0], dtype=DType.BOOL),
                      b.elem(E.EQ, ends[0][1], ends[1][1], dtype=DType.BOOL), dtype=DType.BOOL)
        pairs = b.elem(E.NOT, same, dtype=DType.BOOL, hint="pairs")
    else:
        pairs = b.elem(E.EQ, zero, zero if want == "pairs" else one, dtype=DType.BOOL, hint="pairs")
    half = b.elem(E.DIV, b.elem(E.ADD, nf, one), b.const(2))
    nh = b.elem(E.WHERE, pairs, half, nf, hint="items")
    N = b.elem(E.MUL, nh, nk, hint="items")
    odd_nf = None
    if once:  # pairs of an odd nf: a group of two kv positions has nf pairs, cdiv(nk nf, 2) in all (`_tile`)
        odd_nf = b.elem(E.AND, pairs, b.elem(E.EQ, b.elem(E.AND, nf, one), one, dtype=DType.BOOL), dtype=DType.BOOL,
                        hint="odd")
        nh = b.elem(E.WHERE, odd_nf, nf, nh, hint="items")
        N = b.elem(E.WHERE, odd_nf, b.elem(E.SHR, b.elem(E.ADD, b.elem(E.MUL, nf, nk), one), one), N, hint="items")
    # this CTA's items: every round but the last is full; in the last, its
    # place (c, or P-1-c in an odd round) must be below the items left
    R_ = b.elem(E.DIV, b.elem(E.ADD, N, b.elem(E.SUB, P, one)), P)
    last = b.elem(E.SUB, R_, one)
    odd = b.elem(E.EQ, b.elem(E.AND, last, one), one, dtype=DType.BOOL)
    place = b.elem(E.WHERE, odd, b.elem(E.SUB, b.elem(E.SUB, P, one), c), c)
    left = b.elem(E.SUB, N, b.elem(E.MUL, last, P))
    more = b.elem(E.LT, place, left, dtype=DType.BOOL)
    sp = None
    extra = b.elem(E.WHERE, more, one, zero)
    if split:
        lo, hi = _bounds(b, outside, bounds, _position(b, sizes, fast, kvs, zero, zero), sizes)
        blocks = b.elem(E.MAXIMUM, b.elem(E.SUB, hi, lo), one)
        left1 = b.elem(E.MAXIMUM, left, one)
        # the last round's time in quarter key blocks, times s: s pieces in c rounds cost c (n / s + EDGE)
        # (a tile's start and end cost about EDGE blocks), and the merge reads s records (~1/4 block each)
        four, edge = b.const(4), b.const(number("TILEC_ATTN_SPLIT_EDGE", SPLIT_EDGE, 0))
        def best(n: ir.Value, e: ir.Value) -> ir.Value:  # the pieces an item of n blocks, e blocks a start and end
            best_s, best_t = one, b.elem(E.MUL, four, b.elem(E.ADD, n, e))
            for k_ in range(1, SPLIT_ROUNDS + 1):
                s_k = b.elem(E.MINIMUM, b.elem(E.MINIMUM, b.elem(E.DIV, b.elem(E.MUL, P, b.const(k_)), left1), n),
                             b.const(split))
                c_k = b.elem(E.DIV, b.elem(E.ADD, b.elem(E.MUL, left1, s_k), b.elem(E.SUB, P, one)), P)
                t_k = b.elem(E.ADD, b.elem(E.MUL, b.elem(E.MUL, four, c_k), b.elem(E.ADD, n, b.elem(E.MUL, e, s_k))),
                             b.elem(E.MUL, s_k, s_k))
                better = b.elem(E.LT, b.elem(E.MUL, t_k, best_s), b.elem(E.MUL, best_t, s_k), dtype=DType.BOOL)
                best_s, best_t = b.elem(E.WHERE, better, s_k, best_s), b.elem(E.WHERE, better, t_k, best_t)
            return best_s

        best_s = best(blocks, edge)
        on = b.elem(E.AND, b.elem(E.NOT, pairs, dtype=DType.BOOL),
                    b.elem(E.AND, b.elem(E.GT, left, zero, dtype=DType.BOOL),
                           b.elem(E.GE, best_s, b.const(2), dtype=DType.BOOL), dtype=DType.BOOL), dtype=DType.BOOL,
                    hint="split")
        on_pairs = None
        if form == "pairs" or plan_pairs:  # a pair's blocks (the lightest tile's and the heaviest's), a piece two starts
            flo, fhi = _bounds(b, outside, bounds, _position(b, sizes, fast, kvs, b.elem(E.SUB, nf, one), zero), sizes)
            nz = b.elem(E.ADD, b.elem(E.MAXIMUM, b.elem(E.SUB, hi, lo), zero), b.elem(E.MAXIMUM, b.elem(E.SUB, fhi, flo), zero))
            pair_s = best(b.elem(E.MAXIMUM, nz, one), b.elem(E.MUL, edge, b.const(2)))
            on_pairs = b.elem(E.AND, pairs, b.elem(E.AND, b.elem(E.GT, left, zero, dtype=DType.BOOL),
                                                   b.elem(E.GE, pair_s, b.const(2), dtype=DType.BOOL), dtype=DType.BOOL),
                              dtype=DType.BOOL, hint="split")
            if form == "pairs":
                on, best_s = on_pairs, pair_s
        pieces = b.elem(E.WHERE, on, best_s, one, hint="pieces")
        q = b.elem(E.MUL, left1, pieces)
        mine = b.elem(E.WHERE, b.elem(E.LT, place, q, dtype=DType.BOOL),
                      b.elem(E.DIV, b.elem(E.ADD, b.elem(E.SUB, q, place), b.elem(E.SUB, P, one)), P), zero)
        extra = b.elem(E.WHERE, on, mine, extra)
        sp = Split(pieces, nk, on, on_pairs, form == "pairs")
    items = b.elem(E.MAXIMUM, b.elem(E.ADD, last, extra), zero)
    rounds = b.elem(E.WHERE, pairs, b.elem(E.MUL, items, b.const(2)), items, hint="rounds")
    if odd_nf is not None:  # an odd nk: the last kv position's middle tile, the walk's last item, is a pair's first half
        lone = b.elem(E.AND, b.elem(E.AND, odd_nf, b.elem(E.EQ, b.elem(E.AND, nk, one), one, dtype=DType.BOOL),
                                    dtype=DType.BOOL),
                      b.elem(E.EQ, place, b.elem(E.SUB, left, one), dtype=DType.BOOL), dtype=DType.BOOL)
        rounds = b.elem(E.SUB, rounds, b.elem(E.WHERE, lone, one, zero), hint="rounds")
    t_walk = None
    n_tail = tail if not split and not form else 0
    if n_tail:  # the last n item rounds of pairs as single tiles, heaviest first (`attention_tail.rounds`)
        dims = tuple((mut.name, a, mut.tile_shape[a]) for a in kvs if a < mut.rank)
        t_walk, t_rounds = attention_tail.setup(b, n_tail, pairs, nf, nk, N, R_, P, c, dims)
        rounds = b.elem(E.WHERE, b.elem(E.LT, t_walk.start, b.const(attention_tail.NEVER), dtype=DType.BOOL),
                        t_rounds, rounds, hint="rounds")
    # the divisors `_tile` divides by each tile: the items of a kv position, the grid's sizes that `unravel` divides by
    divs = tuple(FastDiv(d, None, None) if divs_in_role else fast_divisor(b, d) for d in (nh,)) \
        if fast_div else ()
    return Walk(rounds, c, P, tuple(sizes), kvs, fast, nf, pairs, nh, sp, divs, t_walk, once)


def last_round(b: _Build, w: Walk, one: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value, ir.Value]:
    """Walk `w`'s items and its last round, as `halves` and `attention_csplit`'s tickets place a CTA in it:
    (nk, the kv positions; n = nh * nk, the items; last = (n + P - 1) / P - 1, the last round; odd, whether
    that round runs backwards: the snake's odd rounds). `one`: the caller's constant 1."""
    E = ir.ElemOp
    nk = one
    for a in w.kv:
        nk = b.elem(E.MUL, nk, w.sizes[a])
    n = b.elem(E.MUL, w.nh, nk)
    last = b.elem(E.SUB, b.elem(E.DIV, b.elem(E.ADD, n, b.elem(E.SUB, w.P, one)), w.P), one)
    odd = b.elem(E.EQ, b.elem(E.AND, last, one), one, dtype=DType.BOOL)
    return nk, n, last, odd


def halves(b: _Build, w: Walk) -> Walk:
    """Walk `w` (whole tiles, no split) with its last round's tiles cut into their two 64-row halves where the
    halves fit in that round (`attention_qsplit`): single tiles (not pairs), some left for the last round and
    at most P / 2 of them (twice as many halves as tiles; more would put two halves on a CTA, one after the
    other: no faster than the whole tile). Place p of the last round then runs half p / left of its tile
    p % left (`split_marks` with 2 pieces), one half a CTA: `rounds` the whole rounds and that half."""
    E = ir.ElemOp
    zero, one, two = b.const(0), b.const(1), b.const(2)
    nk, n, last, odd = last_round(b, w, one)
    place = b.elem(E.WHERE, odd, b.elem(E.SUB, b.elem(E.SUB, w.P, one), w.c), w.c)
    left = b.elem(E.SUB, n, b.elem(E.MUL, last, w.P))
    on = b.elem(E.AND, b.elem(E.NOT, w.pairs, dtype=DType.BOOL),
                b.elem(E.AND, b.elem(E.GT, left, zero, dtype=DType.BOOL),
                       b.elem(E.LE, b.elem(E.MUL, left, two), w.P, dtype=DType.BOOL), dtype=DType.BOOL),
                dtype=DType.BOOL, hint="halves")
    mine = b.elem(E.WHERE, b.elem(E.LT, place, b.elem(E.MUL, left, two), dtype=DType.BOOL), one, zero)
    rounds = b.elem(E.WHERE, on, b.elem(E.MAXIMUM, b.elem(E.ADD, last, mine), zero), w.rounds, hint="rounds")
    pieces = b.elem(E.WHERE, on, two, one, hint="pieces")
    return dataclasses.replace(w, rounds=rounds, split=Split(pieces, nk, on, rows=True))


def _tile(b: _Build, w: Walk, r: ir.Value, marks: dict[str, ir.Value] | None = None) -> list[ir.Value]:
    """The logical position (one value per grid axis) of round `r`'s tile:
    item round `ir` (r, or r / 2 for pairs) gives CTA c item ir*P + c, or
    ir*P + P-1-c in an odd item round (a snake); item i is tile i % nh of
    kv position i / nh (the query blocks of one head together, heaviest
    first), or the pair (j, nf-1-j) with j = i % nh. In a split walk's last
    rounds CTA place p takes pieces q = p, p + P, ... (`Split`; `marks` gets
    the piece's values, `Marks`)."""
    E = ir.ElemOp
    one = b.const(1)
    ir_ = b.elem(E.WHERE, w.pairs, b.elem(E.SHR, r, one), r)
    odd = b.elem(E.EQ, b.elem(E.AND, ir_, one), one, dtype=DType.BOOL)
    place = b.elem(E.WHERE, odd, b.elem(E.SUB, b.elem(E.SUB, w.P, one), w.c), w.c)
    idx = b.elem(E.ADD, b.elem(E.MUL, ir_, w.P), place, hint="item")
    if w.split is not None and marks is not None:  # the last round's CTAs share its tiles, piece by piece
        marks.update(split_marks(b, ir_, w.P, w.c, w.nh, w.split.kvs, w.split.pieces))
        idx = b.elem(E.WHERE, marks["cut"], marks["tile"], idx, hint="item")
    kvpos = divide(b, idx, w.nh, w.divs)
    j = b.elem(E.SUB, idx, b.elem(E.MUL, kvpos, w.nh))
    second = b.elem(E.AND, w.pairs, b.elem(E.EQ, b.elem(E.AND, r, one), one, dtype=DType.BOOL), dtype=DType.BOOL)
    if w.once:  # pairs of an odd nf (h = (nf + 1) / 2 pairs a kv position, the last its middle tile alone): group
        # kvpos (kv positions 2 kvpos, 2 kvpos + 1) has kv 2 kvpos's pairs j < h - 1, then the pair of both middle
        # tiles (j = h - 1: its first tile 2 kvpos's, its second 2 kvpos + 1's, the same query block), then kv
        # 2 kvpos + 1's pairs j - h; every pair's sum is the same, each tile runs once
        odd_nf = b.elem(E.AND, w.pairs, b.elem(E.EQ, b.elem(E.AND, w.nf, one), one, dtype=DType.BOOL), dtype=DType.BOOL)
        h = b.elem(E.SHR, b.elem(E.ADD, w.nf, one), one)
        hi = b.elem(E.AND, odd_nf, b.elem(E.GE, j, h, dtype=DType.BOOL), dtype=DType.BOOL)
        mid2 = b.elem(E.AND, second, b.elem(E.EQ, j, b.elem(E.SUB, h, one), dtype=DType.BOOL), dtype=DType.BOOL)
        up = b.elem(E.AND, odd_nf, b.elem(E.OR, hi, mid2, dtype=DType.BOOL), dtype=DType.BOOL)
        kvpos = b.elem(E.ADD, b.elem(E.WHERE, odd_nf, b.elem(E.ADD, kvpos, kvpos), kvpos), b.elem(E.WHERE, up, one,
                                                                                                b.const(0)))
        j = b.elem(E.WHERE, hi, b.elem(E.SUB, j, h), j)
    qrev = b.elem(E.WHERE, second, b.elem(E.SUB, b.elem(E.SUB, w.nf, one), j), j)
    fpos = b.elem(E.SUB, b.elem(E.SUB, w.nf, one), qrev)
    if marks is not None:  # (the pairs form's pieces: the pair's other tile, `tile_loop`)
        marks.update({"fpos": fpos, "kvpos": kvpos, "second": second})
    if w.tail is not None:  # the walk's last rounds: single tiles, heaviest first
        kvpos, fpos = attention_tail.position(b, w.tail, r, w.P, w.c, w.nh, w.nf, kvpos, fpos)
    return _position(b, w.sizes, w.fast, w.kv, fpos, kvpos, w.divs)


def _position(b: _Build, sizes: tuple[ir.Value, ...] | list[ir.Value], fast: tuple[int, ...], kv: tuple[int, ...],
              fpos: ir.Value, kvpos: ir.Value, divs: tuple[FastDiv, ...] = ()) -> list[ir.Value]:
    """The grid position of linear positions `fpos` (over the `fast` axes,
    the first fastest) and `kvpos` (over the `kv` axes)."""
    pos = {**unravel(b, fpos, fast, sizes, divs), **unravel(b, kvpos, kv, sizes, divs)}
    return [pos[a] if a in pos else b.const(0) for a in range(len(sizes))]


def unravel(b: _Build, lin: ir.Value, axes: tuple[int, ...] | list[int],
            sizes: tuple[ir.Value, ...] | list[ir.Value], divs: tuple[FastDiv, ...] = ()) -> dict[int, ir.Value]:
    """The position on each of `axes` (the first fastest; grid sizes `sizes`)
    of the linear position `lin`: remainders and quotients, the last axis
    taking what is left (`divs`: `FastDiv`s of sizes, for `lin` >= 0)."""
    E = ir.ElemOp
    pos: dict[int, ir.Value] = {}
    for i, a in enumerate(axes):
        if i == len(axes) - 1:
            pos[a] = lin
        elif divs:  # the later axes' sizes are 1 in practice (the D axis): then lin < sizes[a], no division
            rest = b.const(1)
            for x in axes[i + 1:]:
                rest = b.elem(E.MUL, rest, sizes[x])
            tb, eb = _Build(b.fresh), _Build(b.fresh)
            qv = b.fresh.value(DType.I32, ())
            q0 = tb.const(0)
            qe = eb.elem(E.DIV, lin, sizes[a])
            re_ = eb.elem(E.SUB, lin, eb.elem(E.MUL, qe, sizes[a]))
            pv = b.fresh.value(DType.I32, (), "pid")
            b.ops.append(ir.If((pv, qv), b.elem(E.EQ, rest, b.const(1), dtype=DType.BOOL),
                               ir.Region((), (*tb.ops, ir.Yield((lin, q0)))),  # type: ignore[arg-type]
                               ir.Region((), (*eb.ops, ir.Yield((re_, qe))))))  # type: ignore[arg-type]
            pos[a], lin = pv, qv
        else:
            pos[a] = b.elem(E.REM, lin, sizes[a], hint="pid")
            lin = b.elem(E.DIV, lin, sizes[a])
    return pos


def _bounds(b: _Build, outside: list[object], bounds: tuple[ir.Value, ...], pos: list[ir.Value],
            sizes: tuple[ir.Value, ...] | list[ir.Value]) -> list[ir.Value]:
    """`bounds` as the ops of `outside` compute them for the tile at `pos`."""
    need = {v.id for v in bounds}
    keep: list[object] = []
    for op in reversed(outside):
        if any(r.id in need for r in g.results(op)):
            keep.append(op)
            need |= {v.id for o in g.walk(ir.Region((), (op,))) for v in g.operands(o)}  # type: ignore[arg-type]
    mapping: dict[int, ir.Value] = {}
    ops = clone(keep[::-1], b.fresh, mapping)
    b.ops += _logical(ops, pos, sizes)
    return [mapping.get(v.id, v) for v in bounds]


def _logical(ops: list[object], pos: list[ir.Value], sizes: tuple[ir.Value, ...] | list[ir.Value]) -> list[object]:
    """`ops` with each `block_id(a)` reading `pos[a]` and each `num_blocks(a)`
    reading `sizes[a]`."""
    blocks = {op.result.id: (pos if isinstance(op, ir.BlockId) else sizes)[op.axis]
              for op in g.walk(ir.Region((), tuple(ops))) if isinstance(op, ir.BlockId | ir.NumBlocks)}  # type: ignore[arg-type]
    kept = map_ops(ir.Region((), tuple(ops)), lambda op: [] if isinstance(op, ir.BlockId | ir.NumBlocks)  # type: ignore[arg-type]
                   and op.result.id in blocks else [op])
    return list(substitute_region(kept, blocks).ops)


def clone(ops: list[object], fresh: Fresh, mapping: dict[int, ir.Value]) -> list[object]:
    """`ops` with every value they define renamed (nested regions too) and
    every read of a renamed value redirected; `mapping` collects old -> new."""
    out: list[object] = []
    for op in ops:
        op = substitute(op, mapping)
        if isinstance(op, g.WgmmaRegA) and op.first is not None:  # the S issued with it: its own result
            f = substitute(op.first, mapping)
            mapping[f.result.id] = fresh.value(f.result.dtype, f.result.shape, f.result.hint)
            op = dataclasses.replace(op, first=dataclasses.replace(f, result=mapping[f.result.id]))

        def region(r: ir.Region) -> ir.Region:
            args = tuple(fresh.value(a.dtype, a.shape, a.hint) for a in r.args)
            for a, na in zip(r.args, args, strict=True):
                mapping[a.id] = na
            return ir.Region(args, tuple(clone(list(r.ops), fresh, mapping)))  # type: ignore[arg-type]

        op = with_regions(op, region)
        changes: dict[str, object] = {}
        for f in ("result", "results"):
            old = getattr(op, f, None)
            if isinstance(old, ir.Value):
                changes[f] = mapping[old.id] = fresh.value(old.dtype, old.shape, old.hint)
            elif isinstance(old, tuple) and old and all(isinstance(v, ir.Value) for v in old):
                new = tuple(fresh.value(v.dtype, v.shape, v.hint) for v in old)
                for v, nv in zip(old, new, strict=True):
                    mapping[v.id] = nv
                changes[f] = new
        out.append(dataclasses.replace(op, **changes) if changes else op)  # type: ignore[type-var]
    return out


def tile_loop(w: Walk, fresh: Fresh, outside: list[object], ops: list[object], ring: ir.Value,
              ring_out: ir.Value, tn: ir.Value, span: object,
              carry: tuple[tuple[ir.Value, ir.Value, object], ...] = (), marks: Marks | None = None,
              start: tuple[ir.Value, ir.Value, ir.Value] | None = None) -> list[object]:
    """One role's walk: for each of this CTA's tiles, `outside` (the kernel's
    scalar ops before its loop, re-run for the tile) then the role's `ops`,
    which read `ring` (the K/V ring's counter at the tile's start) and `tn`
    (the tile's number in this CTA) and define `ring_out` (the counter after
    it); every `block_id` / `num_blocks` reads the tile's logical values.
    `carry`: more values from tile to tile, (the value `ops` read, the one
    they define for the next tile (or a scalar op of `outside` computes for
    this tile), the first tile's constant or a value defined before the loop).
    `marks` (a split walk): the values `Marks` names, defined for each tile.
    `start`: (the first round, the ring's counter and the tile's number
    there), values defined before the loop, for a walk that goes on where
    another stopped (`attention_csplit`); else round 0 with both at 0."""
    E = ir.ElemOp
    r = fresh.value(DType.I32, (), "round")
    b = _Build(fresh)
    got: dict[str, ir.Value] = {}
    pos = _tile(b, w, r, got if marks is not None else None)
    mapping: dict[int, ir.Value] = {}
    body = [*b.ops, *clone(outside, fresh, mapping)]
    if stamps():  # the measurement points: the tile's top, then its position and bounds computed
        body = [g.Stamp(0, tn, span), *body, g.Stamp(1, tn, span)]  # type: ignore[arg-type]
    if marks is not None:  # the piece's key blocks: lo + n * piece / pieces .. lo + n * (piece + 1) / pieces
        sb = _Build(fresh)
        lo, hi = (mapping.get(v.id, v) for v in (marks.lower0, marks.upper0))
        n = sb.elem(E.MAXIMUM, sb.elem(E.SUB, hi, lo), sb.const(0))
        assert w.split is not None
        if w.split.rows:  # a half of the tile's rows: all of its keys
            lo2, hi2 = lo, sb.elem(E.ADD, lo, n)
        elif w.split.pairs:
            lo2, hi2 = _pair_piece(sb, w, outside, marks, got, lo, n)
        else:
            lo2, hi2 = (sb.elem(E.ADD, lo, sb.elem(E.DIV, sb.elem(E.MUL, n, x), got["pieces"]))
                        for x in (got["piece"], sb.elem(E.ADD, got["piece"], sb.const(1))))
        body += sb.ops
        assert w.split is not None
        mapping.update({marks.lower.id: lo2, marks.upper.id: hi2, marks.round.id: r, marks.P.id: w.P, marks.c.id: w.c,
                        marks.nh.id: w.nh, marks.kvs.id: w.split.kvs, marks.pieces.id: w.split.pieces})
    body += [substitute(op, mapping) for op in ops]

    nb = _Build(fresh)
    nxt = nb.elem(E.ADD, tn, nb.const(1))
    lo, st = fresh.value(DType.I32, (), ""), fresh.value(DType.I32, (), "")
    init_ring, init_tn = fresh.value(DType.I32, (), "ring0"), fresh.value(DType.I32, (), "tile0")
    # a carry's first value: a constant, or a value defined before the loop
    inits = [c if isinstance(c, ir.Value) else fresh.value(a.dtype, (), a.hint) for a, _, c in carry]
    outs = substitute(ir.Yield((ring_out, nxt, *(o for _, o, _ in carry))), mapping)
    region = ir.Region((), tuple(_logical([*body, *nb.ops, outs], pos, w.sizes)))  # type: ignore[arg-type]
    first, ring0, tn0 = start if start is not None else (lo, init_ring, init_tn)
    loop = ir.For((fresh.value(DType.I32, (), "ring"), fresh.value(DType.I32, (), "tiles"),
                   *(fresh.value(a.dtype, a.shape, a.hint) for a, _, _ in carry)), first, w.rounds, st,
                  (ring0, tn0, *inits),
                  ir.Region((r, ring, tn, *(a for a, _, _ in carry)),  # type: ignore[arg-type]
                            region.ops),
                  span)  # type: ignore[arg-type]
    firsts = [ir.Const(lo, 0), ir.Const(init_ring, 0), ir.Const(init_tn, 0)] if start is None else []
    return [*firsts[:1], ir.Const(st, 1), *firsts[1:],
            *(ir.Const(v, c) for v, (_, _, c) in zip(inits, carry, strict=True) if not isinstance(c, ir.Value)), loop]


def _pair_piece(b: _Build, w: Walk, outside: list[object], marks: Marks, got: dict[str, ir.Value], lo: ir.Value,
                n: ir.Value) -> tuple[ir.Value, ir.Value]:
    """The pairs form's key bounds for this round's tile (its blocks lo .. lo + n): in a cut round, piece i of s
    of its pair runs blocks [W i / s, W (i + 1) / s) of the pair's two tiles' blocks one after the other (A's
    n_A, then B's n_B: W = n_A + n_B; a middle tile paired with itself, W = n_A and both halves run the same
    blocks, as the whole walk runs it twice), this round's half (`second`: B) the part in its tile (maybe none);
    a whole round: lo .. lo + n. The other tile's bounds are computed (its `outside` ops) only in a cut round."""
    E = ir.ElemOp
    tb, eb = _Build(b.fresh), _Build(b.fresh)
    zero = tb.const(0)
    pf = tb.elem(E.SUB, tb.elem(E.SUB, w.nf, tb.const(1)), got["fpos"])
    plo, phi = _bounds(tb, outside, (marks.lower0, marks.upper0), _position(tb, w.sizes, w.fast, w.kv, pf, got["kvpos"]),
                       w.sizes)
    npart = tb.elem(E.MAXIMUM, tb.elem(E.SUB, phi, plo), zero)
    sec = got["second"]
    mid = tb.elem(E.EQ, pf, got["fpos"], dtype=DType.BOOL)
    na, nb = tb.elem(E.WHERE, sec, npart, n), tb.elem(E.WHERE, sec, n, npart)
    W = tb.elem(E.WHERE, mid, na, tb.elem(E.ADD, na, nb))
    ends = [tb.elem(E.DIV, tb.elem(E.MUL, W, x), got["pieces"]) for x in (got["piece"], tb.elem(E.ADD, got["piece"], tb.const(1)))]
    use_b = tb.elem(E.AND, sec, tb.elem(E.NOT, mid, dtype=DType.BOOL), dtype=DType.BOOL)
    off = [tb.elem(E.WHERE, use_b, tb.elem(E.MINIMUM, tb.elem(E.MAXIMUM, tb.elem(E.SUB, x, na), zero), nb),
                   tb.elem(E.MINIMUM, x, na)) for x in ends]
    then = [tb.elem(E.ADD, lo, x) for x in off]
    whole = [lo, eb.elem(E.ADD, lo, n)]
    lo2, hi2 = b.fresh.value(DType.I32, (), "lo"), b.fresh.value(DType.I32, (), "hi")
    b.ops.append(ir.If((lo2, hi2), got["cut"], ir.Region((), (*tb.ops, ir.Yield(tuple(then)))),  # type: ignore[arg-type]
                       ir.Region((), (*eb.ops, ir.Yield(tuple(whole))))))  # type: ignore[arg-type]
    return lo2, hi2


def kv_axes(k: g.GpuKernel, offsets: list[ir.Value]) -> set[int] | None:
    """The grid axes the K and V tiles' positions (`offsets`) depend on (None: unknown)."""
    defs: dict[int, object] = {}
    for op in g.walk(k.body):
        for r in g.results(op):
            defs[r.id] = op
    axes: set[int] = set()
    seen: set[int] = set()
    todo = list(offsets)
    while todo:
        v = todo.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        op = defs.get(v.id)
        if op is None:
            continue  # a loop index or a parameter
        if isinstance(op, ir.BlockId):
            axes.add(op.axis)
        elif isinstance(op, ir.If | ir.For | ir.While):
            return None
        elif isinstance(op, ir.NumBlocks | ir.Print):
            continue
        todo += list(g.operands(op))
    return axes


def kv_blocks_together(k: g.GpuKernel, kv: set[int] | None, body: ir.Region, fresh: Fresh) -> ir.Region:
    """Blocks that read the same K and V (the query blocks of one head) start
    together: CUDA starts blocks x fastest, and `o.partition([1, BM, D])` puts
    the head on x, so each of the ~132 blocks in flight would stream another
    head's K and V from memory. The grid axes the K/V positions do not depend
    on become the fastest (FlashAttention's grid order), the fastest walked
    from its end (the longest causal blocks first); every `block_id`
    read is the new position computed from the launch position (a bijection:
    each logical block still runs once). `kv`: `kv_axes`'s answer. Not with a
    waiting `last_block` arrival (`arrive_wait`, `block_order`'s rule too): its
    waiter is elected by `%ctaid`, the group's last in launch order; reordered,
    the waiters of a decode fold's 8 heads were all in one head's group (hdec)."""
    if k.grid_rank < 2 or any(isinstance(op, ir.Print) for op in g.walk(k.body)):
        return body
    if k.source.arrive_wait and any(isinstance(op, ir.LastBlock) for op in g.walk(k.body)):
        return body
    if kv is None:
        return body
    order = [a for a in range(k.grid_rank) if a not in kv] + [a for a in range(k.grid_rank) if a in kv]
    if order == list(range(k.grid_rank)):
        return body
    E = ir.ElemOp
    b = _Build(fresh)
    launch = [b.i32(f"launch_{'xyz'[a]}") for a in range(k.grid_rank)]
    sizes = [b.i32() for _ in range(k.grid_rank)]
    b.ops += [ir.BlockId(launch[a], a) for a in range(k.grid_rank)]
    b.ops += [ir.NumBlocks(sizes[a], a) for a in range(k.grid_rank)]
    lin = launch[-1]
    for a in range(k.grid_rank - 2, -1, -1):  # launch position, x fastest
        lin = b.elem(E.ADD, b.elem(E.MUL, lin, sizes[a]), launch[a])
    new = unravel(b, lin, order, sizes)
    # the fastest axis walked from its end: a causal kernel's last query blocks
    # see the most keys, and the longest blocks first leave the shortest for
    # the last wave (no effect on the others)
    fast = order[0]
    new[fast] = b.elem(E.SUB, b.elem(E.SUB, sizes[fast], b.const(1)), new[fast], hint="pid")
    mapping = {op.result.id: new[op.axis] for op in g.walk(body) if isinstance(op, ir.BlockId)
               and op.axis < k.grid_rank}
    kept = map_ops(body, lambda op: [] if isinstance(op, ir.BlockId) and op.result.id in mapping else [op])
    return substitute_region(ir.Region(body.args, (*b.ops, *kept.ops)), mapping)  # type: ignore[arg-type]


# The tile boundary of the walk (issue 15: at S = 1024 a tile is 8 key blocks,
# and the step from one tile to the next cost ~2.6 blocks' time on the H200,
# against ~1.35 for SDPA, from the S = 1024 and 16384 rows of 2026-12-03):
# "1" releases Q inside the rotated loop's last iteration, once its S (Q's last
# reader) is done, instead of after the loop (a softmax earlier: the next
# tile's Q copy starts under the last softmax); off until timed.
QEARLY_DEFAULT = "auto"  # "auto": in the short keys' variant (D = 128 S = 1024 with the fast walk, RESULTS 2026-12-04
# 15:51) and at the widths of `BOUNDARY_D` (with the fast walk and the producer at 24, the H100, call 24)
# "1": the producer copies the next tile's first K/V block before it waits for
# the Q buffer (the copy waits only for its ring stage; before, it queued
# behind the consumers' release of Q at the end of their loop); "auto": where
# the loop is not rotated (D = 64: +0.9..+2.8 % on the S = 1024 and 4096 rows,
# both rounds, H200 2026-12-03 third session; with the rotated loop at D = 128
# only timed together with QEARLY: -0.6..+0.4 %); "0": off.
KVFIRST_DEFAULT = "auto"


def stamps() -> bool:
    """`TILEC_ATTN_STAMPS=1`: cycle stamps at the walk's tile boundary (`g.Stamp`,
    `codegen/stamps.py`; a measurement: off, no kernel changes); "2" (`fine_stamps`) those and more."""
    return mode("TILEC_ATTN_STAMPS", "0", ("0", "1", "2")) in ("1", "2")


def fine_stamps() -> bool:
    """`TILEC_ATTN_STAMPS=2`: `stamps()`, and inside the chained tile's first iteration
    (`attention_rotated`'s `build`: slots 8-13, `benchmarks/probes/attention_stamps.py`'s `FINE`)."""
    return mode("TILEC_ATTN_STAMPS", "0", ("0", "1", "2")) == "2"


def stamped(ops: list[object], tn: ir.Value, points: list[tuple[int, int]], span: object) -> list[object]:
    """`ops` with a `g.Stamp(slot, tn)` before op `i` for each (i, slot) of
    `points` (i = len(ops): at the end), where `stamps()`; else `ops`."""
    if not stamps():
        return ops
    out: list[object] = []
    for i in range(len(ops) + 1):
        out += [g.Stamp(slot, tn, span) for j, slot in points if j == i]  # type: ignore[arg-type]
        if i < len(ops):
            out.append(ops[i])
    return out


def q_early(auto: bool) -> bool:
    """The consumers release Q in the rotated loop's last iteration
    (`TILEC_ATTN_QEARLY`: "1", "0", "auto" (unset: `QEARLY_DEFAULT`): `auto`,
    the short keys' variant and `wide_boundary`)."""
    want = mode("TILEC_ATTN_QEARLY", QEARLY_DEFAULT, ("0", "1", "auto"))
    return want == "1" or (want == "auto" and auto)


def kv_first(rotated: bool) -> bool:
    """The producer copies a tile's first K/V block before its Q
    (`TILEC_ATTN_KVFIRST`, unset: `KVFIRST_DEFAULT`; `rotated`: the consumers'
    loop is `attention_rotated`'s)."""
    want = mode("TILEC_ATTN_KVFIRST", KVFIRST_DEFAULT, ("0", "1", "auto"))
    return want == "1" or (want == "auto" and not rotated)


def q_after_first_kv(q_ops: list[object], iv: ir.Value, lower: ir.Value, upper: ir.Value, fresh: Fresh,
                     span: object) -> tuple[list[object], list[object]]:
    """The producer's tile with its Q copy (`q_ops`: the wait for the Q
    buffer, the copies) after the first K/V block's: the ops that end the
    K/V loop's body (the copy on its first iteration, `iv` == `lower`) and
    the ops after the loop (the copy when it did not run)."""
    E = ir.ElemOp
    nothing = ir.Region((), (ir.Yield(()),))
    b = _Build(fresh)
    first = b.elem(E.EQ, iv, lower, dtype=DType.BOOL, hint="first")
    inner = [*b.ops, ir.If((), first, ir.Region((), (*clone(q_ops, fresh, {}), ir.Yield(()))),  # type: ignore[arg-type]
                           nothing, span)]  # type: ignore[arg-type]
    a = _Build(fresh)
    idle = a.elem(E.GE, lower, upper, dtype=DType.BOOL, hint="idle")
    after = [*a.ops, ir.If((), idle, ir.Region((), (*q_ops, ir.Yield(()))), nothing, span)]  # type: ignore[arg-type]
    return inner, after


# `TILEC_ATTN_QDOUBLE` unset: "auto", Q double-buffered in the short keys' variant only (`short`: S_k <= 1,024;
# D = 64, where it fits): on the H100 (2026-12-05, calls 1 and 2 of the 17:27 session; benchmarks/RESULTS.md,
# "h15w") +0.3..+2.0 % at D = 64 S = 1,024 (call 1), -0.4..-2.9 % at S = 4,096 and 16,384 (the long keys'
# kernels, +1.2 % once); "1": wherever it fits; "0": never (the H200, 2026-12-04: -1.2..+0.4 %).
QDOUBLE_DEFAULT = "auto"


def q_slots(ok: bool, q_bytes: int, stage_bytes: int, stages: int, limit: int, xrot: bool = False,
            short: bool = False) -> int:
    """Q's buffers in the persistent walk: 2 (`TILEC_ATTN_QDOUBLE=1`) where
    `ok` (the walk, O not stored through shared memory) and two Q tiles and
    the ring's `stages` fit in `limit` bytes of shared memory (D = 64 at
    128 x 128: 2 x 16 + 4 x 32 KB; not D = 128's 2 x 32 + 3 x 64), so the
    producer copies the next tile's Q as soon as it has issued this tile's
    last K/V block (it waits for the release of the tile before this one's
    Q), and the next tile's first product never waits for its Q; else 1 (the
    copy waits for this tile's last S: `q_early`). `xrot`: `TILEC_ATTN_XROT=1`, which needs two slots;
    `short`: the short keys' variant (`QDOUBLE_DEFAULT`'s "auto")."""
    want = switches.mode("TILEC_ATTN_QDOUBLE", QDOUBLE_DEFAULT, ("0", "1", "auto"))
    if not ok or not (want == "1" or (want == "auto" and short) or xrot):
        return 1
    return 2 if 2 * q_bytes + stages * stage_bytes <= limit else 1


__all__ = [
    "BOUNDARY_D",
    "DIVS_IN_ROLE_DEFAULT",
    "FASTDIV_DEFAULT",
    "KVFIRST_DEFAULT",
    "ONCE_DEFAULT",
    "ONCE_KIND",
    "QDOUBLE_DEFAULT",
    "QEARLY_DEFAULT",
    "SPLIT_EDGE",
    "SPLIT_ROUNDS",
    "FastDiv",
    "Marks",
    "Split",
    "Walk",
    "clone",
    "divide",
    "divs_in_role",
    "enabled",
    "fast_divisor",
    "fastdiv",
    "halves",
    "in_role",
    "kv_axes",
    "kv_blocks_together",
    "kv_first",
    "last_round",
    "odd_pairs",
    "once_default",
    "q_after_first_kv",
    "q_early",
    "q_slots",
    "split_marks",
    "stamped",
    "stamps",
    "tile_loop",
    "walk_setup",
    "wide_boundary",
]
