"""The register budget of one thread: how many slots of tile data a value in a
distributed layout gives each thread, and the check, before any LLVM text is
emitted, that no value needs more than `MAX_SLOTS_PER_THREAD`.

Why before: the code generator unrolls every slot of a tile (one LLVM value
per element a thread holds), so a tile of a million f32 elements over 128
threads is 8,192 values per operation; emitting and optimising that took
minutes (an autotuner's oversized candidate hung the GPU tests). Such a
kernel could not keep its tile in the 255 registers a thread has anyway.
The check counts with arithmetic on the layout (no view is built), so a
refused kernel costs microseconds and the caller gets E0603 at the op that
makes the value, which the tuner records as a skipped candidate.
"""

from __future__ import annotations

import math
from typing import Any

from tilelang.backend.gpu.layouts import Blocked, Chunked, Slice
from tilelang.diagnostics.codes.codegen import GPU_TILE_TOO_LARGE
from tilelang.diagnostics.model import Diagnostic

MAX_SLOTS_PER_THREAD = 1024  # slots of one tile value per thread the code generator unrolls


def slots_per_thread(layout: Any, shape: tuple[int, ...], threads: int) -> int | None:
    """Elements of a tile of `shape` one thread holds in `layout` (replicas and
    masked lanes included, as the code generator unrolls them); None for
    layouts whose size the pipeline passes bound themselves (mma, wgmma,
    shared memory)."""
    if isinstance(layout, Chunked):
        numel = math.prod(shape)
        return layout.chunks(numel) * layout.vec
    if isinstance(layout, Slice):
        full = list(shape)
        full.insert(layout.dim, 1)
        return _blocked(layout.parent, tuple(full), skip=layout.dim)
    if isinstance(layout, Blocked):
        return _blocked(layout, shape, skip=None)
    return None


def _blocked(lay: Blocked, shape: tuple[int, ...], skip: int | None) -> int | None:
    if len(shape) != len(lay.size_per_thread):
        return None
    n = 1
    for d, size in enumerate(shape):
        if d == skip:
            continue
        spt = lay.size_per_thread[d]
        cta = spt * lay.threads_per_warp[d] * lay.warps_per_cta[d]
        # repetitions past the tile's end for every thread are no slots at all
        n *= spt * max(1, -(-size // cta))
    return n


def check_registers(kernel: Any) -> None:
    """Raise `CodegenError` (E0603) at the first op whose tile result needs more
    than `MAX_SLOTS_PER_THREAD` slots per thread in its layout."""
    from tilelang.backend.gpu.nodes import results, walk
    from tilelang.backend.llvm import CodegenError

    threads = kernel.num_warps * 32
    layouts = kernel.layouts
    for op in walk(kernel.body):
        for v in results(op):
            shape = getattr(v.type, "shape", ())
            if not shape or v.id not in layouts:
                continue
            n = slots_per_thread(layouts[v.id], shape, threads)
            if n is None or n <= MAX_SLOTS_PER_THREAD:
                continue
            dims = "x".join(str(d) for d in shape)
            span = getattr(op, "span", None) or kernel.span
            raise CodegenError(
                Diagnostic.error(
                    GPU_TILE_TOO_LARGE,
                    f"a tile of {dims} elements puts {n} elements in each of the block's "
                    f"{threads} threads, more than the {MAX_SLOTS_PER_THREAD} the GPU backend "
                    "keeps in registers",
                )
                .primary(span, "this tile is too large for one thread block")
                .with_help(
                    "use smaller tiles (smaller const generics or partition shapes), "
                    "or more warps (`#[hints(num_warps = ..)]`)"
                )
            )
