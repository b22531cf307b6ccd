"""The reference interpreter: runs one IR `Kernel` over a grid with NumPy.

One Python step per IR op per block (a whole tile at a time), never a Python
loop per element. Blocks run one after another in row-major grid order
(axis 0 slowest), so a program whose blocks race (only possible with `unsafe`
atomics/`store_unchecked`) still has one deterministic result here.

Values live in a flat environment keyed by `Value.id` (ids are unique in a
kernel, so nested regions need no scope chain). Scalars are 0-d arrays.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, assert_never

import numpy as np

from tilelang.diagnostics.codes.runtime import DEVICE_ASSERT
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.dtypes import DType
from tilelang.interp import numeric as num
from tilelang.interp import vector
from tilelang.interp.printing import fmt_scalar, fmt_tile
from tilelang.interp.vector import has_assert, run_vectorised, written_tensors
from tilelang.ir import arg_dims
from tilelang.ir import nodes as ir

Env = dict[int, np.ndarray]


class _BlockCtx:
    __slots__ = ("arrivals", "bid", "failed", "grid", "keyed", "obs", "out", "queues", "tensors")

    def __init__(
        self,
        bid: tuple[int, ...],
        grid: tuple[int, ...],
        tensors: dict[str, np.ndarray],
        out: Callable[[str], None],
        obs: Any = None,
    ) -> None:
        self.bid = bid
        self.grid = grid
        self.tensors = tensors
        self.out = out
        self.obs = obs  # the sanitizer's recorder (interp/sanitize.py), or None
        self.arrivals: dict[int, int] = {}  # `LastBlock`: blocks arrived, by group (shared by the launch)
        self.queues: dict[tuple[int, int], int] = {}  # `QueuePull`: tickets given, by (axis, group) (shared)
        # a queue's or walk's printed lines, (tile's place, arrival, line), put in order at the launch's end
        self.keyed: list[tuple[int, int, str]] | None = None
        # failed asserts of a walk's, queue's or `last_block` region, (place, error): the launch runs
        # on, as a GPU's does, and stops with the first place's at its end (`run_kernel`)
        self.failed: list[tuple[int, Diagnostic]] | None = None


def _default_out(text: str) -> None:
    sys.stdout.write(text + "\n")


def run_kernel(
    kernel: ir.Kernel,
    grid: Sequence[int],
    args: Sequence[Any] | Mapping[str, Any],
    *,
    out: Callable[[str], None] | None = None,
    mode: str = "auto",
    observer: Any = None,
    order: str = "row-major",
    queue_blocks: int = 2,
) -> None:
    """Run `kernel` once per block of `grid`; see `tilelang.interp` for the contract.

    `mode`: "block" runs the blocks one by one; "vector" runs chunks of blocks
    at once (`vector.py`, same results, output and errors); "auto" picks
    "vector" unless the grid has a single block or the kernel asserts and
    writes more than `vector.SNAPSHOT_BYTES` (its chunks are snapshotted).
    `observer` (the sanitizer's `Recorder`) sees every load, store and atomic
    of every block, and forces the block mode. A kernel with `LastBlock`
    (`if last_block(axis)`) runs in the block mode: a block runs to its end
    before the next starts, so the last of a group to arrive runs its region
    after the others have finished. `order` ("row-major", or "reverse" for
    tests: another block is then the last of each group) is the block mode's.
    A kernel with a tile queue (`for s in queue(axis)`, `QueuePull`) also
    runs in the block mode, on `queue_grid`: `grid` is its partitions'
    tiles, of which `queue_blocks` blocks a row take those along the axis
    (each its own first, `block_id`; then the first block of the row, running
    to its end before the next starts, pulls all the others). A kernel with
    a static walk (`for s in tiles(axis)`, `ir.Kernel.walk`) runs on the same
    grid: block b of the row's `queue_blocks` takes tiles b, b + 2, .. .
    """
    grid_t = tuple(int(g) for g in grid)
    if len(grid_t) < kernel.grid_rank:
        grid_t = grid_t + (1,) * (kernel.grid_rank - len(grid_t))
    grid_t = queue_grid(kernel, grid_t, queue_blocks)
    if len(grid_t) != kernel.grid_rank or any(g < 0 for g in grid_t):
        raise ValueError(
            f"grid {grid_t} does not fit kernel `{kernel.name}` "
            f"with {kernel.grid_rank} grid axes"
        )
    clustered = has_cluster_gather(kernel)
    if observer is not None or has_last_block(kernel) or queue_axis(kernel) is not None or clustered:
        mode = "block"
    if mode == "auto":
        mode = os.environ.get("TILE_INTERP_MODE", "auto") or "auto"
        if mode not in ("auto", "block", "vector"):  # the user's setting: E0604, not an internal error
            from tilelang.env_switch import SwitchError

            raise SwitchError("TILE_INTERP_MODE", mode, "auto, block or vector")
    if mode not in ("auto", "block", "vector"):
        raise ValueError(f"unknown interpreter mode {mode!r}")
    tensors, scalars = _bind_args(kernel, args)
    emit = out or _default_out
    total = math.prod(grid_t)
    if mode == "auto":
        mode = "vector" if total > 1 and _snapshot_ok(kernel, tensors) else "block"

    arrivals: dict[int, int] = {}
    queues: dict[tuple[int, int], int] = {}
    # a queue's or walk's prints: in the order of the tiles, not of the blocks that took them; a cluster
    # kernel's in the grid's order, not the clusters' (the GPU's order: `backend/prints.py`; hrev15)
    keyed: list[tuple[int, int, str]] | None = (
        [] if queue_axis(kernel) is not None or has_last_block(kernel) or clustered else None)
    failed: list[tuple[int, Diagnostic]] = []

    def run_blocks(blocks: Iterable[tuple[int, ...]]) -> None:
        for bid in blocks:
            env: Env = dict(scalars)
            ctx = _BlockCtx(bid, grid_t, tensors, emit, observer)
            ctx.arrivals = arrivals
            ctx.queues = queues
            ctx.keyed = keyed
            ctx.failed = failed
            _run_region(kernel.body, env, ctx)

    def replay(flat: np.ndarray) -> None:
        coords = np.unravel_index(flat, grid_t)
        run_blocks(tuple(int(c[i]) for c in coords) for i in range(len(flat)))

    def run_cluster(bids: list[tuple[int, ...]]) -> None:
        """One cluster's blocks (in rank order) together: each runs the
        kernel's top-level ops up to the next exchange, then every block gets
        the stacked values of all (a copy), and so on to the end."""
        ctxs = []
        for bid in bids:
            ctx = _BlockCtx(bid, grid_t, tensors, emit, observer)
            ctx.arrivals, ctx.queues, ctx.keyed = arrivals, queues, keyed
            ctxs.append(ctx)
        envs: list[Env] = [dict(scalars) for _ in bids]
        for op in kernel.body.ops:
            if isinstance(op, ir.Yield):
                break
            if isinstance(op, ir.ClusterGather):
                parts = np.stack([env[op.x.id] for env in envs])
                for env in envs:
                    env[op.result.id] = parts.copy()
                continue
            for env, ctx in zip(envs, ctxs, strict=True):
                _run_op(op, env, ctx)

    with np.errstate(all="ignore"), _flush_keyed(keyed, emit):
        if clustered:
            clusters = cluster_members(grid_t, kernel.cluster)
            for bids in (reversed(clusters) if order == "reverse" else clusters):
                run_cluster(bids)
        elif mode == "vector":
            run_vectorised(kernel, grid_t, tensors, scalars, emit, replay)
        else:
            blocks = itertools.product(*(range(g) for g in grid_t))
            run_blocks(reversed(list(blocks)) if order == "reverse" else blocks)
        if failed:
            # the first tile (group) in the grid's order, whichever block took it and whatever the
            # order the blocks ran in: the one the GPU names (the smallest place wins there too)
            raise TileError(min(failed, key=lambda f: f[0])[1])


@contextlib.contextmanager
def _flush_keyed(keyed: list[tuple[int, int, str]] | None, emit: Callable[[str], None]) -> Iterator[None]:
    """Write a queue's or walk's printed lines at the launch's end (also when
    a device assert stops it), in the order of their tiles' places."""
    try:
        yield
    finally:
        for _, _, line in sorted(keyed or ()):
            emit(line)


def _print_place(ctx: _BlockCtx, op: ir.Print | ir.Assert, env: Env) -> int:
    """Where a line goes: its block's place in the grid, row-major as the
    blocks print; for a line with an `order` (tile `s` of `n` along
    `op.axis`: a queue's or walk's tile, or the block a group's combine
    region runs in on the interpreter), the place of block `s` (the other
    axes the block's own) in a grid of `n` along the axis."""
    coords, extents = list(ctx.bid), list(ctx.grid)
    if op.order:
        s, n = (int(np.asarray(env[v.id])) for v in op.order)
        coords[op.axis], extents[op.axis] = s, max(n, s + 1)
    key = 0
    for c, e in zip(coords, extents, strict=True):
        key = key * e + c
    return key


def has_cluster_gather(kernel: ir.Kernel) -> bool:
    return vector.body_facts(kernel).cluster_gather


def cluster_members(grid: tuple[int, ...], cluster: Sequence[int]) -> list[list[tuple[int, ...]]]:
    """The blocks of each cluster of `grid` (clusters in row-major order),
    each cluster's in rank order (axis 0 fastest, as CUDA's
    `%cluster_ctarank`). The launch checked that the grid is a whole number
    of clusters along every axis (E0512)."""
    rank = len(grid)
    cl = (*tuple(cluster), 1, 1, 1)[:rank]
    if any(g % c for g, c in zip(grid, cl, strict=True)):
        raise ValueError(f"grid {grid} is not a whole number of clusters {tuple(cl)}")
    starts = itertools.product(*(range(0, g, c) for g, c in zip(grid, cl, strict=True)))
    offsets = [tuple(reversed(o)) for o in itertools.product(*(range(c) for c in reversed(cl)))]
    return [[tuple(s + o for s, o in zip(start, off, strict=True)) for off in offsets] for start in starts]


def has_last_block(kernel: ir.Kernel) -> bool:
    return vector.body_facts(kernel).last_block


def queue_axis(kernel: ir.Kernel) -> int | None:
    """The grid axis of the kernel's tile queue (`for s in queue(axis)`) or
    static walk (`for s in tiles(axis)`, `ir.Kernel.walk`), if any."""
    if kernel.walk >= 0:
        return kernel.walk
    return vector.body_facts(kernel).queue_axis


def queue_grid(kernel: ir.Kernel, grid: tuple[int, ...], queue_blocks: int = 2) -> tuple[int, ...]:
    """The blocks that run a launch over `grid` (its partitions' tiles): the
    grid itself, or for a kernel with a tile queue or a static walk at most
    `queue_blocks` along its axis (at least one)."""
    axis = queue_axis(kernel)
    if axis is None or axis >= len(grid):
        return grid
    g = list(grid)
    # (a walk's next tile `s + W` stays in `i32`: `cuda_arrive.STEP_ROOM`)
    g[axis] = max(1, min(g[axis], queue_blocks, (1 << 31) - g[axis]))
    return tuple(g)


def _snapshot_ok(kernel: ir.Kernel, tensors: dict[str, np.ndarray]) -> bool:
    """Vector mode for an asserting kernel copies what it writes per chunk:
    only worth it while that is small."""
    if not has_assert(kernel):
        return True
    return sum(tensors[n].nbytes for n in written_tensors(kernel)) <= vector.SNAPSHOT_BYTES


def _bind_args(
    kernel: ir.Kernel, args: Sequence[Any] | Mapping[str, Any]
) -> tuple[dict[str, np.ndarray], Env]:
    if isinstance(args, Mapping):
        missing = [p.name for p in kernel.params if p.name not in args]
        if missing:
            raise ValueError(f"missing arguments for `{kernel.name}`: {', '.join(missing)}")
        values = [args[p.name] for p in kernel.params]
    else:
        values = list(args)
        if len(values) != len(kernel.params):
            raise ValueError(
                f"`{kernel.name}` takes {len(kernel.params)} arguments, got {len(values)}"
            )
    tensors: dict[str, np.ndarray] = {}
    scalars: Env = {}
    for p, v in zip(kernel.params, values, strict=False):
        match p:
            case ir.TensorParam():
                if not isinstance(v, np.ndarray):
                    raise ValueError(f"argument `{p.name}` must be a NumPy array")
                if v.dtype != p.dtype.np_dtype or v.ndim != p.rank:
                    raise ValueError(
                        f"argument `{p.name}` must be a rank-{p.rank} "
                        f"{p.dtype.np_dtype} array, got {v.ndim}-d {v.dtype}"
                    )
                if any(s >= 2**31 for s in v.shape):
                    raise ValueError(f"argument `{p.name}` has a dim >= 2**31")
                tensors[p.name] = v
            case ir.ScalarParam():
                scalars[p.value.id] = num.const_array(v, p.value.dtype, ())
            case _:
                assert_never(p)
    # a `&Tensor` dimension its type fixes: E0501 (`ir/arg_dims.py`; the GPU's code takes it as a constant)
    arg_dims.check(kernel, values)
    return tensors, scalars


def _run_region(region: ir.Region, env: Env, ctx: _BlockCtx) -> tuple[np.ndarray, ...]:
    return vector.run_region(region, env, ctx, _run_op)


def _windows(
    offsets: Sequence[int], shape: Sequence[int], dims: Sequence[int]
) -> tuple[tuple[slice, ...], tuple[slice, ...]] | None:
    """The (tensor, tile) slices of the in-bounds part of a tile at `offsets`,
    or None when no element is in bounds."""
    src, dst = [], []
    for off, n, dim in zip(offsets, shape, dims, strict=False):
        lo, hi = max(off, 0), min(off + n, dim)
        if lo >= hi:
            return None
        src.append(slice(lo, hi))
        dst.append(slice(lo - off, hi - off))
    return tuple(src), tuple(dst)


def _run_op(op: ir.Op, env: Env, ctx: _BlockCtx) -> None:
    match op:
        case ir.Const(result=r, value=v):
            env[r.id] = num.const_array(v, r.dtype, r.shape)
        case ir.BlockId(result=r, axis=a):
            env[r.id] = np.asarray(ctx.bid[a], dtype=np.int32)
        case ir.NumBlocks(result=r, axis=a):
            env[r.id] = np.asarray(ctx.grid[a], dtype=np.int32)
        case ir.LastBlock(result=r, group=g, size=n):
            key = int(env[g.id])
            got = ctx.arrivals.get(key, 0) + 1
            ctx.arrivals[key] = got
            env[r.id] = np.asarray(got == int(env[n.id]), dtype=np.bool_)
            if ctx.obs is not None and got == int(env[n.id]):
                ctx.obs.last_block(ctx.bid, op.axis)
        case ir.QueuePull(result=r, group=g, axis=a):
            key = (a, int(env[g.id]))
            got = ctx.queues.get(key, 0)
            ctx.queues[key] = got + 1
            env[r.id] = np.asarray(got, dtype=np.int32)
        case ir.QueueTake(result=r, ticket=t, workers=w):
            env[r.id] = np.asarray(int(env[t.id]) + int(env[w.id]), dtype=np.int32)
        case ir.TensorDim(result=r, tensor=t, axis=a):
            env[r.id] = np.asarray(ctx.tensors[t].shape[a], dtype=np.int32)
        case ir.Arange(result=r):
            env[r.id] = (
                num.finish(np.arange(r.shape[0], dtype=np.float64), r.dtype)
                if r.dtype.is_float
                else np.arange(r.shape[0]).astype(r.dtype.np_dtype)
            )
        case ir.Load(result=r, tensor=t, offsets=offs, mask=m, padding=p):
            arr = ctx.tensors[t]
            pad = env[p.id] if p is not None else np.zeros((), dtype=arr.dtype)
            tile = np.empty(r.shape, dtype=arr.dtype)
            tile[...] = pad
            at = [int(env[o.id]) for o in offs]
            win = _windows(at, r.shape, arr.shape)
            if ctx.obs is not None:
                ctx.obs.env = env  # (the sanitizer names a tested tile index it read: `_named`)
                ctx.obs.load(ctx.bid, op, arr, at, win, env[m.id] if m is not None else None)
            if win is not None:
                tile[win[1]] = arr[win[0]]
            if m is not None:
                tile = np.where(env[m.id], tile, pad).astype(arr.dtype, copy=False)
            env[r.id] = tile
        case ir.Store(tensor=t, offsets=offs, value=v, mask=m):
            arr = ctx.tensors[t]
            val = env[v.id]
            at = [int(env[o.id]) for o in offs]
            win = _windows(at, v.shape, arr.shape)
            if ctx.obs is not None:
                ctx.obs.store(ctx.bid, op, arr, at, v.shape, win, env[m.id] if m is not None else None)
            if win is not None:
                src, dst = win
                if m is None:
                    arr[src] = val[dst]
                else:
                    arr[src] = np.where(env[m.id][dst], val[dst], arr[src])
        case ir.AtomicRMW(op=aop, tensor=t, indices=idx, value=v, mask=m):
            if ctx.obs is not None:
                ctx.obs.atomic(ctx.bid, op, ctx.tensors[t], [env[i.id] for i in idx], env[v.id],
                               env[m.id] if m is not None else None)
            _atomic(
                aop,
                ctx.tensors[t],
                [env[i.id] for i in idx],
                env[v.id],
                env[m.id] if m is not None else None,
                v.dtype,
            )
        case ir.Elementwise(result=r, op=e, operands=xs):
            env[r.id] = num.elementwise(e, [env[x.id] for x in xs], op.operand_dtype)
        case ir.Cast(result=r, x=x, bits=bits):
            env[r.id] = (num.bitcast if bits else num.cast)(env[x.id], x.dtype, r.dtype)
        case ir.Reduce(result=r, op=rop, x=x, axis=a):
            env[r.id] = num.reduce(rop, env[x.id], x.dtype, a)
        case ir.Scan(result=r, op=sop, x=x, axis=a):
            env[r.id] = num.scan(sop, env[x.id], x.dtype, a)
        case ir.Broadcast(result=r, x=x):
            env[r.id] = np.broadcast_to(env[x.id], r.shape)
        case ir.Reshape(result=r, x=x):
            env[r.id] = np.reshape(env[x.id], r.shape)
        case ir.Permute(result=r, x=x, perm=perm):
            env[r.id] = np.transpose(env[x.id], perm)
        case ir.Mma(result=r, a=a, b=b, acc=c):
            env[r.id] = num.mma(env[a.id], env[b.id], env[c.id], a.dtype, c.dtype)
        case ir.For(results=rs, lower=lo, upper=hi, step=st, inits=inits, body=body):
            carried = tuple(env[x.id] for x in inits)
            i, end, step = int(env[lo.id]), int(env[hi.id]), int(env[st.id])
            iv_dt = lo.dtype.np_dtype
            if step > 0:
                while i < end:
                    if ctx.obs is not None:
                        ctx.obs.iteration(op, i + step >= end)
                    env[body.args[0].id] = np.asarray(i, dtype=iv_dt)
                    for a, val in zip(body.args[1:], carried, strict=False):
                        env[a.id] = val
                    carried = _run_region(body, env, ctx)
                    i += step
            for res, val in zip(rs, carried, strict=False):
                env[res.id] = val
        case ir.If(results=rs, cond=c, then=t, else_=e):
            vals = _run_region(t if bool(env[c.id]) else e, env, ctx)
            for res, val in zip(rs, vals, strict=False):
                env[res.id] = val
        case ir.While(results=rs, inits=inits, cond=cr, body=br):
            carried = tuple(env[x.id] for x in inits)
            while True:
                for a, val in zip(cr.args, carried, strict=False):
                    env[a.id] = val
                (go,) = _run_region(cr, env, ctx)
                if not bool(go):
                    break
                for a, val in zip(br.args, carried, strict=False):
                    env[a.id] = val
                carried = _run_region(br, env, ctx)
            for res, val in zip(rs, carried, strict=False):
                env[res.id] = val
        case ir.Yield():
            raise AssertionError("a yield is handled by its region")
        case ir.Prefetch():
            pass  # a cache hint: nothing to do on the CPU
        case ir.Print(parts=parts):
            text = []
            for part in parts:
                if isinstance(part, str):
                    text.append(part)
                elif part.type.is_scalar:
                    text.append(fmt_scalar(env[part.id], part.dtype))
                else:
                    text.append(fmt_tile(env[part.id], part.dtype))
            if ctx.keyed is not None:
                ctx.keyed.append((_print_place(ctx, op, env), len(ctx.keyed), "".join(text)))
            else:
                ctx.out("".join(text))
        case ir.Assert(cond=c, message=msg):
            cond = env[c.id]
            if not bool(np.all(cond)):
                d = _assert_failure(op, msg, cond, ctx, env)
                if not op.order or ctx.failed is None:
                    raise TileError(d)
                ctx.failed.append((_print_place(ctx, op, env), d))
        case _:
            assert_never(op)


_ASSERT_HELP = "the kernel's own `assert` found its condition false for this input: check the input or the condition"


def _assert_failure(op: ir.Assert, msg: str, cond: np.ndarray, ctx: _BlockCtx, env: Env) -> Diagnostic:
    d = Diagnostic.error(
        DEVICE_ASSERT, f"device assertion failed: {msg}" if msg else "device assertion failed"
    ).primary(op.span, "this assertion failed").with_help(_ASSERT_HELP)
    coords, extents = list(ctx.bid), list(ctx.grid)
    if op.order:  # a queue's or walk's tile, not the block that took it (or a group's region)
        s, n = (int(np.asarray(env[v.id])) for v in op.order)
        coords[op.axis], extents[op.axis] = s, n
    d = d.note(ir.describe_place(op.region, op.axis, coords, extents))
    if cond.ndim:
        bad = np.argwhere(~cond)
        first = ", ".join(map(str, bad[0]))
        d = d.note(f"{len(bad)} of {cond.size} elements were false, the first at [{first}]")
    return d


def _atomic(
    op: ir.AtomicOp,
    arr: np.ndarray,
    idx: list[np.ndarray],
    val: np.ndarray,
    mask: np.ndarray | None,
    dt: DType,
) -> None:
    shape = val.shape
    for i in idx:
        shape = np.broadcast_shapes(shape, i.shape)
    flat_idx = [np.broadcast_to(i, shape).reshape(-1).astype(np.int64) for i in idx]
    flat_val = np.broadcast_to(val, shape).reshape(-1)
    keep = None if mask is None else np.broadcast_to(mask, shape).reshape(-1)
    num.atomic_in_bounds(op, arr, flat_idx, flat_val, keep, dt)
