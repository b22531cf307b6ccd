"""Pass `pipeline`: software pipelining of tensor-core loops (Hopper path).

Placeholder while the pass is written: `hopper_plans` finds no loop, so no
`mma` is selected for wgmma and the pass leaves kernels unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilelang.ir import nodes as ir

from .. import nodes as g
from .context import PassContext


@dataclass(frozen=True, slots=True)
class HopperPlan:
    loop: ir.For
    mma: object


def hopper_plans(k: g.GpuKernel, ctx: PassContext) -> list[HopperPlan]:
    return []


def pipeline(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    return k


__all__ = ["HopperPlan", "hopper_plans", "pipeline"]
