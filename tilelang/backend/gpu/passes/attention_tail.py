"""The persistent walk's last rounds of causal pairs as single tiles, heaviest
first (`TILEC_ATTN_TAIL`: "auto" (unset) in the causal launches over long
keys, "1" the last `TAIL_ROUNDS` item rounds wherever a kernel can have
them, a number n >= 2 the last n, "0" none; issue 15).

The walk (`attention_tiles`) hands out uneven work (a causal kernel) in pairs
of tiles whose sums are equal; with N pairs on P CTAs the last round is
partial (D = 64 at 16k tokens: 2,048 pairs on 132 CTAs, 15.5 rounds run as 16,
the last one with 68 CTAs busy: ~3 % of the time idle at every S). With
a tail of n item rounds the last n rounds' pairs (items T P .. N, T = the
item rounds before them) are split into their 2 (N - T P) tiles, ordered by
weight (the tile's reversed query block `v`: the heaviest first, then by
kv position) and dealt out as a snake (round t gives CTA c tile t P + c, or
t P + P-1-c in an odd round): longest-processing-time first, so that the
CTAs end within about one short tile of each other (a model of the walk with
a tile's start and end at ~1.2 key blocks: +1.9..+2.7 % at S = 1024 .. 16384
for n = 2..4; `benchmarks/RESULTS.md`, h15s).

Which tile is the t-th of the tail, in closed form: the tail's items start
at kv position kv0 = T P / nh, query block pair j0 = T P % nh; a weight v
(0 .. nf) has the tiles of kv positions kv0 + 1 .. nk, and kv0's too where
its pair (v, or nf - 1 - v on the light side) is at least j0, that is v in
[j0, nf - j0): M = nk - 1 - kv0 tiles a weight on the two outer ranges,
M + 1 on the middle one. So t falls in one of three ranges of weights, each
weight with the same count of tiles, and one division finds v and the kv
position. Only where nf (the query blocks of a kv position) is even: with odd
nf the middle tile is its own pair (run twice), which the count above does
not hold; such launches keep the pairs. The tiles are the pairs' tiles, each
run once: the same outputs.

Where (the default "auto", from the H100's A/B of 2026-12-05 09:55 with
`TILEC_ATTN_SPLIT=0`: D = 64 causal S = 4096 and 16384 +1.8..+2.6 %, the short
keys' chained variant at S = 1024 -1.2 %): only in a variant of its own, the
tail variant, which a launch runs where its walk hands out pairs of an even
`nf` (`attention_split.tail_request`: a `split_form.SplitForm` of kind `KIND`, evaluated on the
host once a launch shape as the split forms are; the variant is compiled
with `TensorFacts.split_walk` = "tail" on the walk's carrier). The kernel
that asks is the long keys' one (not the short keys' variant,
`attention_chain.SHORT_BLOCKS`) at the value widths `AUTO_D` (64 and 128); the variant is
that kernel without `TILEC_ATTN_SPLIT`'s code (the split never runs on
pairs) and with the tail. So a launch that does not walk pairs (every full
launch), and every launch of the short keys' variant, runs today's kernel
byte for byte. The tail is never in a kernel with the split's code: there
ptxas 13.0 spilled 64-68 bytes with it and scheduled the key loops longer,
which the full launches of the same kernel would pay for nothing
(RESULTS.md, h15s).
"""

from __future__ import annotations

import dataclasses
import os

from tilelang.backend.env_switch import SwitchError, numbers
from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .build import _Build

# "auto": the long keys' causal launches only, through the tail variant (`attention_split.tail_request`; the
# H100, 2026-12-05: +1.8..+2.6 % at D = 64 causal S >= 4096 without the split's code, -1.2 % in the short keys'
# chained variant)
TAIL_DEFAULT = "auto"
# "1": this many item rounds (the model: +2.2 / +2.0 / +1.9 % at S = 1024 / 4096 / 16384; 4 rounds gain
# +2.2 / +2.6 / +2.7 % but their tiles' K and V, ~29 MB at D = 64, may not stay in the L2 as the 13 MB of 2 do)
TAIL_ROUNDS = 2
# the value rows' widths whose long keys' kernel asks for the tail variant under "auto": D = 64, and D = 128 since
# the H100's A C C A of 2026-12-05 13:20 (`TILEC_ATTN_TAIL_D=64,128` against D = 64 only: every D = 128 causal
# row at S >= 4096 +1.9..+2.3 %, f16 and bf16, errors identical), although its variant spills 4 bytes in ptxas
# 13.0 (a value stored once a CTA and reloaded once a tile by the consumers, before the tile's first product, not
# in the key loop). `TILEC_ATTN_TAIL_D=64` restores D = 64 only.
AUTO_D = (64, 128)
KIND = "tail"  # the tail variant's `TensorFacts.split_walk`


def setting() -> str:
    """`TILEC_ATTN_TAIL` (unset: `TAIL_DEFAULT`): "auto", or a number of item rounds (checked)."""
    v = os.environ.get("TILEC_ATTN_TAIL", "").strip() or TAIL_DEFAULT
    if v != "auto" and not v.isdigit():
        raise SwitchError("TILEC_ATTN_TAIL", v, f"auto (the long keys' causal launches), 0 (off), "
                          f"1 (on: {TAIL_ROUNDS} item rounds) or a number of item rounds")
    return v


def rounds(variant: bool = False) -> int:
    """How many of the walk's last item rounds of pairs a kernel without the
    split's code deals out as single tiles (`TILEC_ATTN_TAIL`): "0" none, "1"
    `TAIL_ROUNDS`, a number n >= 2 that many, in every such kernel; "auto"
    (unset: `TAIL_DEFAULT`) `TAIL_ROUNDS` in the tail variant (`variant`) only."""
    v = setting()
    if v == "auto":
        return TAIL_ROUNDS if variant else 0
    n = int(v)
    return TAIL_ROUNDS if n == 1 else n


def asks(width: int, variant: bool, own: bool) -> bool:
    """Whether a persistent kernel (value rows `width` wide; `variant`: itself
    a variant the runtime picked, the short keys' one, a split form or the
    tail's; `own`: its walk has a tail) asks for the tail variant: under
    "auto" the long keys' kernels at the `AUTO_D` widths; under a number those
    whose walk has none (the split's code); never a variant (the runtime asks
    the first one only: the short keys' variant has its own walk's tail or
    none)."""
    v = setting()
    if variant or own or v == "0":
        return False
    return v != "auto" or width in auto_d()


def auto_d() -> tuple[int, ...]:
    """`AUTO_D`, or `TILEC_ATTN_TAIL_D`'s widths (comma-separated, e.g. "64,128": measurements)."""
    return numbers("TILEC_ATTN_TAIL_D", AUTO_D)


def applies(b: _Build, pairs: ir.Value, nf: ir.Value) -> ir.Value:
    """Whether a walk has a tail (bool, `b`'s op): it hands out pairs (`pairs`) of an even number `nf` of query
    blocks a kv position (with odd nf the middle tile is its own pair). The tail variant's request asks for it
    where this holds (`attention_split.tail_request`)."""
    E = ir.ElemOp
    even = b.elem(E.EQ, b.elem(E.AND, nf, b.const(1)), b.const(0), dtype=DType.BOOL)
    return b.elem(E.AND, pairs, even, dtype=DType.BOOL, hint="tail")


@dataclasses.dataclass(frozen=True, slots=True)
class Tail:
    """The tail's one value that lives through the walk (`start`); the rest is
    recomputed in the tail's tiles from the walk's other values and the
    output's dims (`dims`: the kv axes' (tensor, axis, tile)), so that no
    more registers live through the key loops (with kv0, j0 and M kept,
    ptxas spilled 96 bytes in the D = 64 split kernel)."""

    start: ir.Value  # the CTA's tile rounds before its tail (2 T), or NEVER where the walk has no tail
    dims: tuple[tuple[str, int, int], ...]


NEVER = 0x7FFFFFFF  # `Tail.start` where the walk has no tail (pairs with nf even)


def setup(b: _Build, n: int, pairs: ir.Value, nf: ir.Value, nk: ir.Value, N: ir.Value, R: ir.Value,
          P: ir.Value, c: ir.Value, dims: tuple[tuple[str, int, int], ...]) -> tuple[Tail, ir.Value]:
    """The tail of the last `n` item rounds (R of them, N items, P CTAs, c this
    one; pairs of nf query blocks, nk kv positions, whose grid sizes `dims`
    give) and this CTA's tile rounds with it (where the tail is on: its 2 T
    pair tiles and its tail tiles; else its pairs' rounds, which the caller keeps)."""
    E = ir.ElemOp
    zero, one = b.const(0), b.const(1)
    even = b.elem(E.EQ, b.elem(E.AND, nf, one), zero, dtype=DType.BOOL)
    on = b.elem(E.AND, pairs, even, dtype=DType.BOOL, hint="tail")  # (as `applies`, on this builder's constants)
    T = b.elem(E.MAXIMUM, b.elem(E.SUB, R, b.const(n)), zero)
    A = b.elem(E.MUL, T, P)
    L = b.elem(E.MUL, b.elem(E.MAXIMUM, b.elem(E.SUB, N, A), zero), b.const(2))  # the tail's tiles
    RT = b.elem(E.DIV, L, P)
    left = b.elem(E.SUB, L, b.elem(E.MUL, RT, P))
    odd = b.elem(E.EQ, b.elem(E.AND, RT, one), one, dtype=DType.BOOL)
    place = b.elem(E.WHERE, odd, b.elem(E.SUB, b.elem(E.SUB, P, one), c), c)
    mine = b.elem(E.ADD, RT, b.elem(E.WHERE, b.elem(E.LT, place, left, dtype=DType.BOOL), one, zero))
    start = b.elem(E.MUL, T, b.const(2))
    rounds = b.elem(E.ADD, start, mine, hint="rounds")
    return Tail(b.elem(E.WHERE, on, start, b.const(NEVER), hint="tail_start"), dims), rounds


def position(b: _Build, t: Tail, r: ir.Value, P: ir.Value, c: ir.Value, nh: ir.Value, nf: ir.Value,
             kvpos: ir.Value, fpos: ir.Value) -> tuple[ir.Value, ir.Value]:
    """Round `r`'s (kv position, fast position): the pair walk's (`kvpos`,
    `fpos`) before the tail, the tail's tile in it (computed in a branch, from
    the walk's values through `g.Opaque`, so that LLVM does not compute it
    before the walk: the pair rounds pay one compare)."""
    E = ir.ElemOp
    inside = b.elem(E.GE, r, t.start, dtype=DType.BOOL, hint="in_tail")
    tb, eb = _Build(b.fresh), _Build(b.fresh)
    zero, one = tb.const(0), tb.const(1)
    st, P_, c_, nh_, nf_ = (tb.fresh.value(DType.I32, (), h) for h in ("tail_start", "ctas", "cta", "items", "nf"))
    tb.ops.append(g.Opaque((st, P_, c_, nh_, nf_), (t.start, P, c, nh, nf)))
    A = tb.elem(E.MUL, tb.elem(E.SHR, st, one), P_)  # the tail's first item
    kv0 = tb.elem(E.DIV, A, tb.elem(E.MAXIMUM, nh_, one))
    j0 = tb.elem(E.SUB, A, tb.elem(E.MUL, kv0, nh_))
    nk = one
    for tensor, axis, tile in t.dims:
        d = tb.fresh.value(DType.I32, (), "dim")
        tb.ops.append(ir.TensorDim(d, tensor, axis))
        nk = tb.elem(E.MUL, nk, tb.elem(E.DIV, tb.elem(E.ADD, d, tb.const(tile - 1)), tb.const(tile)))
    m = tb.elem(E.SUB, tb.elem(E.SUB, nk, one), kv0)  # the tiles of a weight past kv0
    tr = tb.elem(E.SUB, r, st)
    odd = tb.elem(E.EQ, tb.elem(E.AND, tr, one), one, dtype=DType.BOOL)
    place = tb.elem(E.WHERE, odd, tb.elem(E.SUB, tb.elem(E.SUB, P_, one), c_), c_)
    i = tb.elem(E.ADD, tb.elem(E.MUL, tr, P_), place, hint="tail_tile")
    m1 = tb.elem(E.ADD, m, one)
    b1 = tb.elem(E.MUL, j0, m)  # tiles of the weights below j0
    b2 = tb.elem(E.ADD, b1, tb.elem(E.MUL, tb.elem(E.SUB, nf_, tb.elem(E.MUL, j0, tb.const(2))), m1))
    low = tb.elem(E.LT, i, b1, dtype=DType.BOOL)
    mid = tb.elem(E.AND, tb.elem(E.NOT, low, dtype=DType.BOOL), tb.elem(E.LT, i, b2, dtype=DType.BOOL),
                  dtype=DType.BOOL)
    base = tb.elem(E.WHERE, low, zero, tb.elem(E.WHERE, mid, b1, b2))
    vbase = tb.elem(E.WHERE, low, zero, tb.elem(E.WHERE, mid, j0, tb.elem(E.SUB, nf_, j0)))
    den = tb.elem(E.WHERE, mid, m1, tb.elem(E.MAXIMUM, m, one))
    off = tb.elem(E.SUB, i, base)
    q = tb.elem(E.DIV, off, den)
    kv = tb.elem(E.ADD, tb.elem(E.ADD, kv0, tb.elem(E.SUB, off, tb.elem(E.MUL, q, den))),
                 tb.elem(E.WHERE, mid, zero, one))
    f = tb.elem(E.SUB, tb.elem(E.SUB, nf_, one), tb.elem(E.ADD, vbase, q))
    kv_out, f_out = b.fresh.value(DType.I32, (), "kvpos"), b.fresh.value(DType.I32, (), "fpos")
    b.ops.append(ir.If((kv_out, f_out), inside, ir.Region((), (*tb.ops, ir.Yield((kv, f)))),  # type: ignore[arg-type]
                       ir.Region((), (*eb.ops, ir.Yield((kvpos, fpos))))))  # type: ignore[arg-type]
    return kv_out, f_out


__all__ = ["AUTO_D", "KIND", "NEVER", "TAIL_DEFAULT", "TAIL_ROUNDS", "Tail", "applies", "asks", "auto_d", "position",
           "rounds", "setting", "setup"]
