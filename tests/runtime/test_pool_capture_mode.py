"""`runtime/cuda_memory.BufferPool` allocates in the thread's relaxed stream-capture mode (`_mem_alloc`): a
buffer made while another library captures a stream (a counter buffer of a launch inside `torch.cuda.graph`)
must not invalidate the capture, as cuMemAlloc does in CUDA's default global mode. A stub driver records the
calls (no GPU); the GPU test is tests/api/test_ecosystem_gpu.py's
`test_a_counter_buffer_made_inside_a_torch_capture_keeps_the_capture`."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

drv = pytest.importorskip("cuda.bindings.driver")

from tilelang.diagnostics.model import TileError  # noqa: E402
from tilelang.runtime.cuda_memory import BufferPool  # noqa: E402

OK = drv.CUresult.CUDA_SUCCESS
RELAXED = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
GLOBAL = drv.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL


class _Driver:
    CUresult = drv.CUresult
    CUstreamCaptureMode = drv.CUstreamCaptureMode

    def __init__(self, fail: int = 0) -> None:
        self.mode = GLOBAL
        self.calls: list[Any] = []
        self.fail = fail  # the first `fail` cuMemAlloc calls run out of memory

    def cuThreadExchangeStreamCaptureMode(self, mode: Any) -> tuple[Any, Any]:
        old, self.mode = self.mode, mode
        self.calls.append(("mode", mode))
        return OK, old

    def cuMemAlloc(self, size: int) -> tuple[Any, int]:
        self.calls.append(("alloc", self.mode))
        if self.fail:
            self.fail -= 1
            return drv.CUresult.CUDA_ERROR_OUT_OF_MEMORY, 0
        return OK, 0x10000 * len(self.calls)

    def cuMemFree(self, ptr: int) -> Any:
        self.calls.append(("free", self.mode))
        return OK


def _pool(d: _Driver) -> BufferPool:
    return BufferPool(SimpleNamespace(d=d))


def test_the_pool_allocates_in_relaxed_mode_and_puts_the_mode_back() -> None:
    d = _Driver()
    buf = _pool(d).alloc(1000)
    assert buf.ptr
    assert d.calls == [("mode", RELAXED), ("alloc", RELAXED), ("mode", GLOBAL)]
    assert d.mode is GLOBAL


def test_the_mode_is_put_back_when_the_allocation_fails() -> None:
    d = _Driver(fail=2)
    with pytest.raises(TileError):
        _pool(d).alloc(1000)
    assert d.mode is GLOBAL
    assert [c for c in d.calls if c[0] == "alloc"] == [("alloc", RELAXED), ("alloc", RELAXED)]


def test_a_cached_block_needs_no_driver_call() -> None:
    d = _Driver()
    pool = _pool(d)
    pool.release(pool.alloc(1000))
    n = len(d.calls)
    pool.alloc(900)  # the same bucket: from the free list
    assert len(d.calls) == n


def test_a_module_loads_in_relaxed_mode_and_puts_the_mode_back() -> None:
    """A module load allocates the module's globals: inside another library's capture (a kernel's first
    launch in `torch.cuda.graph`) it must not invalidate the capture either (`cuda_driver.relaxed_capture`;
    the GPU test: `test_a_kernel_first_launched_inside_a_torch_capture_keeps_the_capture`)."""
    from tilelang.runtime import cache as cache_mod
    from tilelang.runtime.cuda_module import Module

    class _Loader(_Driver):
        def cuModuleLoadData(self, cubin: bytes) -> tuple[Any, int]:  # noqa: N802
            self.calls.append(("load", self.mode))
            return OK, 7

    class _Cache:
        def get(self, key: str) -> bytes:
            return b"cubin"

    d = _Loader()
    ctx = SimpleNamespace(d=d, info=SimpleNamespace(arch="sm_90a"))
    real = cache_mod.default_cache
    cache_mod.default_cache = lambda: _Cache()  # type: ignore[assignment]
    try:
        mod = Module.from_ptx(ctx, ".version 8.0\n.target sm_90a\n")
    finally:
        cache_mod.default_cache = real  # type: ignore[assignment]
    assert mod.handle == 7
    assert d.calls == [("mode", RELAXED), ("load", RELAXED), ("mode", GLOBAL)]
    assert d.mode is GLOBAL
