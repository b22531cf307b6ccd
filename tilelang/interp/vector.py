# mypy: disable-error-code="no-any-return"
# (NumPy's stubs type most ufunc results as Any.)
"""The vectorised-over-blocks interpreter: runs a chunk of G blocks at once.

Every value carries a leading block axis: a tile of shape S is an array of
shape (G,) + S, a scalar an array of shape (G,). Element-wise ops, casts,
reductions, `mma` and the shape ops are the same NumPy calls as in
`machine.py` with the axes shifted by one, so the numerics are identical.
Loads and stores become gathers and scatters with per-block offsets.

Control flow may diverge between blocks. Each region runs under an `active`
mask of the blocks executing it: an `if` whose condition differs between
blocks runs both branches under complementary masks and selects the results;
`for` and `while` loops iterate until no active block wants another iteration,
keeping the carried values of finished blocks. Side effects (stores, atomics)
are masked by `active`.

Equivalence with the block-by-block mode (`machine.py`): identical for every
kernel whose blocks do not read what other blocks write (every safe kernel:
a block reads `&` tensors, which nobody writes, and its own tile). Blocks
that race through `unsafe` atomics see the same final sums (integer atomics
commute; float atomics round in a different order, which the IR leaves
unspecified). Device `print` lines are buffered per block and written in
block order, as the sequential mode prints them. For a kernel with a device
`assert`, each chunk starts from a snapshot of the tensors the kernel writes;
a chunk in which an assert fails is rolled back and replayed block by block,
so the error (first failing block in grid order), the printed lines and the
memory left behind are exactly the sequential mode's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar, assert_never

import numpy as np

from tilelang.interp import numeric as num
from tilelang.interp.printing import fmt_scalar, fmt_tile
from tilelang.ir import nodes as ir

Env = dict[int, np.ndarray]

#: Upper bound on the elements of one batched value (G * tile elements).
CHUNK_ELEMENTS = 1 << 22


#: Kernels with a device `assert` snapshot the tensors they write before each
#: chunk (to replay a failing chunk block by block); above this many bytes the
#: host falls back to the block mode instead.
SNAPSHOT_BYTES = 1 << 28


class AssertFailed(Exception):
    """Some block of the chunk failed a device `assert` (internal signal)."""


class BodyFacts(NamedTuple):
    """What a launch asks of a kernel's body, from one walk of it."""

    asserts: bool  # a device `assert`
    written: frozenset[str]  # the tensors its stores and atomics write
    biggest: int  # the most elements of any value (`chunk_blocks`)
    cluster_gather: bool
    last_block: bool
    queue_axis: int | None  # the axis of its first tile-queue pull


_BODY_FACTS: dict[int, tuple[ir.Kernel, BodyFacts]] = {}
_BODY_FACTS_LIMIT = 128


def body_facts(kernel: ir.Kernel) -> BodyFacts:
    """`BodyFacts` of `kernel`, walked once a kernel object (the IR is frozen:
    a launch of a step's kernels walked each body six times, a sixth of an
    engine step on the interpreter)."""
    hit = _BODY_FACTS.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    asserts = cluster_gather = last_block = False
    written: set[str] = set()
    biggest, queue = 1, None
    for op in ir.walk(kernel.body):
        if isinstance(op, ir.Assert):
            asserts = True
        elif isinstance(op, (ir.Store, ir.AtomicRMW)):
            written.add(op.tensor)
        elif isinstance(op, ir.ClusterGather):
            cluster_gather = True
        elif isinstance(op, ir.LastBlock):
            last_block = True
        elif isinstance(op, ir.QueuePull) and queue is None:
            queue = op.axis
        for v in ir.op_results(op):
            biggest = max(biggest, v.type.numel)
        for r in ir.op_regions(op):
            for a in r.args:
                biggest = max(biggest, a.type.numel)
    facts = BodyFacts(asserts, frozenset(written), biggest, cluster_gather, last_block, queue)
    if len(_BODY_FACTS) >= _BODY_FACTS_LIMIT:
        _BODY_FACTS.pop(next(iter(_BODY_FACTS)))  # the oldest
    _BODY_FACTS[id(kernel)] = (kernel, facts)  # (the kernel held: its id is not reused meanwhile)
    return facts


def has_assert(kernel: ir.Kernel) -> bool:
    return body_facts(kernel).asserts


def written_tensors(kernel: ir.Kernel) -> set[str]:
    return set(body_facts(kernel).written)


def chunk_blocks(kernel: ir.Kernel, total: int) -> int:
    """How many blocks to run at once so no batched value exceeds CHUNK_ELEMENTS."""
    return max(1, min(total, CHUNK_ELEMENTS // body_facts(kernel).biggest))


class _Ctx:
    __slots__ = ("active", "g", "grid", "ids", "lines", "tensors")

    def __init__(self, ids: np.ndarray, grid: tuple[int, ...],
                 tensors: dict[str, np.ndarray]) -> None:
        self.lines: list[list[str]] = [[] for _ in range(ids.shape[1])]  # per block
        self.ids = ids  # (rank, G) block coordinates
        self.g = ids.shape[1]
        self.grid = grid
        self.tensors = tensors
        self.active: np.ndarray | None = None  # (G,) bool; None: every block


def run_vectorised(kernel: ir.Kernel, grid: tuple[int, ...], tensors: dict[str, np.ndarray],
                   scalars: Env, out: Callable[[str], None] | None = None,
                   replay: Callable[[np.ndarray], None] | None = None) -> None:
    """Run every block of `grid` in chunks. For a kernel with a device `assert`,
    `replay(flat_block_ids)` must run those blocks in the sequential mode (and
    raise the located error): a chunk in which an assert fails is rolled back
    to its snapshot and replayed, so output, error and memory are exactly the
    sequential mode's."""
    total = int(math.prod(grid))
    if total == 0:
        return
    g = chunk_blocks(kernel, total)
    checks = has_assert(kernel)
    written = written_tensors(kernel) if checks else set()
    for start in range(0, total, g):
        flat = np.arange(start, min(start + g, total))
        ids = np.array(np.unravel_index(flat, grid), dtype=np.int32).reshape(len(grid), -1)
        ctx = _Ctx(ids, grid, tensors)
        env: Env = {k: np.broadcast_to(v, (ctx.g,)) for k, v in scalars.items()}
        snapshot = {n: tensors[n].copy() for n in written} if checks else {}
        try:
            _region(kernel.body, env, ctx)
        except AssertFailed:
            for n, saved in snapshot.items():
                tensors[n][...] = saved
            assert replay is not None
            replay(flat)
            raise AssertionError("a failing chunk replayed without failing") from None
        if out is not None:
            for lines in ctx.lines:  # block order, as the sequential mode prints
                for line in lines:
                    out(line)


def _bshape(x: np.ndarray, rank: int) -> np.ndarray:
    """A (G,) array shaped to broadcast against (G,) + S of rank `rank`."""
    return x.reshape(x.shape + (1,) * rank)


def _uniform(x: np.ndarray) -> bool:
    return x.shape[0] == 0 or bool((x == x[0]).all())


_C = TypeVar("_C")


def run_region(region: ir.Region, env: Env, ctx: _C,
               run_op: Callable[[ir.Op, Env, _C], None]) -> tuple[np.ndarray, ...]:
    """Run the ops of `region` (its arguments already bound in `env`) with
    `run_op`; return what it yields. Both interpreters walk regions this way."""
    for op in region.ops:
        if isinstance(op, ir.Yield):
            return tuple(env[v.id] for v in op.values)
        run_op(op, env, ctx)
    return ()


def _region(region: ir.Region, env: Env, ctx: _Ctx) -> tuple[np.ndarray, ...]:
    return run_region(region, env, ctx, _op)


def _positions(offs: Sequence[np.ndarray], shape: tuple[int, ...], dims: tuple[int, ...]
               ) -> tuple[list[np.ndarray], np.ndarray]:
    """Per-element tensor indices (clipped into range) and the in-bounds mask,
    each of shape (G,) + shape."""
    rank = len(shape)
    idx: list[np.ndarray] = []
    inb: np.ndarray | None = None
    for d, (o, n, dim) in enumerate(zip(offs, shape, dims, strict=True)):
        along = np.arange(n, dtype=np.int64).reshape((1,) * (d + 1) + (n,) + (1,) * (rank - d - 1))
        pos = _bshape(o.astype(np.int64), rank) + along
        ok = (pos >= 0) & (pos < dim)
        inb = ok if inb is None else inb & ok
        idx.append(np.clip(pos, 0, max(dim - 1, 0)))
    assert inb is not None
    full = inb.shape[:1] + shape
    return [np.broadcast_to(i, full) for i in idx], np.broadcast_to(inb, full)


def _tiled(arr: np.ndarray, offs: Sequence[np.ndarray], shape: tuple[int, ...]
           ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]] | None:
    """The fast path of the common case: offsets that are multiples of the tile
    shape (a partition's tiles). Returns a blocked strided VIEW of `arr`
    (full tiles index x in-tile index), the (G,) mask of blocks whose tile is
    entirely inside, and their tile coordinates; None when offsets are not
    tile-aligned."""
    rank = len(shape)
    qs = []
    inside = np.ones(offs[0].shape[0] if offs else 0, bool)
    full = []
    for o, n, dim in zip(offs, shape, arr.shape, strict=True):
        if n == 0 or (o % n != 0).any():
            return None
        q = o // n
        f = dim // n
        inside &= (q >= 0) & (q < f)
        qs.append(q)
        full.append(f)
    if any(f == 0 for f in full):
        return None
    strides = tuple(n * s for n, s in zip(shape, arr.strides, strict=True)) + arr.strides
    view = np.lib.stride_tricks.as_strided(arr, (*full, *shape), strides, writeable=True)
    del rank
    return view, inside, tuple(q[inside] for q in qs)


def _gather(arr: np.ndarray, offs: list[np.ndarray], shape: tuple[int, ...],
            pad: np.ndarray) -> np.ndarray:
    g = pad.shape[0]
    rank = len(shape)
    tiled = _tiled(arr, offs, shape) if arr.size else None
    if tiled is not None and tiled[1].all():
        view, _, qs = tiled
        return view[qs]
    out = np.empty((g, *shape), arr.dtype)
    out[...] = _bshape(pad, rank)
    if arr.size == 0:
        return out
    rest = np.ones(g, bool)
    if tiled is not None:
        view, inside, qs = tiled
        out[inside] = view[qs]
        rest = ~inside
    sub = [o[rest] for o in offs]
    idx, inb = _positions(sub, shape, arr.shape)
    vals = arr[tuple(idx)]
    out[rest] = np.where(inb, vals, out[rest])
    return out


def _scatter(arr: np.ndarray, offs: list[np.ndarray], val: np.ndarray,
             mask: np.ndarray | None) -> None:
    if arr.size == 0:
        return
    shape = val.shape[1:]
    g = val.shape[0]
    rest = np.ones(g, bool)
    tiled = _tiled(arr, offs, shape)
    if tiled is not None:
        view, inside, qs = tiled
        if mask is not None:
            # only the blocks whose every element is stored take the whole-tile path; the others' old values
            # must not be written back: an `unsafe` store of a block masked off (a loop it has left, a branch
            # it did not take) may aim at the element another block stores in the same step
            every = mask.reshape(g, -1).all(axis=1)
            qs = tuple(q[every[inside]] for q in qs)
            inside = inside & every
        view[qs] = val[inside]
        rest = ~inside
        if mask is not None:
            rest &= mask.reshape(g, -1).any(axis=1)
        if not rest.any():
            return
    idx, inb = _positions([o[rest] for o in offs], shape, arr.shape)
    if mask is not None:
        inb = inb & mask[rest]
    arr[tuple(i[inb] for i in idx)] = val[rest][inb]


def _op(op: ir.Op, env: Env, ctx: _Ctx) -> None:
    g = ctx.g
    match op:
        case ir.Const(result=r, value=v):
            env[r.id] = np.broadcast_to(num.const_array(v, r.dtype, ()), (g, *r.shape))
        case ir.BlockId(result=r, axis=a):
            env[r.id] = ctx.ids[a] if a < ctx.ids.shape[0] else np.zeros(g, np.int32)
        case ir.NumBlocks(result=r, axis=a):
            env[r.id] = np.full(g, ctx.grid[a] if a < len(ctx.grid) else 1, np.int32)
        case ir.TensorDim(result=r, tensor=t, axis=a):
            env[r.id] = np.full(g, ctx.tensors[t].shape[a], np.int32)
        case ir.Arange(result=r):
            base = num.finish(np.arange(r.shape[0], dtype=np.float64), r.dtype) \
                if r.dtype.is_float else np.arange(r.shape[0]).astype(r.dtype.np_dtype)
            env[r.id] = np.broadcast_to(base, (g, *r.shape))
        case ir.Load(result=r, tensor=t, offsets=offs, mask=m, padding=p):
            arr = ctx.tensors[t]
            pad = env[p.id] if p is not None else np.zeros(g, arr.dtype)
            tile = _gather(arr, [env[o.id] for o in offs], r.shape, pad)
            if m is not None:
                tile = np.where(env[m.id], tile, _bshape(pad, r.type.rank))
            env[r.id] = tile.astype(arr.dtype, copy=False)
        case ir.Store(tensor=t, offsets=offs, value=v, mask=m):
            arr = ctx.tensors[t]
            mask = env[m.id] if m is not None else None
            if ctx.active is not None:
                act = np.broadcast_to(_bshape(ctx.active, v.type.rank), (g, *v.shape))
                mask = act if mask is None else mask & act
            _scatter(arr, [env[o.id] for o in offs], np.broadcast_to(env[v.id], (g, *v.shape)),
                     mask)
        case ir.AtomicRMW(op=aop, tensor=t, indices=idx, value=v, mask=m):
            _atomic(aop, ctx, ctx.tensors[t], [env[i.id] for i in idx], env[v.id],
                    env[m.id] if m is not None else None, v)
        case ir.Elementwise(result=r, op=e, operands=xs):
            env[r.id] = num.elementwise(e, [env[x.id] for x in xs], op.operand_dtype)
        case ir.Cast(result=r, x=x, bits=bits):
            env[r.id] = (num.bitcast if bits else num.cast)(env[x.id], x.dtype, r.dtype)
        case ir.Reduce(result=r, op=rop, x=x, axis=a):
            env[r.id] = num.reduce(rop, env[x.id], x.dtype, a + 1)
        case ir.Scan(result=r, op=sop, x=x, axis=a):
            env[r.id] = num.scan(sop, env[x.id], x.dtype, a + 1)
        case ir.Broadcast(result=r, x=x):
            src = env[x.id]
            lift = (1,) * (r.type.rank - x.type.rank)
            env[r.id] = np.broadcast_to(src.reshape((g, *lift, *x.shape)), (g, *r.shape))
        case ir.Reshape(result=r, x=x):
            env[r.id] = np.reshape(env[x.id], (g, *r.shape))
        case ir.Permute(result=r, x=x, perm=perm):
            env[r.id] = np.transpose(env[x.id], (0, *(p + 1 for p in perm)))
        case ir.Mma(result=r, a=a, b=b, acc=c):
            env[r.id] = num.mma(env[a.id], env[b.id], env[c.id], a.dtype, c.dtype)
        case ir.For():
            _for(op, env, ctx)
        case ir.If():
            _if(op, env, ctx)
        case ir.While():
            _while(op, env, ctx)
        case ir.Yield():
            raise AssertionError("a yield is handled by its region")
        case ir.Prefetch():
            pass  # a cache hint: nothing to do on the CPU
        case ir.Print(parts=parts):
            live = range(g) if ctx.active is None else np.flatnonzero(ctx.active).tolist()
            for blk in live:
                text = []
                for part in parts:
                    if isinstance(part, str):
                        text.append(part)
                    elif part.type.is_scalar:
                        text.append(fmt_scalar(np.asarray(env[part.id][blk]), part.dtype))
                    else:
                        text.append(fmt_tile(env[part.id][blk], part.dtype))
                ctx.lines[blk].append("".join(text))
        case ir.Assert(cond=c):
            cond = env[c.id].astype(bool)
            bad = ~cond.reshape(g, -1).all(axis=1)
            if ctx.active is not None:
                bad &= ctx.active
            if bad.any():
                raise AssertFailed
        case _:
            assert_never(op)


def _select(cond: np.ndarray, new: np.ndarray, old: np.ndarray) -> np.ndarray:
    c = _bshape(cond, new.ndim - 1)
    return np.where(c, new, old).astype(new.dtype, copy=False)


def _for(op: ir.For, env: Env, ctx: _Ctx) -> None:
    body = op.body
    lo, hi, st = env[op.lower.id], env[op.upper.id], env[op.step.id]
    carried = tuple(env[v.id] for v in op.inits)
    if ctx.active is None and _uniform(lo) and _uniform(hi) and _uniform(st):
        # every block iterates the same range: no masks needed
        i, end, step = int(lo[0]), int(hi[0]), int(st[0])
        iv_dt = op.lower.dtype.np_dtype
        while step > 0 and i < end:
            env[body.args[0].id] = np.full(ctx.g, i, dtype=iv_dt)
            for a, v in zip(body.args[1:], carried, strict=True):
                env[a.id] = v
            carried = _region(body, env, ctx)
            i += step
    else:
        outer = ctx.active
        ivec = lo.copy()
        while True:
            act = (ivec < hi) & (st > 0)
            if outer is not None:
                act &= outer
            if not act.any():
                break
            env[body.args[0].id] = ivec
            for a, v in zip(body.args[1:], carried, strict=True):
                env[a.id] = v
            ctx.active = act
            new = _region(body, env, ctx)
            ctx.active = outer
            carried = tuple(_select(act, n, o) for n, o in zip(new, carried, strict=True))
            with np.errstate(all="ignore"):
                ivec = np.where(act, ivec + st, ivec).astype(ivec.dtype)
        ctx.active = outer
    for r, v in zip(op.results, carried, strict=True):
        env[r.id] = v


def _if(op: ir.If, env: Env, ctx: _Ctx) -> None:
    cond = env[op.cond.id].astype(bool)
    outer = ctx.active
    live = np.ones(ctx.g, bool) if outer is None else outer
    take_then = cond & live
    take_else = ~cond & live
    if not take_else.any():
        vals = _region(op.then, env, ctx)
    elif not take_then.any():
        vals = _region(op.else_, env, ctx)
    else:
        ctx.active = take_then
        tv = _region(op.then, env, ctx)
        ctx.active = take_else
        ev = _region(op.else_, env, ctx)
        ctx.active = outer
        vals = tuple(_select(cond, t, e) for t, e in zip(tv, ev, strict=True))
    for r, v in zip(op.results, vals, strict=True):
        env[r.id] = v


def _while(op: ir.While, env: Env, ctx: _Ctx) -> None:
    outer = ctx.active
    carried = tuple(env[v.id] for v in op.inits)
    live = np.ones(ctx.g, bool) if outer is None else outer.copy()
    while True:
        for a, v in zip(op.cond.args, carried, strict=True):
            env[a.id] = v
        ctx.active = live
        (go,) = _region(op.cond, env, ctx)
        live = live & go.astype(bool)
        if not live.any():
            break
        for a, v in zip(op.body.args, carried, strict=True):
            env[a.id] = v
        ctx.active = live
        new = _region(op.body, env, ctx)
        carried = tuple(_select(live, n, o) for n, o in zip(new, carried, strict=True))
    ctx.active = outer
    for r, v in zip(op.results, carried, strict=True):
        env[r.id] = v


def _atomic(aop: ir.AtomicOp, ctx: _Ctx, arr: np.ndarray, idx: list[np.ndarray],
            val: np.ndarray, mask: np.ndarray | None, v: ir.Value) -> None:
    shape = (ctx.g, *v.shape)
    rank = v.type.rank
    flat_idx = []
    for i in idx:
        i = i if i.ndim == rank + 1 else _bshape(i, rank)
        flat_idx.append(np.broadcast_to(i, shape).reshape(-1).astype(np.int64))
    flat_val = np.broadcast_to(val, shape).reshape(-1)
    keep = None if mask is None else np.broadcast_to(mask, shape).reshape(-1).astype(bool)
    if ctx.active is not None:
        active = np.broadcast_to(_bshape(ctx.active, rank), shape).reshape(-1)
        keep = active if keep is None else keep & active
    num.atomic_in_bounds(aop, arr, flat_idx, flat_val, keep, v.dtype)
