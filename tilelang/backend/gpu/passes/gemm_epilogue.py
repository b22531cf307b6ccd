"""The Hopper GEMM pipeline's epilogue (`pipeline._plan`): which ops after the K loop it runs on the
accumulator's registers, and those ops with every tile in the accumulator's layout (`WgmmaAcc`).

An epilogue is scalar ops, element-wise ops and casts on [M, N] tiles, and unmasked stores of them to 2-D
tensors. Its [M, N] tiles derive from the loop's result, from constants, or from a small tile broadcast to
[M, N]: an expression whose leaves are unmasked loads of a tensor not yet stored (a bias per column, a scale per
row, a residual tile, the output's own tile as in C = alpha A B + beta C), `arange`s (a column mask, a scale from
an index), constant tiles and broadcast scalars, and whose other ops are element-wise ops, casts and reshapes that
add or drop size-1 dims. Element-wise ops commute with a broadcast, so the expression is computed again on
[M, N] where it is broadcast (`_Pending.make`): each load one `g.AccLoad` (each thread the elements of its own
registers), each `arange` one `g.AccIndex` (each register's row or column), so nothing moves between threads.
A thread holds a column's value in several registers; those copies are the same SSA value (`acc_load` and
`AccIndex` emit one value a distinct row / column), so LLVM's CSE computes the expression once a distinct
column. Before round 18 (hgemm4) only a load, its reshapes and casts could be broadcast: `(bias * s)` before
its broadcast, `bias as f32` then an op, or an `arange` sent the whole GEMM to sm_80's ring.

An `if` on a scalar (a run-time flag: `if relu != 0 { c.store(..) } else { c.store(..) }`, `let o = if .. { .. }
else { .. }`) is computed on both sides and picked by `where` (`_flatten`), where each side stores at most once,
last, to the same tensor at the same offsets (else the pipeline refuses it, `if` named in the note).

`TILEC_GEMM_EPILOGUE_OPS` ("1" by default; "0": a small tile broadcast only as a 2-D load, its reshapes and casts,
no `if`, as before, a measurement switch: `benchmarks/hgemm4_device.sh`).

A tensor is loaded only before it is stored (the stores, `store_wgmma`, start with a barrier of every consumer,
after which other threads write the elements a thread read): a load whose broadcast comes after a store of its
tensor is refused, as a load after the store is.
"""

from __future__ import annotations

import dataclasses

from tilelang.ir import nodes as ir

from .. import nodes as g
from . import switches
from .context import Fresh

_SCALAR_OPS = (ir.Const, ir.Elementwise, ir.Cast, ir.TensorDim, ir.BlockId, ir.NumBlocks)


def is_scalar_op(op: object) -> bool:
    return isinstance(op, _SCALAR_OPS) and all(not v.shape for v in g.results(op))


def enabled() -> bool:
    """`TILEC_GEMM_EPILOGUE_OPS`: "1" (unset) or "0"."""
    return switches.mode("TILEC_GEMM_EPILOGUE_OPS", "1", ("0", "1")) == "1"


def _live(shape: tuple[int, ...]) -> list[int]:
    return [d for d in shape if d > 1]


class _Pending:
    """The small tiles of the epilogue not yet in the accumulator's layout, and the scalars read from them
    (`t.load().item()`): each value's defining op."""

    def __init__(self, fresh: Fresh, stored: set[str]) -> None:
        self.defs: dict[int, object] = {}
        self.fresh = fresh
        self.stored = stored

    def __contains__(self, v: ir.Value) -> bool:
        return v.id in self.defs

    def add(self, op: object) -> None:
        self.defs[g.results(op)[0].id] = op

    def make(self, v: ir.Value, pre: tuple[int, ...], result: ir.Value) -> list[object] | None:
        """The ops computing pending `v` (of shape `pre`, at most 2-D) broadcast to `result` ([M, N]), the last
        defining `result`; None where a leaf cannot be read in the accumulator's layout."""
        M, N = result.shape
        pre = (1,) * (2 - len(pre)) + tuple(pre)
        if len(pre) != 2 or pre[0] not in (1, M) or pre[1] not in (1, N):
            return None
        out: list[object] = []
        memo: dict[int, ir.Value] = {}

        def build(x: ir.Value, want: ir.Value | None) -> ir.Value | None:
            if x.id in memo and want is None:
                return memo[x.id]
            op = self.defs[x.id]
            if isinstance(op, ir.Reshape | ir.Reduce) or isinstance(op, ir.Broadcast) and op.x in self:
                got = build(op.x, want)  # (the same values: a reduction over a dim of one element)
                if got is not None:
                    memo[x.id] = got
                return got
            new = want or self.fresh.value(x.dtype, (M, N), x.hint)
            match op:
                case ir.Load():  # (one element, `.item()`'s, under a broadcast of a scalar: the same everywhere)
                    acc = acc_load(op, pre if _live(op.result.shape) else (1, 1), new)
                    if acc is None or op.tensor in self.stored:
                        return None
                    out.append(acc)
                case ir.Arange():
                    live = [d for d in (0, 1) if pre[d] > 1]
                    if op.result.shape == (1,):
                        out.append(ir.Const(new, 0, op.span))
                    elif len(live) != 1:
                        return None
                    else:
                        out.append(g.AccIndex(new, live[0], 0, op.span))
                case ir.Const():
                    out.append(ir.Const(new, op.value, op.span))
                case ir.Broadcast():  # (of a scalar the epilogue did not read from a tile)
                    out.append(ir.Broadcast(new, op.x, op.span))
                case ir.Cast() | ir.Elementwise():
                    args = []
                    for a in g.operands(op):
                        if a in self:
                            got = build(a, None)
                        else:  # a scalar operand of a scalar op read from a tile: broadcast on [M, N]
                            got = self.fresh.value(a.dtype, (M, N), a.hint)
                            out.append(ir.Broadcast(got, a, op.span))
                        if got is None:
                            return None
                        args.append(got)
                    out.append(ir.Cast(new, args[0], op.span, op.bits) if isinstance(op, ir.Cast)
                               else ir.Elementwise(new, op.op, tuple(args), op.span))
                case _:
                    return None
            memo[x.id] = new
            return new

        return out if build(v, result) is not None else None


def _pending_op(op: object, r: ir.Value, pending: _Pending, shape: tuple[int, ...]) -> bool:
    """Whether `op`, which reads pending values, computes a pending value `r` (not yet [M, N])."""
    if r.shape == shape and not isinstance(op, ir.Reshape):
        return False
    if not enabled():  # (as before round 18: a load's reshapes and casts)
        return isinstance(op, ir.Reshape) and _live(op.x.shape) == _live(r.shape) or isinstance(op, ir.Cast)
    if isinstance(op, ir.Reshape):
        return _live(op.x.shape) == _live(r.shape)
    if isinstance(op, ir.Broadcast):  # a scalar read from a tile, broadcast to a small tile
        return not op.x.shape
    if isinstance(op, ir.Reduce):  # (`.item()`: the max of one element is the element, whatever its sign)
        return op.op in (ir.ReduceOp.MAX, ir.ReduceOp.MIN) and op.x.shape[op.axis] == 1
    if isinstance(op, ir.Elementwise | ir.Cast):
        return all(v in pending or not v.shape for v in g.operands(op)) and \
            all(v.shape == r.shape for v in g.operands(op) if v.shape)
    return False


def _flatten(ops: list[object], fresh: Fresh) -> list[object] | None:
    """`ops` with each `if` on a scalar computed on both sides and picked (`where`): its branches' ops in
    order, each result `where(c, then's, else's)`, and the two branches' stores (one each, the last op of its
    branch, of one tensor at the same offsets) one store of the picked value, where the `if` was. None where
    an `if` is not of that form (a store on one side only, a tile condition). The branches' ops are element-wise
    work, loads of tensors not yet stored and scalar ops: computing the other side changes nothing stored (an
    integer division by zero there gives a value nobody picks)."""
    out: list[object] = []
    for op in ops:
        if not isinstance(op, ir.If):
            out.append(op)
            continue
        sides = [_flatten(list(r.ops), fresh) for r in (op.then, op.else_)]
        if op.cond.shape or sides[0] is None or sides[1] is None:
            return None
        (*tb, ty), (*eb, ey) = sides
        ts, es = ([o for o in b if isinstance(o, ir.Store)] for b in (tb, eb))
        if not isinstance(ty, ir.Yield) or not isinstance(ey, ir.Yield) or len(ts) != len(es) or len(ts) > 1:
            return None
        if ts:
            st, se = ts[0], es[0]
            if tb[-1] is not st or eb[-1] is not se or st.tensor != se.tensor or st.mask or se.mask or \
                    [v.id for v in st.offsets] != [v.id for v in se.offsets] or st.value.type != se.value.type:
                return None
            tb, eb = tb[:-1], eb[:-1]
        out += tb + eb

        def pick(x: ir.Value, y: ir.Value, r: ir.Value) -> None:
            c = op.cond
            if x.shape:
                c = fresh.value(op.cond.dtype, x.shape, "cond")
                out.append(ir.Broadcast(c, op.cond, op.span))
            out.append(ir.Elementwise(r, ir.ElemOp.WHERE, (c, x, y), op.span))

        for r, x, y in zip(op.results, ty.values, ey.values, strict=True):
            pick(x, y, r)
        if ts:
            v = fresh.value(st.value.dtype, st.value.shape, st.value.hint)
            pick(st.value, se.value, v)
            out.append(dataclasses.replace(st, value=v))
    return out


def epilogue(loop: ir.For, after: list[object], k: g.GpuKernel, fresh: Fresh,
             why: list[object] | None = None) -> list[object] | None:
    """The ops after the loop if they only finish the accumulator (see the module), the small tiles' ops
    replaced by their [M, N] forms (new values from `fresh`), or None (`why` gets the op refused, if any)."""
    shape = loop.results[0].shape
    tile_ok = {loop.results[0].id}  # [M, N] values in the accumulator's layout
    stores = 0
    out: list[object] = []
    stored: set[str] = set()  # tensors stored so far: a load of one after its store would read another thread's
    pending = _Pending(fresh, stored)
    on = enabled()

    def finish(v: ir.Value, pre: tuple[int, ...], result: ir.Value) -> bool:
        got = pending.make(v, pre, result)
        if got is None:
            return False
        out.extend(got)
        tile_ok.add(result.id)
        pending.defs.pop(result.id, None)  # (an [M, N] value made here is read as one in the layout)
        return True

    def no(op: object) -> None:
        if why is not None:
            why.append(op)

    flat = _flatten(after, fresh) if enabled() else after
    if flat is None:
        return no(next(op for op in after if isinstance(op, ir.If)))
    after = flat

    for op in after:
        if isinstance(op, ir.Yield):
            out.append(op)
            continue
        res = g.results(op)
        r = res[0] if len(res) == 1 else None
        if any(v in pending for v in g.operands(op)):  # on its way to [M, N], or a scalar read from a tile
            if r is None:
                return no(op)
            if isinstance(op, ir.Broadcast) and r.shape == shape:
                if not finish(op.x, op.x.shape, r) or not on and len(op.x.shape) != 2:
                    return no(op)
                continue
            if not _pending_op(op, r, pending, shape):
                return no(op)
            pending.add(op)
            if r.shape == shape and not finish(r, shape, r):  # (a reshape to [M, N])
                return no(op)
            continue
        if is_scalar_op(op):
            out.append(op)
            continue
        if isinstance(op, ir.Store):
            if op.mask is not None or op.value.id not in tile_ok or k.tensor(op.tensor).rank != 2:
                return no(op)
            stores += 1
            stored.add(op.tensor)
            out.append(op)
            continue
        if r is None or not r.shape:
            return no(op)
        tiles = [v for v in g.operands(op) if v.shape]
        scalar = isinstance(op, ir.Const) or isinstance(op, ir.Broadcast) and not op.x.shape
        if scalar and r.shape == shape or \
                isinstance(op, ir.Elementwise | ir.Cast) and r.shape == shape and all(v.id in tile_ok for v in tiles):
            tile_ok.add(r.id)
            out.append(op)
            continue
        if not ((scalar or isinstance(op, ir.Arange)) and on or isinstance(op, ir.Load) and op.mask is None
                and op.padding is None and op.tensor not in stored):
            return no(op)
        pending.add(op)  # a leaf
        if r.shape == shape and not finish(r, shape, r):  # an [M, N] load (a residual): in the layout here
            return no(op)
    return out if stores else no(None)


def acc_load(load: ir.Load, pre: tuple[int, ...], result: ir.Value) -> g.AccLoad | None:
    """`load`'s tile, reshaped to `pre` (size-1 dims added or dropped), broadcast to `result`'s [M, N]."""
    M, N = result.shape
    if len(pre) != 2 or pre[0] not in (1, M) or pre[1] not in (1, N):
        return None
    live = [d for d, x in enumerate(load.result.shape) if x > 1]
    want = [x for x in pre if x > 1]
    if [load.result.shape[d] for d in live] != want:
        return None
    it = iter(live)
    dims = tuple(next(it) if x > 1 else None for x in pre)
    return g.AccLoad(result, load, dims, load.span)  # type: ignore[arg-type]


__all__ = ["acc_load", "epilogue", "is_scalar_op"]
