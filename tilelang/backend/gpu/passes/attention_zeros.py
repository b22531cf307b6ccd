"""The attention pipeline's "the loop never ran" zeros, dropped where the
epilogue never lets them through (`passes/attention.py`).

The overlapped and rotated schedules never write the accumulator before the
first P V (`use_acc` ignores it), so when the key loop runs no iteration (a
causal row block that sees no key) the accumulator's registers hold nothing
in particular, and after the last wait they select the user's zero
accumulator element by element: `where(ran, acc, 0)`, one select a register
(64 a thread at 128 x 128, D = 128) in every tile's epilogue, while the
tensor cores idle.

The select is dead when every value the epilogue computes from that
accumulator reaches memory only as the taken side of a `where(c, x, y)` whose
condition is false in every element when the loop never ran: `c` a
broadcast of `m > k` (or `k < m`), `m` a loop-carried value whose initial
value is the constant `k`. A loop that runs no iteration returns its initial
values, so `k > k` is false and the `where` yields `y`, whatever the
accumulator held. `std::attention`'s `normalize` is that form: `where(m >
MASKED, acc / l, 0.0)` with `m` starting at `MASKED`. Anything else (a
store, a reduction, a yield, a nested region reading the accumulator)
keeps the select. `TILEC_ATTN_DROP_ZEROS=0` keeps it always.
"""

from __future__ import annotations

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .switches import flag

# "1": drop the select where the epilogue provably discards it; "0": keep it.
DROP_DEFAULT = "1"


def enabled() -> bool:
    return flag("TILEC_ATTN_DROP_ZEROS", DROP_DEFAULT)


def drop_unread_zeros(post: list[object], epilogue: list[object], loop: ir.For, back: dict[int, ir.Value],
                      before: list[object]) -> tuple[list[object], list[object]]:
    """(post, epilogue) without the zero select of `post` (`where(ran, w, 0)`
    over the accumulator) when the epilogue discards it (see the module's
    docstring), the epilogue then reading `w`; else both as given. `loop`:
    the user's loop; `back`: its results -> the values after the pipeline;
    `before`: the ops before the loop (its initial values)."""
    if not enabled():
        return post, epilogue
    defs = {r.id: op for op in (*before, *post, *epilogue) for r in g.results(op)}
    sel = next((op for op in post if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.WHERE
                and _is_ran(defs.get(op.operands[0].id)) and _is_zero(defs.get(op.operands[2].id))), None)
    if sel is None:
        return post, epilogue
    # values equal to the constant k when the loop ran no iteration
    empty: dict[int, float] = {}
    for res, init in zip(loop.results, loop.inits, strict=True):
        k = _const(defs.get(init.id))
        new = back.get(res.id)
        if k is not None and new is not None:
            empty[new.id] = k
    tainted = {sel.result.id}
    for op in epilogue:
        reads = [v for o in g.walk(ir.Region((), (op,))) for v in g.operands(o)]  # type: ignore[arg-type]
        if not any(v.id in tainted for v in reads):
            continue
        if isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.WHERE and op.operands[1].id in tainted \
                and op.operands[0].id not in tainted and op.operands[2].id not in tainted \
                and _false_when_empty(op.operands[0], defs, empty):
            continue  # the accumulator stops here when the loop never ran
        if isinstance(op, ir.Elementwise | ir.Cast | ir.Broadcast | ir.Reshape):
            tainted.add(op.result.id)
            continue
        return post, epilogue  # it reaches a store, a reduction, a region...
    from .rewrite import substitute

    epilogue = [substitute(op, {sel.result.id: sel.operands[1]}) for op in epilogue]
    kept = [op for op in post if op is not sel]
    # the select's condition and zeros, when nothing else reads them
    read = {v.id for op in (*kept, *epilogue) for o in g.walk(ir.Region((), (op,))) for v in g.operands(o)}  # type: ignore[arg-type]
    gone = {sel.operands[0].id, sel.operands[2].id} - read
    return [op for op in kept if not any(r.id in gone for r in g.results(op))], epilogue


def _is_ran(op: object) -> bool:
    return isinstance(op, ir.Broadcast) and not op.x.shape and op.x.dtype is DType.BOOL


def _is_zero(op: object) -> bool:
    k = _const(op)
    return k is not None and k == 0.0


def _const(op: object) -> float | None:
    if isinstance(op, ir.Const) and isinstance(op.value, int | float) and not isinstance(op.value, bool):
        return float(op.value)
    return None


def _false_when_empty(c: ir.Value, defs: dict[int, object], empty: dict[int, float]) -> bool:
    """Whether condition `c` is false in every element when the loop ran no
    iteration: broadcasts / reshapes of `m > k` or `k < m`, `m` equal to the
    constant `k` then (`empty`)."""
    op = defs.get(c.id)
    while isinstance(op, ir.Broadcast | ir.Reshape):
        op = defs.get(op.x.id)
    if not isinstance(op, ir.Elementwise) or op.op not in (ir.ElemOp.GT, ir.ElemOp.LT):
        return False
    m, k = op.operands if op.op is ir.ElemOp.GT else op.operands[::-1]
    if m.id not in empty:
        return False
    kop = defs.get(k.id)
    while isinstance(kop, ir.Broadcast | ir.Reshape):
        kop = defs.get(kop.x.id)
    kv = _const(kop)
    return kv is not None and kv == empty[m.id]


__all__ = ["DROP_DEFAULT", "drop_unread_zeros", "enabled"]
