"""What one launch of a kernel moves and computes, from its IR and arguments.

- Bytes: the compulsory traffic: every tensor the kernel loads is read once,
  every tensor it stores (or updates atomically) is written once
  (`nbytes` of the argument each time). Re-reads that caches serve are not
  counted, as a roofline's DRAM axis does.
- FLOPs: counted on the IR: each floating-point arithmetic or math op on a
  tile of S elements is S operations (`fma` is 2), a reduction or scan of S
  elements S, an `mma` of [M, K] x [K, N] is 2*M*N*K; integer and boolean
  work, comparisons, selects and data movement count nothing. Counts are
  multiplied by the number of blocks and by the trip counts of the loops
  around them.

A loop's trip count is known when its bounds fold from constants, the
tensors' run-time dims, the grid and the scalar arguments; a loop whose
bounds depend on the block (`block_id`) or on loaded data is counted once
per block, and the cost says it is a lower bound (`exact=False`). `while`
loops are counted once, also a lower bound.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from typing import Any

from tilelang.frozen import frozen
from tilelang.ir import nodes as ir

_FREE = frozenset(
    {
        ir.ElemOp.NOT, ir.ElemOp.AND, ir.ElemOp.OR, ir.ElemOp.XOR, ir.ElemOp.SHL, ir.ElemOp.SHR,
        ir.ElemOp.EQ, ir.ElemOp.NE, ir.ElemOp.LT, ir.ElemOp.LE, ir.ElemOp.GT, ir.ElemOp.GE,
        ir.ElemOp.WHERE,
    }
)  # fmt: skip


@frozen(eq=True)
class Cost:
    flops: float
    bytes: int
    exact: bool  # every loop trip count was known
    tensor_core: bool  # some `mma` on f16/bf16 (the tensor cores' peak applies)


def kernel_cost(
    kernel: ir.Kernel,
    grid: tuple[int, ...],
    shapes: Mapping[str, tuple[int, ...]],
    nbytes: Mapping[str, int],
    scalars: Mapping[str, Any] | None = None,
) -> Cost:
    """The cost of one launch of `kernel` over `grid`; `shapes`/`nbytes` per
    tensor parameter name, `scalars` per scalar parameter name."""
    env: dict[int, int | float] = {}
    for p in kernel.params:
        if isinstance(p, ir.ScalarParam) and scalars and p.name in scalars:
            with contextlib.suppress(TypeError, ValueError):
                env[id(p.value)] = _num(scalars[p.name])
    counter = _Counter(env, grid, shapes)
    counter.region(kernel.body, 1.0)
    blocks = math.prod(grid)
    moved = sum(nbytes.get(n, 0) for n in counter.loaded) + sum(
        nbytes.get(n, 0) for n in counter.stored
    )
    return Cost(counter.flops * blocks, moved, counter.exact, counter.tensor_core)


def _num(v: Any) -> int | float:
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    raise TypeError(type(v).__name__)


class _Counter:
    def __init__(
        self,
        env: dict[int, int | float],
        grid: tuple[int, ...],
        shapes: Mapping[str, tuple[int, ...]],
    ) -> None:
        self.env = env
        self.grid = grid
        self.shapes = shapes
        self.flops = 0.0
        self.exact = True
        self.tensor_core = False
        self.loaded: set[str] = set()
        self.stored: set[str] = set()

    def value(self, v: ir.Value) -> int | float | None:
        return self.env.get(id(v))

    def region(self, region: ir.Region, times: float) -> None:
        for op in region.ops:
            self.op(op, times)

    def op(self, op: Any, times: float) -> None:
        match op:
            case ir.Const(result=r, value=v) if not r.type.shape:
                self.env[id(r)] = _num(v)
            case ir.NumBlocks(result=r, axis=a):
                if a < len(self.grid):
                    self.env[id(r)] = self.grid[a]
            case ir.TensorDim(result=r, tensor=t, axis=a):
                shape = self.shapes.get(t)
                if shape is not None and a < len(shape):
                    self.env[id(r)] = shape[a]
            case ir.Cast(result=r, x=x, bits=False) if not r.type.shape:
                known = self.value(x)
                if known is not None:
                    self.env[id(r)] = int(known) if r.type.dtype.is_int else float(known)
            case ir.Load(tensor=t):
                self.loaded.add(t)
            case ir.Store(tensor=t):
                self.stored.add(t)
            case ir.AtomicRMW(tensor=t):
                self.loaded.add(t)
                self.stored.add(t)
            case ir.Elementwise(result=r, op=e, operands=xs):
                if not r.type.shape:
                    self.fold(r, e, xs)
                if e not in _FREE and _is_float(xs[0].type.dtype if xs else r.type.dtype):
                    self.flops += times * _size(r.type.shape) * (2 if e is ir.ElemOp.FMA else 1)
            case ir.Reduce(x=x) | ir.Scan(x=x):
                if _is_float(x.type.dtype):
                    self.flops += times * _size(x.type.shape)
            case ir.Mma(a=a, b=b):
                (m, k), (_, n) = a.type.shape, b.type.shape
                self.flops += times * 2 * m * n * k
                if a.type.dtype.value in ("f16", "bf16"):
                    self.tensor_core = True
            case ir.For(lower=lo, upper=hi, step=st, body=body):
                lo_v, hi_v, st_v = self.value(lo), self.value(hi), self.value(st)
                if lo_v is None or hi_v is None or st_v is None:
                    self.exact = False
                    trips = 1
                else:
                    trips = max(0, math.ceil((hi_v - lo_v) / st_v)) if st_v > 0 else 0
                self.region(body, times * trips)
            case ir.If(then=t, else_=e):
                # the more expensive branch (most kernels' branches are the
                # same work on masked edges); tensors touched by either count
                before = self.flops
                self.region(t, times)
                then_flops = self.flops - before
                self.flops = before
                self.region(e, times)
                self.flops = before + max(then_flops, self.flops - before)
            case ir.While(cond=c, body=b):
                self.exact = False
                self.region(c, times)
                self.region(b, times)
            case _:
                pass

    def fold(self, r: ir.Value, e: ir.ElemOp, xs: tuple[ir.Value, ...]) -> None:
        known = [self.value(x) for x in xs]
        vals = [v for v in known if v is not None]
        if len(vals) != len(known) or not vals:
            return
        a = vals[0]
        b = vals[1] if len(vals) > 1 else None
        integer = r.type.dtype.is_int
        out: int | float | None = None
        match e:
            case ir.ElemOp.ADD if b is not None:
                out = a + b
            case ir.ElemOp.SUB if b is not None:
                out = a - b
            case ir.ElemOp.MUL if b is not None:
                out = a * b
            case ir.ElemOp.DIV if b is not None:
                out = (int(a / b) if b else 0) if integer else (a / b if b else math.inf)
            case ir.ElemOp.REM if b is not None and integer:
                out = int(math.fmod(a, b)) if b else a
            case ir.ElemOp.MAXIMUM if b is not None:
                out = max(a, b)
            case ir.ElemOp.MINIMUM if b is not None:
                out = min(a, b)
            case ir.ElemOp.NEG:
                out = -a
            case _:
                out = None
        if out is not None:
            self.env[id(r)] = out


def _size(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def _is_float(dt: Any) -> bool:
    return bool(getattr(dt, "is_float", False))
