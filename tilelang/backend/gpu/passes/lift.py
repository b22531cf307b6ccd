"""Pass `lift`: Tile IR kernel -> GPU IR kernel (same body, no layouts yet).

The first pass of the pipeline. The body is shared unchanged; the kernel gets
its target and the first unused value id, so later passes can add values.

It also picks the warps of a kernel that names none (`default_warps`): 4, or
more where its largest tile would give a thread more than `ELEMS_PER_THREAD`
elements, so that rows of 32,768 (a softmax written as one [1, 32768] tile,
examples/softmax_wide.tile's form) do not spill: at 4 warps ptxas spilled 864
bytes there and 7,512 for a layernorm, none and 340 at 16 (`benchmarks/cliffs.py`;
on an H100 softmax rows of 32,768 went 0.72x -> 1.67x torch, layernorm 0.38x -> 0.90x).
Kernels with an `mma` (their layouts count warps themselves), a `num_warps`
(`#[hints]`, an `#[autotune]` configuration or the Python API's tuned hints:
`tuner.space.hinted_fields` marks them given), `min_blocks` or `max_blocks`
hint, a cluster or a tile walk keep theirs. Where the raised count's code does
not fit (a reduction's scratch grows with the warps: a [64, 1024] f32 `cumsum`
over axis 0 needs 384 KB of shared memory at 32 warps), `backend.lower_gpu`
lowers again with half as many, down to the kernel's own (`PassContext.max_warps`).
`TILEC_DEFAULT_WARPS=0` turns the raise off.

The same reading takes fewer warps where the largest tile is small (`fewer_warps`, hcliff9): a kernel whose
tiles give each of 4 warps' threads at most `SMALL_ELEMS` elements at half the warps (128 elements: 1 warp,
256: 2) had 3 of its 4 warps (or 2) compute replicas of the first one's elements, issuing 4x (2x) the
instructions for the same values and filling an SM with 16 CTAs where 32 fit (a05's max-pool, 64 outputs a
CTA: its [64] rows held by every warp). Where a tile's last dim holds 16-byte vectors of f32 (4 a thread) a
thread's own elements are the same at either count, so a block takes no longer; a column tile ([128, 1]: one a
thread of 4 warps) gives a thread up to 4. An SM holds twice (four times) the blocks. A product whose
matrix `codegen/shift_dot` or `codegen/gather_dot` reads as a stencil or a gather counts as its result (the
matrix is never built); any other `mma` keeps the kernel's warps. A tile of 16- or 8-bit elements counts
by the vector a thread holds of its last dim (8 f16, 16 i8: `_small_units`, hrev26), so an i8 [512] row runs
at 1 warp (at 4, three were replicas); a column of them counts each. `TILEC_FEWER_WARPS=0` turns it off.
"""

from __future__ import annotations

import math

from tilelang.ir import nodes as ir

from .. import nodes as g
from ..layouts import blocked_for
from .context import PassContext

ELEMS_PER_THREAD = 64  # a thread's elements of the largest tile, at most, before more warps are taken
MAX_DEFAULT_WARPS = 32  # 1,024 threads: CUDA's block limit
SMALL_ELEMS = 4  # a thread's elements of the largest tile, at most, at the fewer warps `fewer_warps` takes


def default_warps_enabled() -> bool:
    """On unless `TILEC_DEFAULT_WARPS=0` (every kernel at its hint or 4, as before 2026-12-06). It was opt-in
    for a session after it gave a [64, 1024] f32 kernel 32 warps whose code needed 384 KB of shared memory
    (p17_half_math) and raised an `#[autotune(num_warps = [4, ..])]` configuration's 4; both are kept now
    (`backend.lower_gpu`'s fit, `tuner.space.hinted_fields`)."""
    from tilelang.backend.env_switch import flag

    return flag("TILEC_DEFAULT_WARPS", "1")


def fewer_warps_enabled() -> bool:
    """On unless `TILEC_FEWER_WARPS=0` (small-tile kernels at 4 warps, as before hcliff9; the device script's
    old arm)."""
    from tilelang.backend.env_switch import flag

    return flag("TILEC_FEWER_WARPS", "1")


def default_warps(kernel: ir.Kernel, cap: int = 0) -> int:
    """`kernel.num_warps`, raised for big tiles where the source leaves it to the backend (module doc), to
    at most `cap` where `cap` > 0 (never below the kernel's own), or lowered for small ones (`fewer_warps`)."""
    w = kernel.num_warps
    if not default_warps_enabled() or ("num_warps" in kernel.hints or kernel.min_blocks or kernel.max_blocks or kernel.cluster
            or kernel.walk >= 0):
        return w
    biggest = small = 0
    for op in g.walk(kernel.body):
        if isinstance(op, ir.Mma):
            return fewer_warps(kernel, w)
        for r in g.results(op):
            biggest = max(biggest, math.prod(r.shape))
            small = max(small, _small_units(r))
    top = min(MAX_DEFAULT_WARPS, cap) if cap > 0 else MAX_DEFAULT_WARPS
    if biggest <= ELEMS_PER_THREAD * 32 * w:
        return fewer_warps(kernel, w, small)
    while biggest > ELEMS_PER_THREAD * 32 * w and w * 2 <= top:
        w *= 2
    return w


def _small_units(v: ir.Value) -> int:
    """Tile `v`'s elements as `fewer_warps` counts them: scaled by `SMALL_ELEMS` over the vector a thread holds
    of its last dim where that is wider (`layouts.blocked_for`: 16 bytes, 8 f16 or 16 i8 elements), so a
    thread's one vector counts as `SMALL_ELEMS` elements (hrev26: an i8 [512] row at 4 warps was 3 warps of
    replicas of the first); a column ([N, 1]: no vector) counts every element."""
    shape = v.shape
    n = math.prod(shape)
    if not shape:
        return n
    vec = blocked_for(shape, 32, v.dtype.itemsize).size_per_thread[-1]
    return -(-n * SMALL_ELEMS // max(SMALL_ELEMS, vec))


def fewer_warps(kernel: ir.Kernel, w: int, biggest: int = -1) -> int:
    """`w` halved while the largest tile `biggest` (computed here where -1: a kernel with a product; in
    `_small_units`) would give each thread at most `SMALL_ELEMS` elements, or one vector, at the halved count
    (module doc)."""
    if not fewer_warps_enabled() or w <= 1:
        return w
    if biggest < 0:
        biggest = _built_tiles(kernel)
        if biggest < 0:
            return w
    while w > 1 and biggest <= SMALL_ELEMS * 32 * (w // 2):
        w //= 2
    return w


def _built_tiles(kernel: ir.Kernel) -> int:
    """The largest tile a kernel with a product builds, where each product is one `shift_dot` or `gather_dot`
    takes (its matrix's ops are never emitted, `shift_dot.dead_band_ops`); -1 where one is not."""
    from types import SimpleNamespace

    from tilelang.backend.codegen import gather_dot, shift_dot

    em = SimpleNamespace(k=kernel)  # what the recognizers read of an emitter: the body (and their memo)
    ops = list(g.walk(kernel.body))
    for op in ops:
        if isinstance(op, ir.Mma) and not shift_dot.takes(em, op) and gather_dot.gather_of(em, op) is None:
            return -1
    dead = shift_dot.dead_band_ops(em, gather_dot.matrix_read)
    return max((_small_units(r) for op in ops if id(op) not in dead for r in g.results(op)), default=0)


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
        num_warps=default_warps(kernel, ctx.max_warps),
        num_stages=kernel.num_stages,
        instantiation=kernel.instantiation,
        next_id=max(ids, default=-1) + 1,
        facts=dict(ctx.facts),
        span=kernel.span,
    )


__all__ = ["lift"]
