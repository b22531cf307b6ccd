"""Pass `smem_alloc`: place every shared buffer and barrier array.

Buffers live for the whole kernel and are laid out one after the other in
dynamic shared memory in program order: swizzled buffers aligned to 1024
bytes (a 128-byte swizzle atom is 8 rows of 128 bytes and the hardware
swizzles on address bits), others to 16, barriers to 8. `smem_bytes` is the
end of the last one; the code generator's own scratch space (for layout
conversions, reductions) starts there.

`TILEC_MBAR_ONE_INIT` (on by default, `one_init`; "0": off): a run of
barrier arrays with nothing but shared buffers between them shares one fence
and one CTA barrier (the last array's), where each array had its own: a
pipeline kernel's start (the attention pipeline's four arrays: SASS's
`MEMBAR.ALL.CTA`, `FENCE.VIEW.ASYNC.S` and `BAR.SYNC` three times fewer
before its warp roles split). The default since the H100 timed it with
`TILEC_ATTN_DIVS_IN_ROLE` (2026-12-07, call 32: decode B=1 8k 13.00 ->
12.86 us, B=8 8k -0.31..-0.37 us, the D = 128 S = 4,096 prefill within its
spread).
"""

from __future__ import annotations

import dataclasses
import math

from tilelang.backend.env_switch import flag
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
    if one_init_enabled():
        body = one_init(body)
    return dataclasses.replace(k, body=body, smem_bytes=-(-end // 16) * 16)


def one_init_enabled() -> bool:
    """`TILEC_MBAR_ONE_INIT` (unset or "1": on; "0": off, each barrier array fenced and followed by a CTA
    barrier of its own, the form before 2026-12-07)."""
    return flag("TILEC_MBAR_ONE_INIT", "1")


def one_init(body: ir.Region) -> ir.Region:
    """`body` with each top-level `BarrierAlloc` that another follows, with only `SmemAlloc`s (which emit no
    code) between them, unfenced: its initialisation (thread 0's) is made visible by the next one's fence and
    CTA barrier, so a run of arrays has one of each, after the last."""
    ops = list(body.ops)
    nxt: object | None = None
    for i in range(len(ops) - 1, -1, -1):
        op = ops[i]
        if isinstance(op, g.BarrierAlloc):
            if isinstance(nxt, g.BarrierAlloc):
                ops[i] = dataclasses.replace(op, fenced=False)
            nxt = op
        elif not isinstance(op, g.SmemAlloc):
            nxt = op
    return ir.Region(body.args, tuple(ops))  # type: ignore[arg-type]


__all__ = ["one_init", "one_init_enabled", "smem_alloc"]
