"""Full unrolling of a short counted loop of register arithmetic (hcliff13): `for r in 0..10 { .. }` whose
bounds are constants and whose body only computes on tiles and scalars (element-wise ops, casts, constants,
broadcasts: no memory, no barrier, no inner loop or branch) gets `llvm.loop.unroll.full` on its latch, as
nvcc unrolls such a loop unasked. Kept as a loop, each trip ends by moving the values it hands to the next one
into the registers the loop carries them in: Philox4x32-10 in tests/user l15 (a round's 32 x 32 -> 64-bit
products land in register pairs, and the round's outputs rotate) spent 16 `IMAD.MOV` a round beside its 16
`IMAD.WIDE.U32` and 16 `LOP3`, on the FMA pipe the multiplies need (ptxas 13, sm_90a: 755 instructions a thread
for its 8 elements, 520 unrolled, with the key schedule folded into uniform adds).

Only where the loop is short (`TRIPS`) and its unrolled body small (`SLOTS`: trips times the registers a
thread the body's results take): the code grows by the trip count. `TILEC_UNROLL` "auto" (the default) or "0"
(never: the loop as before, a measurement switch). The result is the same: the same operations in the same
order, only the loop's control is gone."""

from __future__ import annotations

from typing import Any

from tilelang.backend.env_switch import mode
from tilelang.ir import nodes as ir

TRIPS = 16  # at most this many trips
SLOTS = 4096  # trips x the registers a thread of the body's results, at most

_PURE = (ir.Elementwise, ir.Cast, ir.Const, ir.Broadcast, ir.Yield)


def enabled() -> bool:
    """`TILEC_UNROLL`: "auto" (unset: short loops of register arithmetic unrolled) or "0" (none)."""
    return mode("TILEC_UNROLL", "auto", ("auto", "0")) == "auto"


def _int(s: str) -> int | None:
    return int(s) if s.lstrip("-").isdigit() else None


def full(em: Any, op: ir.For) -> bool:
    """Whether loop `op` is unrolled whole (see the module)."""
    if not enabled():
        return False
    lo, hi, st = (_int(em.scalar(v)) for v in (op.lower, op.upper, op.step))
    if lo is None or hi is None or st is None or st <= 0:
        return False
    trips = -(-(hi - lo) // st)
    if not 2 <= trips <= TRIPS:
        return False
    slots = 0
    for o in op.body.ops:
        if not isinstance(o, _PURE):
            return False
        if isinstance(o, ir.Yield):
            continue
        slots += em.nregs(o.result) if o.result.shape else 1
    return trips * slots <= SLOTS


def latch(em: Any) -> str:
    """The metadata attachment for an unrolled loop's latch branch; its nodes go to `em.loop_md`."""
    md: list[str] = em.loop_md
    n = 1 + len(md)  # (`!0` is `!invariant.load`'s empty node)
    md += [f"!{n} = distinct !{{!{n}, !{n + 1}}}", f'!{n + 1} = !{{!"llvm.loop.unroll.full"}}']
    return f", !llvm.loop !{n}"


__all__ = ["SLOTS", "TRIPS", "enabled", "full", "latch"]
