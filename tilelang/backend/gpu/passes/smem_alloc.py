"""Pass `smem_alloc`: place every shared buffer and barrier array.

Buffers live for the whole kernel and are laid out one after the other in
dynamic shared memory in program order: swizzled buffers aligned to 1024
bytes (a 128-byte swizzle atom is 8 rows of 128 bytes and the hardware
swizzles on address bits), others to 16, barriers to 8. `smem_bytes` is the
end of the last one; the code generator's own scratch space (for layout
conversions, reductions) starts there.
"""

from __future__ import annotations

import dataclasses
import math

from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import Shared, SmemRows, SmemTile
from .context import PassContext
from .rewrite import map_ops


def _nbytes(v: ir.Value) -> int:
    item = 8 if isinstance(v, ir.Value) and v.dtype.bits == 64 else v.dtype.itemsize
    n = math.prod(v.shape)
    return n * item


def smem_alloc(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    end = 0

    def fn(op: object) -> list[object]:
        nonlocal end
        if isinstance(op, g.SmemAlloc | g.BarrierAlloc):
            lay = k.layouts.get(op.result.id)
            align = (1024 if isinstance(lay, Shared) and lay.swizzle else 128 if isinstance(lay, SmemTile | SmemRows)
                     else 16 if isinstance(op, g.SmemAlloc) else 8)
            off = -(-end // align) * align
            end = off + _nbytes(op.result)
            return [dataclasses.replace(op, offset=off)]
        return [op]

    body = map_ops(k.body, fn)
    return dataclasses.replace(k, body=body, smem_bytes=-(-end // 16) * 16)


__all__ = ["smem_alloc"]
