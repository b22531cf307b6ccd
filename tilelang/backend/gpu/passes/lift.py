"""Pass `lift`: Tile IR kernel -> GPU IR kernel (same body, no layouts yet).

The first pass of the pipeline. The body is shared unchanged; the kernel gets
its target and the first unused value id, so later passes can add values.
"""

from __future__ import annotations

from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import PassContext


def lift(kernel: ir.Kernel, ctx: PassContext) -> g.GpuKernel:
    ids = [v.id for v in g.defined_values(kernel.body)]
    ids += [p.value.id for p in kernel.scalar_params]
    return g.GpuKernel(
        name=kernel.name,
        params=kernel.params,
        body=kernel.body,
        source=kernel,
        arch=ctx.arch,
        grid_rank=kernel.grid_rank,
        num_warps=kernel.num_warps,
        num_stages=kernel.num_stages,
        instantiation=kernel.instantiation,
        next_id=max(ids, default=-1) + 1,
        facts=dict(ctx.facts),
        span=kernel.span,
    )


__all__ = ["lift"]
