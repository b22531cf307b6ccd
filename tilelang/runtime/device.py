"""The `Device` interface: what the host runtime needs from an engine.

Two implementations: `runtime/cpu.py` (`CpuDevice`, the NumPy kernel
interpreter; the reference semantics) and `runtime/cuda.py` (helper E's CUDA
device). The host evaluator (`runtime/host.py`) and the launch machinery
(`runtime/launch.py`) speak only this interface, so they never import
cuda-python.

Contract:
- A *buffer* is whatever the device uses for a tensor's storage (a NumPy array
  on the CPU, a device allocation on the GPU). Buffers hold a contiguous,
  row-major array of the dtype's storage type (`DType.np_dtype`).
- `upload(host, dtype=None)` makes a new buffer holding a copy of `host` (the
  CPU device may keep `host` itself: callers never reuse an uploaded array);
  `dtype`, when given, is the tensor's element type (the GPU keeps bf16 as
  2-byte bfloat16 when it knows; `download` still returns f32 values);
  `download(buf, dtype, shape)` returns host values (the CPU device returns the
  buffer itself, with no copy); `write(buf, host)` overwrites a buffer in place.
- `prepare(kernel_ir)` turns a lowered `ir.Kernel` into something `run` can
  launch (compiled code on the GPU; the IR itself on the CPU). The launch
  machinery caches its result per kernel instantiation.
- `run(prepared, grid, args, stream, span)` enqueues one launch: `args` is a
  list in the order of the lowered kernel's parameters (`kernel_ir.params`):
  a buffer for a tensor parameter (a partitioned `&mut` parameter gets the
  whole tensor's buffer; the kernel finds its own tile from `block_id`) or a
  NumPy scalar of the parameter's dtype for a scalar parameter. A run-time
  failure inside the kernel (a device `assert`) raises `TileError`.
- Streams order work: `new_stream()` gives an independent queue, `sync(stream)`
  waits for everything queued on it (`None` means the default stream). The CPU
  device runs each launch at once, so its streams are trivially in order.
- `capture(stream)` / `end_capture(stream) -> graph` / `replay(graph, stream)`:
  record the launches made on `stream` between the two calls and replay them
  later (CUDA graphs on the GPU; a list of closures on the CPU). Devices that
  cannot capture return `None` from `end_capture`, and the runtime then
  replays by re-issuing the operations.
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np

from tilelang.dtypes import DType
from tilelang.source import Span


class Device(abc.ABC):
    name: str = "device"
    kind: str = "abstract"  # "cpu" or "gpu"

    # -- memory ---------------------------------------------------------------
    @abc.abstractmethod
    def upload(self, host: np.ndarray, dtype: DType | None = None) -> Any: ...

    @abc.abstractmethod
    def download(self, buffer: Any, dtype: DType, shape: tuple[int, ...]) -> np.ndarray: ...

    @abc.abstractmethod
    def write(self, buffer: Any, host: np.ndarray) -> None: ...

    # -- kernels --------------------------------------------------------------
    @abc.abstractmethod
    def prepare(self, kernel_ir: Any) -> Any: ...

    @abc.abstractmethod
    def run(self, prepared: Any, grid: tuple[int, ...], args: list[Any],
            stream: Any = None, span: Span | None = None) -> None: ...

    # -- ordering ---------------------------------------------------------------
    def new_stream(self) -> Any:
        return None

    def sync(self, stream: Any = None) -> None:
        return None

    # -- graphs -----------------------------------------------------------------
    def capture(self, stream: Any) -> None:
        return None

    def end_capture(self, stream: Any) -> Any:
        return None

    def replay(self, graph: Any, stream: Any = None) -> None:
        raise NotImplementedError
