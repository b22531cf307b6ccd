"""The GPU IR pass pipeline: Tile IR kernel -> GPU IR kernel, one table.

`PASSES` lists the passes in order; each is one module with one entry
`(GpuKernel, PassContext) -> GpuKernel` (the first, `lift`, takes the Tile IR
kernel). `lower_to_gpu(kernel, arch, facts, until=None)` runs them (up to and
including `until`); the driver's `gpu` stage, the code generator and the
golden tests (`tests/backend/gpu_goldens/`) all go through it.

To add a pass: write `passes/<name>.py` with one entry function, add it to
`PASSES` where its inputs exist, and add a golden kernel that shows what it
does (`tests/backend/test_gpu_passes.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilelang.backend.facts import TensorFacts
from tilelang.ir import nodes as ir

from .. import nodes as g
from . import (
    block_order,
    convert,
    layout_assign,
    lift,
    mma_select,
    pipeline,
    pipeline_fma,
    pipeline_products,
    pipeline_sm80,
    smem_alloc,
    stream_loads,
    stream_mma,
)
from .context import PassContext


def _attention(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    """`attention.attention`, its module imported only for a kernel it may
    rewrite (a wgmma target and a loop with two products): the largest pass,
    which a first launch of any other kernel need not load."""
    if not ctx.has_wgmma or not any(
        isinstance(op, ir.For) and sum(isinstance(o, g.DotOp) for o in op.body.ops) == 2 for op in k.body.ops
    ):
        return k
    from . import attention_layout

    before = list(ctx.notes)
    out = _attention_once(k, ctx)
    if out is k and (k2 := attention_layout.unshare_loop_aranges(k)) is not None:
        # an `arange` before the loop that the loop reads too (the causal rows and the keys where BM == BN):
        # made again in the loop, where the consumers' layouts can give each its own; kept only where the
        # pipeline then takes the loop (every kernel it took before is unchanged)
        declined = list(ctx.notes)
        ctx.notes[:] = before
        out2 = _attention_once(k2, ctx)
        if out2 is not k2:
            return out2
        ctx.notes[:] = declined
    return out


def _attention_once(k: g.GpuKernel, ctx: PassContext) -> g.GpuKernel:
    from . import attention, attention_edge

    edged = attention_edge.unswitch(k)  # the edge masks under a test (exact); kept where the pipeline takes it
    if edged is not k:
        out = attention.attention(edged, ctx)
        if out is not edged:
            return out
    return attention.attention(k, ctx)


PASSES: tuple[tuple[str, Callable[[Any, PassContext], g.GpuKernel]], ...] = (
    ("lift", lift.lift),  # Tile IR -> GPU IR, no layouts yet
    ("mma_select", mma_select.mma_select),  # mma -> DotOp on wgmma / mma.sync / fma
    ("block_order", block_order.block_order),  # grouped block order for L2 reuse
    ("attention", _attention),  # the flash-attention loop: TMA ring, wgmma, softmax in registers
    ("pipeline", pipeline.pipeline),  # TMA + mbarrier ring + warp roles for wgmma loops
    ("pipeline_sm80", pipeline_sm80.pipeline_sm80),  # cp.async ring + ldmatrix + mma.sync loops on sm_8x
    ("pipeline_fma", pipeline_fma.pipeline_fma),  # cp.async ring + register-blocked FMAs (f32/f64/int products)
    ("pipeline_products", pipeline_products.pipeline_products),  # loops of several mma.sync products: cp.async rings
    ("layout_assign", layout_assign.layout_assign),  # a layout for every tile value
    ("convert", convert.convert),  # explicit ConvertLayout where layouts disagree
    ("stream_mma", stream_mma.stream_mma),  # mma.sync loops no pipeline took: their loads through cp.async rings
    ("stream_loads", stream_loads.stream_loads),  # `stages`-hinted loops: loads through per-thread cp.async rings
    ("smem_alloc", smem_alloc.smem_alloc),  # offsets of shared buffers and barriers
)


# Passes a `#[cluster(..)]` kernel skips: `block_order` renumbers the blocks
# (a cluster is CUDA's, by launch position: the logical blocks of a cluster
# must be the CTAs of one); the attention and GEMM pipelines give warps roles
# that end apart and walk grids persistently, where a cluster barrier needs
# every thread of every block of the cluster once, at the top level.
CLUSTER_SKIPS = frozenset({"block_order", "attention", "pipeline"})


def _refuse_clusters(kernel: ir.Kernel, arch: str) -> None:
    from tilelang.backend.codegen.core import CodegenError
    from tilelang.diagnostics.codes.codegen import GPU_ARCH_FEATURE
    from tilelang.diagnostics.model import Diagnostic

    sm = int("".join(ch for ch in arch.removeprefix("sm_") if ch.isdigit()) or 0)
    if sm < 90:
        raise CodegenError(
            Diagnostic.error(GPU_ARCH_FEATURE, f"thread-block clusters need sm_90 or newer; the target is `{arch}`")
            .primary(kernel.span, f"`#[cluster({', '.join(map(str, kernel.cluster))})]` on this kernel")
            .note("clusters, their barrier and distributed shared memory are Hopper features")
            .with_help("compile for `--arch sm_90` (or sm_90a), or run it on the CPU interpreter"))


def lower_to_gpu(kernel: ir.Kernel, arch: str = "sm_80", facts: dict[str, TensorFacts] | None = None,
                 until: str | None = None, max_warps: int = 0) -> g.GpuKernel:
    """Run the passes on `kernel` for `arch`; `facts` None means the facts
    `tilec emit` assumes (aligned tensors, dims multiples of 16); `max_warps` > 0 caps the warps
    `lift.default_warps` raises a kernel to."""
    if facts is None:
        facts = {p.name: TensorFacts.assumed(p.rank) for p in kernel.tensor_params}
    ctx = PassContext(arch, facts, max_warps=max_warps)
    value: Any = kernel
    clustered = isinstance(kernel, ir.Kernel) and bool(kernel.cluster)
    if clustered:
        _refuse_clusters(kernel, arch)
    # a static tile walk (`for s in tiles(axis)`) skips them too: its blocks
    # are its grid's (no renumbering) and its loop is its tiles' (no roles
    # or persistent walk of their own around it)
    walked = isinstance(kernel, ir.Kernel) and kernel.walk >= 0
    for name, fn in PASSES:
        if (clustered or walked) and name in CLUSTER_SKIPS:
            continue
        value = fn(value, ctx)
        if name == until:
            break
    else:
        if until is not None:
            raise ValueError(f"unknown pass `{until}` (passes: {', '.join(n for n, _ in PASSES)})")
    if ctx.notes and isinstance(value, g.GpuKernel):
        import dataclasses

        value = dataclasses.replace(value, notes=tuple(ctx.notes))
    return value  # type: ignore[no-any-return]


__all__ = ["PASSES", "PassContext", "lower_to_gpu"]
