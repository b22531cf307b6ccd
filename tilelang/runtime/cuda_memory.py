"""Device memory of the CUDA runtime (`cuda.py`): a size-bucketed pool of
driver allocations (`BufferPool`) and the buffers it hands out (`DeviceBuffer`);
and bf16 tensors' 2-byte storage (`bf16_bits`, `bf16_values`: f32 values <-> bfloat16 bits).

Invariant: a freed buffer goes back to its bucket's free list and is reused,
so thousands of launches allocate nothing new (`BufferPool.allocations`
counts the driver's allocations, for the tests of that promise); a failed
allocation gives every cached block back (`trim`) and tries once more.

`ctx` is always the runtime's `cuda.Context` (typed `Any`: this module
imports nothing of `cuda.py`, which imports it).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tilelang.diagnostics.model import TileError
from tilelang.runtime.cuda_driver import _check, relaxed_capture


def _bucket(nbytes: int) -> int:
    """Round a request up to a bucket: 256-byte steps below 64 KiB, then 1/8ths of a power of two."""
    n = max(256, nbytes)
    if n <= 65536:
        return (n + 255) & ~255
    p = 1 << (n.bit_length() - 1)
    step = p // 8
    return ((n + step - 1) // step) * step


class BufferPool:
    """Size-bucketed free lists of device allocations (cudaMalloc is ~100 us; reuse is free)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.free_lists: dict[int, list[int]] = defaultdict(list)
        self.live = 0
        self.reserved = 0
        self.allocations = 0  # calls to cuMemAlloc, for tests of the "no leak" promise

    def alloc(self, nbytes: int) -> DeviceBuffer:
        size = _bucket(nbytes)
        lst = self.free_lists.get(size)
        if lst:
            ptr = lst.pop()
        else:
            d = self.ctx.d
            try:
                ptr = _mem_alloc(d, size)
            except TileError:
                self.trim()  # give cached blocks back and try once more
                try:
                    ptr = _mem_alloc(d, size)
                except TileError as e:
                    if getattr(e, "cuda_name", "") != "CUDA_ERROR_OUT_OF_MEMORY":
                        raise
                    raise self._out_of_memory(nbytes, e) from None
            self.allocations += 1
            self.reserved += size
        self.live += size
        return DeviceBuffer(ptr, nbytes, size, self)

    def _out_of_memory(self, nbytes: int, err: TileError) -> TileError:
        """The driver's CUDA_ERROR_OUT_OF_MEMORY in the program's terms: how much was asked, of how much, and how
        much tilec's live tensors hold (the statement that asked is labelled by the host evaluator)."""
        from tilelang.diagnostics.model import Diagnostic

        info = getattr(self.ctx, "info", None)
        total = f"the GPU's {_gib(info.total_mem)}" if info is not None and info.total_mem else "the GPU's memory"
        d = err.diagnostics[0]
        diag = Diagnostic.error(d.code, f"out of GPU memory: {_gib(nbytes)} more does not fit in {total}, of "
                                        f"which this program's tensors hold {_gib(self.live)}")
        for label in d.labels:
            diag = diag.primary(label.span, label.message) if label.primary else diag.secondary(label.span, label.message)
        return TileError(diag.note(f"the driver said: {d.message.removeprefix('CUDA error in ')}").with_help(
            "use smaller tensors, let tensors the program no longer needs go out of scope, or run on the CPU "
            "with `--device cpu` (the host's memory)"))

    def release(self, buf: DeviceBuffer) -> None:
        self.live -= buf.capacity
        self.free_lists[buf.capacity].append(buf.ptr)

    def trim(self) -> None:
        d = self.ctx.d
        for size, lst in self.free_lists.items():
            for ptr in lst:
                d.cuMemFree(ptr)
                self.reserved -= size
            lst.clear()


def _gib(n: int) -> str:
    """`n` bytes for a person: GiB, MiB or KiB, one decimal."""
    for unit, shift in (("GiB", 30), ("MiB", 20)):
        if n >= 1 << (shift - 2):
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n / 1024:.1f} KiB"


def _mem_alloc(d: Any, size: int) -> int:
    """`cuMemAlloc` in the thread's relaxed stream-capture mode (`relaxed_capture`): a buffer made while a
    stream is being captured (a counter buffer of a launch captured by `torch.cuda.graph`,
    `cuda_arrive.Counters`; a print buffer) is not part of the graph, and in the global mode the allocation
    invalidated the capture (2026-12-06: a flaky `test_folded_merge_matches_torch` whenever the pool's free
    lists had no block of the size)."""
    with relaxed_capture(d):
        return int(_check(d.cuMemAlloc(size), "cuMemAlloc"))


@dataclass(eq=False)
class DeviceBuffer:
    ptr: int
    nbytes: int
    capacity: int
    pool: BufferPool | None = field(repr=False, default=None)

    def free(self) -> None:
        if self.pool is not None:
            self.pool.release(self)
            self.pool = None

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:
            pass


# ---------------------------------------------------------------- bf16 storage
def bf16_bits(host: np.ndarray) -> np.ndarray:
    """f32 values -> bfloat16 bits (uint16), rounded to nearest even (the
    runtime's bf16 values are already rounded, so this is exact for them)."""
    from tilelang.interp.numeric import round_bf16

    f = np.ascontiguousarray(round_bf16(np.asarray(host, dtype=np.float32)), dtype=np.float32)
    return (f.view(np.uint32) >> 16).astype(np.uint16)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bits (uint16) -> their f32 values (exact)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)
