"""Pass `mma_select`: every `mma` becomes a `DotOp` on a chosen engine.

- "wgmma" (sm_90a): f16/bf16 operands with an f32 accumulator, M a multiple
  of 64, N of 8 (at most 256 per instruction), K of 16, when the `mma` is the
  accumulation of a loop the Hopper pipeliner takes (`pipeline.hopper_plan`):
  its operands are then TMA copies in shared memory.
- "mma.sync": f16/bf16 operands, f32 accumulator, M % 16, N % 8, K % 16
  (ldmatrix + mma.sync.m16n8k16; runs on sm_80 and later).
- "fma": everything else (other dtypes, shapes that are not multiples of
  the instruction): a loop of scalar fused multiply-adds.
"""

from __future__ import annotations

from tilelang.dtypes import DType
from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import PassContext
from .rewrite import map_ops


def tensor_core_shape(a: ir.Value, b: ir.Value, acc: ir.Value) -> bool:
    M, K = a.shape
    N = b.shape[1]
    return (a.dtype in (DType.F16, DType.BF16) and acc.dtype is DType.F32
            and M % 16 == 0 and N % 8 == 0 and K % 16 == 0)


def mma_select(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    from .pipeline import hopper_plans

    wgmma = {id(p.mma) for p in hopper_plans(k, ctx)} if ctx.has_wgmma else set()

    def fn(op: object) -> list[object]:
        if not isinstance(op, ir.Mma):
            return [op]
        if id(op) in wgmma:
            engine = "wgmma"
        elif tensor_core_shape(op.a, op.b, op.acc):
            engine = "mma.sync"
        else:
            engine = "fma"
        return [g.DotOp(op.result, op.a, op.b, op.acc, engine, op.span)]

    import dataclasses

    return dataclasses.replace(k, body=map_ops(k.body, fn))


__all__ = ["mma_select", "tensor_core_shape"]
