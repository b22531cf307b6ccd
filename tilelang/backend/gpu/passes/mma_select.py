"""Pass `mma_select`: every `mma` becomes a `DotOp` on a chosen engine.

- "wgmma" (sm_90a): f16/bf16 operands with an f32 accumulator, M a multiple
  of 64, N of 8 (at most 256 per instruction), K of 16, when the `mma` is the
  accumulation of a loop the Hopper pipeliner takes (`pipeline.hopper_plan`):
  its operands are then TMA copies in shared memory.
- "mma.sync": f16/bf16 operands, f32 accumulator, M % 16, N % 8, K % 16
  (ldmatrix + mma.sync.m16n8k16; runs on sm_80 and later); or i8/u8
  operands, i32 accumulator, M % 16, N % 8, K % 32 (mma.sync.m16n8k32;
  `TILEC_INT8_MMA=0` leaves them to "fma").
- "fma": everything else (other dtypes, shapes that are not multiples of
  the instruction): a loop of scalar fused multiply-adds.

First, a loop accumulation spelled `acc = acc + dot(a, b)` (an `mma` of a
zero accumulator, then an add) becomes `acc = mma(a, b, acc)` (`fold_dot_adds`),
the form the pipelines take (the other spelling ran on mma.sync, no Hopper
pipeline: `benchmarks/cliffs.py`'s `gemm_dot`). It is exact, not only within
tolerance: the interpreter computes both as M + acc in f32 with M the same f32
product (`interp.numeric.mma`), and `M + 0` differs from M only for M = -0,
which adds like +0 to an acc that is never -0 (it starts at a constant that is
not -0, and a sum is -0 only of two -0s). The online softmax's spelling
`acc = acc * alpha + dot(p, v)` folds the same way into `mma(p, v, acc * alpha)`,
the form the attention pipeline takes (unfolded, a product of zeros and an add
a block, the serial schedule: `cliffs.py`'s `attn_dot` ran at 0.70x SDPA where
`mma(p, v, acc * alpha)` ran at 0.75x, H100). `acc * alpha` may be -0, but the
interpreter's M is never -0: `np.matmul` sums a dot's products from +0 (a dot
of -0 products is +0), so `M + 0` is M and the two spellings agree bit for bit.
"""

from __future__ import annotations

import dataclasses
import math

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import gemm_sink
from .context import PassContext
from .rewrite import map_ops, uses


def tensor_core_shape(a: ir.Value, b: ir.Value, acc: ir.Value) -> bool:
    M, K = a.shape
    N = b.shape[1]
    return (a.dtype in (DType.F16, DType.BF16) and acc.dtype is DType.F32
            and M % 16 == 0 and N % 8 == 0 and K % 16 == 0)


def int8_tensor_core_shape(a: ir.Value, b: ir.Value, acc: ir.Value) -> bool:
    """i8 x i8 or u8 x u8 into i32 with M, N, K multiples of 16, 8, 32 (`mma.sync.m16n8k32`), while
    `TILEC_INT8_MMA` is on (the default)."""
    from tilelang.backend.target import int8_mma_default

    M, K = a.shape
    N = b.shape[1]
    return (int8_mma_default() and a.dtype in (DType.I8, DType.U8) and b.dtype is a.dtype
            and acc.dtype is DType.I32 and M % 16 == 0 and N % 8 == 0 and K % 32 == 0)


def _zero(v: ir.Value, consts: dict[int, ir.Const]) -> bool:
    c = consts.get(v.id)
    return c is not None and isinstance(c.value, float | int) and not isinstance(c.value, bool) \
        and float(c.value) == 0.0 and math.copysign(1.0, float(c.value)) > 0


def _scaled(op: object, acc: ir.Value, count: dict[int, int]) -> bool:
    """`op` is `acc * y` or `y * acc` (an f32 tile of acc's shape), read once."""
    return (isinstance(op, ir.Elementwise) and op.op is ir.ElemOp.MUL and acc.id in [v.id for v in op.operands]
            and op.result.shape == acc.shape and op.result.dtype is DType.F32 and count.get(op.result.id) == 1)


def _fold_loop(loop: ir.For, consts: dict[int, ir.Const]) -> ir.For:
    """`loop` with each carried f32 `acc` whose only use is `acc + mma(a, b, +0)` or `acc * y + mma(a, b, +0)`
    (the product used only there, the sum yielded back as `acc`) accumulating by `mma(a, b, acc)` or
    `mma(a, b, acc * y)` instead."""
    body = loop.body
    ys = body.ops[-1]
    if not isinstance(ys, ir.Yield):
        return loop
    count = uses(body)
    defs = {r.id: op for op in body.ops for r in g.results(op)}
    swap: dict[int, ir.Mma] = {}  # id of the add -> the mma that replaces it
    drop: set[int] = set()
    for i, acc in enumerate(body.args[1:]):
        init = consts.get(loop.inits[i].id)
        if (acc.dtype is not DType.F32 or init is None or isinstance(init.value, bool)
                or math.copysign(1.0, float(init.value)) < 0 or count.get(acc.id) != 1):
            continue
        add = defs.get(ys.values[i].id)
        if not (isinstance(add, ir.Elementwise) and add.op is ir.ElemOp.ADD and count.get(add.result.id) == 1):
            continue
        # the sum's other term: `acc` itself, or `acc * y` (the online softmax's rescale, `acc * alpha`)
        base = next((v for v in add.operands if v.id == acc.id or _scaled(defs.get(v.id), acc, count)), None)
        if base is None:
            continue
        other = add.operands[1] if add.operands[0] is base else add.operands[0]
        mma = defs.get(other.id)
        if not (isinstance(mma, ir.Mma) and _zero(mma.acc, consts) and count.get(mma.result.id) == 1
                and mma.result.shape == acc.shape and other is not base):
            continue
        swap[id(add)] = ir.Mma(add.result, mma.a, mma.b, base, mma.span)
        drop.add(id(mma))
        zero = defs.get(mma.acc.id)
        if zero is not None and count.get(mma.acc.id) == 1:  # the product's own zeros, in the loop: dead now
            drop.add(id(zero))
    if not swap:
        return loop
    ops = tuple(swap.get(id(op), op) for op in body.ops if id(op) not in drop)
    return dataclasses.replace(loop, body=ir.Region(body.args, ops))


def fold_dot_adds(k: g.GpuKernel) -> g.GpuKernel:
    """Every loop's `acc = acc + dot(a, b)` as `acc = mma(a, b, acc)` (see the module's doc)."""
    consts = {op.result.id: op for op in g.walk(k.body) if isinstance(op, ir.Const)}

    def fn(op: object) -> list[object]:
        return [_fold_loop(op, consts)] if isinstance(op, ir.For) else [op]

    return dataclasses.replace(k, body=map_ops(k.body, fn))


def mma_select(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    from .pipeline import hopper_plans

    k = fold_dot_adds(k)
    k = gemm_sink.sunk_if_it_helps(k, ctx, hopper_plans)  # epilogue tiles made before the loop (round 17)

    wgmma = {id(p.mma) for p in hopper_plans(k, ctx)} if ctx.has_wgmma else set()

    def fn(op: object) -> list[object]:
        if not isinstance(op, ir.Mma):
            return [op]
        if id(op) in wgmma:
            engine = "wgmma"
        elif tensor_core_shape(op.a, op.b, op.acc) or int8_tensor_core_shape(op.a, op.b, op.acc):
            engine = "mma.sync"
        else:
            engine = "fma"
        return [g.DotOp(op.result, op.a, op.b, op.acc, engine, op.span)]

    return dataclasses.replace(k, body=map_ops(k.body, fn))


__all__ = ["fold_dot_adds", "int8_tensor_core_shape", "mma_select", "tensor_core_shape"]
