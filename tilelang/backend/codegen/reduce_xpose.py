"""The lanes' stage of a blocked reduction when a thread holds R rows (`codegen/reduce.py`, step 2): a
transposing butterfly instead of R butterflies.

R butterflies over the k lane bits of the reduced dim cost R k shuffles (l09's `t.sum(2)` of a [1, 256, 256]
slice, 16 rows a thread over 32 lanes: 80). A transposing butterfly halves the rows at each lane bit: the
lane whose bit is 0 keeps the first half of its rows and sends the second, its partner the other way, so each
step exchanges R/2, R/4, .. values and leaves every lane the totals of R / 2^s rows (`scatter`; a bit left
once one row remains is an ordinary butterfly step). Where the rows' warps exchange their partials through
shared memory next (W > 1), each lane writes the rows it holds (16 + 8 + 4 + 2 + 1 ... in l09: 8 + 4 + 2 + 1
+ 1 = 16 shuffles, and the lanes' writes spread over 16 lanes where lane 0 wrote all 16); where not, the
steps run backwards (`gather`: R/2^s, .., R/2 more) so that every lane holds every row, as the result's
Slice layout says (80 -> 31). Row identities follow the lane bits through selects, never shuffles.

Applies where a model of the time says it is faster (`pays`: the steps back deepen the butterfly, so with them
only for many rows; R not a power of two is padded to one with rows of the identity, which no lane writes); float sums are combined in another order than R butterflies (each row's pairs
still one add each), integer, min/max and argmax/argmin results are the same values (`reduce.pick`'s tie
rule). `TILEC_REDUCE_XPOSE=0`: R butterflies (the kernels as before).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.backend.env_switch import flag
from tilelang.dtypes import DType

Row = list[str]  # the fields of one row: shuffled ones first (value, then index), then ones only selected


LAT = 24  # cycles of a shuffle and the combine after it: a butterfly level's latency
ISSUE = 4  # cycles a warp's shuffle takes at the SM's rate (one warp-instruction a clock for four schedulers)
STORE = 8  # a row's partial written under its branch (W > 1)


def pays(R: int, lanes: int, gathered: bool) -> bool:
    """Whether the transposing butterfly of R rows over `lanes` lanes takes less time than R butterflies
    (`gathered`: with the steps back, for a result every lane holds). A model, in cycles: the slower of the
    levels' latency (R butterflies interleave: k levels; the steps back add one a halving) and the shuffles at
    the SM's rate, plus the selects (one each) and, where each lane writes its rows, the writes. Without the
    steps back the depth stays k and it pays from R = 2; with them only for many rows (R >= 16 over 32 lanes),
    so a latency-bound kernel's few rows (the decode kernels' 2-8) keep their R butterflies."""
    if not flag("TILEC_REDUCE_XPOSE", "1") or R < 2 or lanes < 2:
        return False
    k = lanes.bit_length() - 1
    shfl = sel = halvings = 0
    n = 1 << (R - 1).bit_length()
    for _ in range(k):
        if n > 1:  # a halving level: n/2 shuffles, two selects each (and two for the row's slot and liveness)
            n //= 2
            halvings += 1
            shfl, sel = shfl + n, sel + (2 if gathered else 4) * n
        else:
            shfl += 1
    if gathered:
        back = n * ((1 << halvings) - 1)  # the steps back: n + 2n + .. rows (n held), two selects each
        shfl, sel = shfl + back, sel + 2 * back
    depth = k + (halvings if gathered else 0)
    old = max(k * LAT, R * k * ISSUE) + (0 if gathered else R * STORE)
    new = max(depth * LAT, shfl * ISSUE) + sel + (0 if gathered else n * STORE)
    return new < old


def _lane_bit(em: Any, mask: int) -> str:
    """i1: this thread's lane has bit `mask` set."""
    return em.emit(f"icmp ne i32 {em.emit(f'and i32 {em.tid0()}, {mask}')}, 0")  # type: ignore[no-any-return]


def _sel(em: Any, c: str, tys: list[str], a: Row, b: Row) -> Row:
    return [em.emit(f"select i1 {c}, {t} {x}, {t} {y}") for t, x, y in zip(tys, a, b, strict=True)]


def scatter(em: Any, masks: list[int], rows: list[Row], tys: list[str], shfl_dts: list[DType],
            combine: Callable[[Row, Row], Row]) -> tuple[list[Row], list[tuple[str, int]]]:
    """The rows' partials over the lane bits `masks` (lowest first), halving the rows at each bit while there
    are two or more. Returns the rows this lane holds (which, the bits' values say: position p of the rows held
    is row p of the first half at a level where the bit is 0, of the second where it is 1) and the levels that
    halved, (the bit as i1, its mask), for `gather`. `tys`: each field's LLVM type; `shfl_dts`: the dtypes of
    the shuffled fields (the first len(shfl_dts)); `combine(kept, received)` gives a row's shuffled fields."""
    ns = len(shfl_dts)
    levels: list[tuple[str, int]] = []
    cur = rows
    for mask in masks:
        if len(cur) == 1:  # one row left: an ordinary butterfly step
            (row,) = cur
            got = [em.shfl_xor(v, dt, mask) for v, dt in zip(row[:ns], shfl_dts, strict=True)]
            cur = [combine(row[:ns], got) + row[ns:]]
            continue
        hi = _lane_bit(em, mask)
        h = len(cur) // 2
        nxt = []
        for a, b in zip(cur[:h], cur[h:], strict=True):
            send = _sel(em, hi, tys[:ns], a[:ns], b[:ns])  # bit 1 keeps the second half, sends the first
            keep = _sel(em, hi, tys, b, a)
            got = [em.shfl_xor(v, dt, mask) for v, dt in zip(send, shfl_dts, strict=True)]
            nxt.append(combine(keep[:ns], got) + keep[ns:])
        cur = nxt
        levels.append((hi, mask))
    return cur, levels


def gather(em: Any, held: list[Row], levels: list[tuple[str, int]], tys: list[str],
           shfl_dts: list[DType]) -> list[Row]:
    """`scatter`'s halving levels run backwards: every lane ends with every row, in the rows' first order."""
    cur = held
    for hi, mask in reversed(levels):
        firsts, seconds = [], []
        for row in cur:
            got = [em.shfl_xor(v, dt, mask) for v, dt in zip(row, shfl_dts, strict=True)]
            firsts.append(_sel(em, hi, tys, got, row))
            seconds.append(_sel(em, hi, tys, row, got))
        cur = firsts + seconds
    return cur


__all__ = ["gather", "pays", "scatter"]
