"""Q computed from its loaded tile before the attention loop.

A user who scales Q once, before the loop, rather than every block's scores
(`let q = (q.load(..) as f32 * (scale * log2e)) as f16`), or applies a
RoPE-like element-wise op of loaded tiles to it (`q * cos + q_rot * sin`),
gives the first `mma` a computed tile, not a loaded one. The pipeline copies
Q's loaded tile by TMA as before; each consumer thread then, once Q is in
and before its first S = Q K^T, reads its elements of the tile from shared
memory in the accumulator layout (`g.SmemTileRead`), runs the ops as written
(`AccTile`: other tiles loaded by each thread, scalars, constants, `arange`
positions), and writes the result back in place (`g.SmemTileWrite`: a fence
and its warpgroup's named barrier). Once a tile, off the key loop; the values
are the interpreter's (the same ops on the same elements, rounded where the
program casts). Before, such a loop took the generic path: 0.02x SDPA on the
H100 (`benchmarks/cliffs.py`'s `attn_qscale`).

`find` returns the transform (`QX`) and the loaded tile's chain, or why not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tilelang.ir import nodes as ir

from .. import nodes as g

_TILE = (ir.Const, ir.Elementwise, ir.Cast, ir.Broadcast, ir.Reshape, ir.Arange, ir.Reduce, ir.Load)


@dataclass(frozen=True, slots=True)
class QX:
    """`ops` (in program order) compute the first product's left operand from `x`, Q's loaded tile as
    [BM, D] (which `g.SmemTileRead` defines in the consumers), scalars, tiles built before (`moved`) and
    tiles they load."""

    x: ir.Value
    ops: tuple[object, ...]


def _deps(v: ir.Value, defs: dict[int, object], before: dict[int, int]) -> dict[int, object] | str:
    """The tile-valued ops before the loop that `v` depends on (by id), or why not."""
    out: dict[int, object] = {}
    todo = [v]
    while todo:
        cur = todo.pop()
        if not cur.shape:
            continue  # a scalar: the consumers compute the kernel's scalars before each tile
        op = defs.get(cur.id)
        if op is None or id(op) not in before:
            return "a tile computed inside a branch or a loop"
        if id(op) in out:
            continue
        out[id(op)] = op
        todo += [x for x in g.operands(op) if x.shape]
    return out


def find(s_a: ir.Value, defs: dict[int, object], before: list[object], users: dict[int, list[object]],
         BM: int, D: int, written: set[str], chain: Callable[[ir.Value], tuple[ir.Load, list[object], bool] | None],
         tma_ok: Callable[[ir.Load, list[object]], bool], placeable: Callable[[ir.Value], bool],
         reduce_ok: Callable[[object], bool]) -> tuple[QX, tuple[ir.Load, list[object], bool]] | tuple[str, object]:
    """Q's transform from `s_a` (the first product's left operand) back to one tile loaded before the loop
    that TMA can copy (`tma_ok`), as [BM, D] after reshapes (`chain`, `attention_match._chain`), of the
    operand's element type; `users`: each value's readers in the kernel. Else (why, the op to point at)."""
    idx = {id(op): n for n, op in enumerate(before)}
    got = _deps(s_a, defs, idx)
    if isinstance(got, str):
        return got, defs.get(s_a.id)
    slice_ = dict(got)
    # ops whose values something else reads too stay where they are (computed before Q's wait, `moved`)
    changed = True
    while changed:
        changed = False
        for key, op in list(slice_.items()):
            if any(not all(id(u) in slice_ for u in users.get(r.id, ())) for r in g.results(op) if r is not s_a):
                del slice_[key]
                changed = True
    top = defs.get(s_a.id)
    if top is None or id(top) not in slice_ or len(users.get(s_a.id, ())) != 1:
        return "a tile the loop or the epilogue reads too", top
    base = None
    for op in sorted(slice_.values(), key=lambda o: idx[id(o)]):
        for r in g.results(op):
            if r.shape != (BM, D) or r.dtype is not s_a.dtype:
                continue
            c = chain(r)
            if c is None or c[2] or not all(id(o) in slice_ for o in c[1]) or not tma_ok(c[0], c[1]):
                continue
            inner = [x for o in c[1] for x in g.results(o) if x is not r]
            if any(len(users.get(x.id, ())) != 1 for x in inner):
                continue
            base = (r, c)
            break
        if base is not None:
            break
    if base is None:
        return (f"no tile of it is a {s_a.dtype.value} [{BM}, {D}] tile loaded as it is (TMA copies Q once, "
                "and the consumers compute from it)"), top
    x, c = base
    skip = {id(o) for o in c[1]}
    ops = [op for op in sorted(slice_.values(), key=lambda o: idx[id(o)]) if id(op) not in skip]
    for op in ops:
        if not isinstance(op, _TILE) or not all(placeable(r) for r in g.results(op)) or not reduce_ok(op):
            return "an op the consumers cannot run in registers", op
        if isinstance(op, ir.Load) and (op.tensor in written or op.mask is not None or op.padding is not None):
            return "a masked load, or a load of a tensor the kernel writes", op
        if isinstance(op, ir.Broadcast | ir.Reshape) and op.x.shape and not placeable(op.x):
            return "an op the consumers cannot run in registers", op
    return QX(x, tuple(ops)), c


def consumer_ops(qx: QX | None, s_a: ir.Value, qbuf: ir.Value, stage: ir.Value, span: object) -> list[object]:
    """What the consumers run once Q is in, before the first S: Q's tile read, the ops, the result written
    back (`[]` where Q is used as loaded)."""
    if qx is None:
        return []
    return [g.SmemTileRead(qx.x, qbuf, stage, span), *qx.ops, g.SmemTileWrite(qbuf, stage, s_a, span)]  # type: ignore[arg-type]


__all__ = ["QX", "consumer_ops", "find"]
