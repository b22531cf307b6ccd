"""The CUDA runtime's context and its events and graphs (`cuda.py` re-exports every name here).

- `Context`: the process-wide CUDA state for one device, the primary context (retained once), a non-blocking
  stream, the memory pool (`cuda_memory.py`) and the loaded modules, memoised by key (`cuda_module.py`);
  `context()` is device 0's, made on first use. `DeviceInfo` is the card's facts (arch, SMs, shared memory).
- `Timer`: CUDA events around enqueued work. `Graph`: a stream captured into a CUDA graph and replayed
  (`CudaDevice.end_capture` makes one of a capture the device started).

Every driver call goes through `cuda_driver._check` (a failing `CUresult` -> a `TileError`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from tilelang.diagnostics.codes.codegen import CUDA_ERROR
from tilelang.diagnostics.model import Diagnostic, TileError
from tilelang.runtime import cuda_pdl
from tilelang.runtime.cuda_driver import _check, _driver, _handle_int, is_available, relaxed_capture
from tilelang.runtime.cuda_memory import BufferPool
from tilelang.runtime.cuda_module import Module
from tilelang.source import Span


@dataclass
class DeviceInfo:
    index: int
    name: str
    major: int
    minor: int
    sm_count: int
    max_smem_optin: int
    total_mem: int

    @property
    def arch(self) -> str:
        return f"sm_{self.major}{self.minor}"


class Context:
    """The process-wide CUDA state for one device: primary context and a stream."""

    def __init__(self, index: int = 0) -> None:
        if not is_available():
            raise TileError(
                Diagnostic.error(CUDA_ERROR, "no CUDA device is available").with_help(
                    "run on the CPU with `--device cpu`, or on a machine with an NVIDIA GPU and driver"
                )
            )
        d = _driver()
        self.d = d
        self.dev = _check(d.cuDeviceGet(index), "cuDeviceGet")
        self.ctx = _check(d.cuDevicePrimaryCtxRetain(self.dev), "cuDevicePrimaryCtxRetain")
        _check(d.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        attr = d.CUdevice_attribute

        def get(a: Any) -> int:
            return int(_check(d.cuDeviceGetAttribute(a, self.dev), "cuDeviceGetAttribute"))

        name = _check(d.cuDeviceGetName(256, self.dev), "cuDeviceGetName")
        self.info = DeviceInfo(
            index=index,
            name=name.split(b"\0", 1)[0].decode(errors="replace"),
            major=get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
            minor=get(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
            sm_count=get(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            max_smem_optin=get(attr.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
            total_mem=int(_check(d.cuDeviceTotalMem(self.dev), "cuDeviceTotalMem")),
        )
        # A non-blocking stream: the legacy default stream would serialise with
        # other libraries' work (PyTorch, CuPy) in the same process.
        self.stream = _check(d.cuStreamCreate(d.CUstream_flags.CU_STREAM_NON_BLOCKING.value), "cuStreamCreate")
        self.pool = BufferPool(self)
        self._modules: dict[str, Module] = {}

    def make_current(self) -> None:
        _check(self.d.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    def synchronize(self, span: Span | None = None) -> None:
        _check(self.d.cuStreamSynchronize(self.stream), "cuStreamSynchronize", span)

    # -- modules ------------------------------------------------------------
    def load_ptx(self, ptx: str, key: str | None = None) -> Module:
        """Load PTX (or the cached cubin for it); memoised per process by `key`."""
        k = key or str(hash(ptx))
        mod = self._modules.get(k)
        if mod is None:
            mod = Module.from_ptx(self, ptx, key=key)
            self._modules[k] = mod
        return mod


_CONTEXT: Context | None = None
_CONTEXT_LOCK = threading.Lock()


def context() -> Context:
    """The process's CUDA context for device 0 (created on first use)."""
    global _CONTEXT
    if _CONTEXT is None:
        with _CONTEXT_LOCK:
            if _CONTEXT is None:
                _CONTEXT = Context(0)
    return _CONTEXT


class Timer:
    """CUDA events around enqueued work; `elapsed_ms()` waits for the second one."""

    def __init__(self, ctx: Context | None = None) -> None:
        self.ctx = ctx or context()
        d = self.ctx.d
        self.e0 = _check(d.cuEventCreate(d.CUevent_flags.CU_EVENT_DEFAULT.value), "cuEventCreate")
        self.e1 = _check(d.cuEventCreate(d.CUevent_flags.CU_EVENT_DEFAULT.value), "cuEventCreate")

    def start(self) -> None:
        _check(self.ctx.d.cuEventRecord(self.e0, self.ctx.stream), "cuEventRecord")

    def stop(self) -> None:
        _check(self.ctx.d.cuEventRecord(self.e1, self.ctx.stream), "cuEventRecord")

    def elapsed_ms(self) -> float:
        _check(self.ctx.d.cuEventSynchronize(self.e1), "cuEventSynchronize")
        return float(_check(self.ctx.d.cuEventElapsedTime(self.e0, self.e1), "cuEventElapsedTime"))


class Graph:
    """A captured CUDA graph: `with g.capture(): ...launches...`, then `g.replay()`."""

    def __init__(self, ctx: Context | None = None) -> None:
        self.ctx = ctx or context()
        self.graph: Any = None
        self.exec: Any = None
        self._capturing = False

    def begin(self) -> None:
        d = self.ctx.d
        cuda_pdl.forget(_handle_int(self.ctx.stream))
        _check(d.cuStreamBeginCapture(self.ctx.stream, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL),
               "cuStreamBeginCapture")
        self._capturing = True

    def end(self, span: Span | None = None) -> None:
        d = self.ctx.d
        self._capturing = False
        self.graph = _check(d.cuStreamEndCapture(self.ctx.stream), "cuStreamEndCapture", span)
        cuda_pdl.forget(_handle_int(self.ctx.stream))
        self.exec = _check(d.cuGraphInstantiate(self.graph, 0), "cuGraphInstantiate", span)

    def capture(self) -> _Capture:
        return _Capture(self)

    def replay(self, span: Span | None = None, sync: bool = True) -> None:
        assert self.exec is not None, "replay before capture"
        _check(self.ctx.d.cuGraphLaunch(self.exec, self.ctx.stream), "cuGraphLaunch", span)
        cuda_pdl.forget(_handle_int(self.ctx.stream))
        if sync:
            self.ctx.synchronize(span)

    def __del__(self) -> None:
        try:  # (a finaliser may run inside another library's capture: `relaxed_capture`)
            d = self.ctx.d
            with relaxed_capture(d):
                if self.exec is not None:
                    d.cuGraphExecDestroy(self.exec)
                if self.graph is not None:
                    d.cuGraphDestroy(self.graph)
        except Exception:
            pass


class _Capture:
    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def __enter__(self) -> Graph:
        self.graph.begin()
        return self.graph

    def __exit__(self, *exc: object) -> None:
        self.graph.end()
