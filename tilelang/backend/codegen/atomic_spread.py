"""An atomic of a tile whose layout holds copies of it (hcliff13): `atomic_add(&hist, [0], t.sum(0))` with the
reduced [16] tile in every thread. One copy must add each element; before, the first copy's thread added them
all, one atomic instruction an element with one lane on (tests/user l02: 16 one-lane `REDG.E.ADD.F32` a block into
one 64-byte line, 262,144 for 2^24 values, after that thread alone had summed the 8 warps' partials). Here the
copies share the work: along the layout's replicated dim, copy rho (0 .. R - 1) issues slots n with n % R == rho,
one atomic instruction a round of R slots, its value and index picked by rho from the thread's registers
(`replicated.pick`, a tree of selects): l02's 16 adds are one instruction of 16 lanes, one request a sector.

Only a blocked layout with exactly one replicated dim (a reduction's slice: every lane and warp along the reduced
dim holds a copy); others keep the first copy's loop. Each element is added once, as before; only which thread
adds it changes (and so the order of the adds, which atomics never fixed). `TILEC_ATOMIC_SPREAD` "1" (the
default) or "0" (the first copy adds all: an A/B switch)."""

from __future__ import annotations

from typing import Any

from tilelang.backend.env_switch import flag
from tilelang.ir import nodes as ir

from .llvm_types import reg_ty
from .replicated import pick
from .views import BlockedView


def enabled() -> bool:
    """`TILEC_ATOMIC_SPREAD`: "1" (unset: the copies of a replicated tile share its atomics) or "0"."""
    return flag("TILEC_ATOMIC_SPREAD", "1")


def replicas(em: Any, lay: object) -> tuple[int, str, int] | None:
    """(dim, this thread's copy index rho, copies R) of a blocked view replicated along one dim, else None."""
    if not isinstance(lay, BlockedView) or lay.E < 2 or not enabled():
        return None  # (one element a copy: the first copy adds it, as before)
    reps = [d for d, m in enumerate(lay.dims) if m.repl]
    if len(reps) != 1:
        return None
    d = reps[0]
    m = lay.dims[d]
    copies = m.s * m.tpw * m.wpc // m.extent
    if copies < 2:
        return None
    raw = lay._digit(em, d)[0]  # position * s: copy rho holds position raw - rho * extent
    sh = m.extent.bit_length() - 1
    rho = raw if sh == 0 else em.emit(f"lshr i32 {raw}, {sh}")
    return d, rho, copies


def emit(em: Any, op: ir.AtomicRMW, lay: BlockedView, rep: tuple[int, str, int],
         one: Any) -> None:
    """Issue `op` (a tile atomic in layout `lay`) round by round: round r's slots r R .. r R + R - 1, slot
    r R + rho by copy rho. `one(coords, value, conds, after)` emits an atomic guarded by the conditions, the
    bounds test and `after` (memory.MemoryOps.atomic's body)."""
    d, rho, copies = rep
    x = op.value
    dt = x.dtype
    vals = em.get(x)
    positions = [(k, j) for k in range(lay.K) for j in range(lay.V)]
    idx_vals = [em.get(i) for i in op.indices]
    mask = em.get(op.mask) if op.mask is not None else None
    others = lay.owner(em, skip=d)  # (none: one replicated dim)
    for r0 in range(0, len(positions), copies):
        members = list(range(r0, min(len(positions), r0 + copies)))

        def chosen(xs: list[str], ty: str, members: list[int] = members) -> str:
            return pick(em, [xs[n] for n in members], rho, ty)

        conds: list[str | None] = [others]
        if len(members) < copies:
            conds.append(em.emit(f"icmp ult i32 {rho}, {len(members)}"))
        valid = [lay.chunk_valid(em, k) or "true" for k, _j in positions]
        if any(v != "true" for v in valid):
            conds.append(chosen(valid, "i1"))
        coords = [chosen(v, reg_ty(i.dtype)) if isinstance(v, list) else v for v, i in zip(idx_vals, op.indices,
                                                                                            strict=True)]
        after = [] if mask is None else [chosen(mask, "i1") if isinstance(mask, list) else mask]
        one(coords, chosen(vals, reg_ty(dt)), conds, after)


__all__ = ["emit", "enabled", "replicas"]
