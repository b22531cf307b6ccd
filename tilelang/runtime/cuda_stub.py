"""The real `CudaDevice` over a stand-in driver, for tests and CPU profiles of
the general launch path without a GPU (`cuda_fake.FakeCuda` replaces the
device; this keeps it and replaces the driver under it).

- `StubDriver`: cuda-python's enums and types (imported, never loaded: no
  libcuda is needed), its functions replaced by Python ones that record what
  they were called with (`calls`, a count by name; `launches`, the
  arguments of each `cuLaunchKernel`; `tmaps`, each TMA descriptor encoded);
  `capture_status` answers `cuStreamIsCapturing` (a capture, `cuStreamBeginCapture` to
  `cuStreamEndCapture`, sets it; its launches are recorded, `cuGraphLaunch` only counted); `fail` makes a named call
  return an error code (`tests/runtime/test_gpu_errors_user.py`: what a
  user sees when the driver fails), and the host<->device copies run (a
  download reads `memory`, else zeros), so a whole `tilec run` program runs.
- `StubContext`: `cuda.Context`'s face (`d`, `info`, `stream`, `pool`,
  `load_ptx`), a card of `arch` with `sms` multiprocessors. `load_ptx`
  keeps the PTX and hands out fake functions (PTX is compiled, never run),
  a module a key as the real context memoises them (`loads` counts them).
- `stub_device(arch, sms)`: a `CudaDevice` on it, made without `__init__`'s
  driver calls; `installed(dev)`: that device as the API's `cuda:0`.
- `DevArray`: host memory (a NumPy array) that says it is `cuda:0` memory
  (`__cuda_array_interface__`), the arrays of a call on the stub (no PyTorch
  needed; nothing reads or writes the memory).

Everything the device does between the API and the driver runs for real:
`_run_slow`, `_choose` (the split form), `tensor_map`, the counters of
`cuda_arrive.py`, PackedArgs, `FastLaunch`. Used by `tests/api/test_launch_slots.py`
and `benchmarks/launch_cpu_profile.py`.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
from collections import Counter
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np

from tilelang.runtime.cuda_driver import _driver


class StubDriver:
    """cuda.bindings.driver's names with stand-in functions (see the module)."""

    def __init__(self) -> None:
        self._real = _driver()
        self.calls: Counter[str] = Counter()
        self.launches: list[tuple[Any, ...]] = []
        self.tmaps: list[tuple[Any, ...]] = []
        self.capture_status = 0  # CUstreamCaptureStatus: 0 none, 1 active
        self.fail_launch = 0  # a CUresult code the next launches return
        self.fail: dict[str, int] = {}  # call name -> a CUresult code that call returns from now on
        self.memory: dict[int, bytes] = {}  # device address -> bytes `cuMemcpyDtoH` reads there (else zeros)
        self._next_ptr = itertools.count(1)
        self._tmap_cells: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        v = getattr(self._real, name)
        if name.startswith("cu") and callable(v) and not isinstance(v, type):
            raise AttributeError(f"the stub driver has no `{name}`")  # a call nothing here expects
        return v

    def _ok(self, name: str, *vals: Any) -> tuple[Any, ...]:
        self.calls[name] += 1
        if code := self.fail.get(name):
            return (self._real.CUresult(code), *(None for _ in vals))
        return (self._real.CUresult.CUDA_SUCCESS, *vals)

    def cuGetErrorName(self, err: Any) -> tuple[Any, ...]:  # noqa: N802
        return (self._real.CUresult.CUDA_SUCCESS, self._real.CUresult(err).name.encode())

    def cuGetErrorString(self, err: Any) -> tuple[Any, ...]:  # noqa: N802
        return (self._real.CUresult.CUDA_SUCCESS, b"")

    def cuStreamCreate(self, flags: int) -> tuple[Any, ...]:  # noqa: N802
        return self._ok("cuStreamCreate", self._real.CUstream(0x5EB + self.calls["cuStreamCreate"]))

    def cuStreamIsCapturing(self, s: Any) -> tuple[Any, ...]:  # noqa: N802 - the driver's names
        return self._ok("cuStreamIsCapturing", self._real.CUstreamCaptureStatus(self.capture_status))

    def cuLaunchKernel(self, f: Any, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, smem: int,  # noqa: N802
                       stream: Any, params: int, extra: Any) -> tuple[Any, ...]:
        if self.fail_launch:
            return (self._real.CUresult(self.fail_launch),)
        self.launches.append((int(f), gx, gy, gz, bx, smem, int(stream), int(params)))
        return self._ok("cuLaunchKernel")

    def cuStreamBeginCapture(self, s: Any, mode: Any) -> tuple[Any, ...]:  # noqa: N802
        self.capture_status = 1  # the launches until the end are recorded in `launches` (a graph of them)
        return self._ok("cuStreamBeginCapture")

    def cuStreamEndCapture(self, s: Any) -> tuple[Any, ...]:  # noqa: N802
        self.capture_status = 0
        return self._ok("cuStreamEndCapture", SimpleNamespace(graph=len(self.launches)))

    def cuGraphInstantiate(self, graph: Any, flags: int) -> tuple[Any, ...]:  # noqa: N802
        return self._ok("cuGraphInstantiate", SimpleNamespace(graph=graph))

    def cuGraphLaunch(self, g: Any, s: Any) -> tuple[Any, ...]:  # noqa: N802 - a replay: counted in `calls`
        return self._ok("cuGraphLaunch")

    def cuTensorMapEncodeTiled(self, dtype: Any, rank: int, ptr: int, dims: Any, strides: Any, box: Any,  # noqa: N802
                               elem: Any, *rest: Any) -> tuple[Any, ...]:
        # a descriptor whose bytes name its pointer and shape (tests read them back: `tmap_fields`)
        words = [int(ptr), *(int(x) for x in dims)] + [0] * 16
        cell = (ctypes.c_uint64 * 16)(*words[:16])
        self._tmap_cells.append(cell)
        self.tmaps.append((int(ptr), tuple(int(x) for x in dims), tuple(int(x) for x in box)))
        return self._ok("cuTensorMapEncodeTiled", SimpleNamespace(getPtr=lambda: ctypes.addressof(cell)))

    def cuMemAlloc(self, size: int) -> tuple[Any, ...]:  # noqa: N802
        return self._ok("cuMemAlloc", 0x7000_0000_0000 + (next(self._next_ptr) << 32))

    def cuMemcpyDtoHAsync(self, dst: int, src: int, n: int, stream: Any) -> tuple[Any, ...]:  # noqa: N802
        self._copy_out(dst, src, n)
        return self._ok("cuMemcpyDtoHAsync")

    def cuThreadExchangeStreamCaptureMode(self, mode: Any) -> tuple[Any, ...]:  # noqa: N802
        return self._ok("cuThreadExchangeStreamCaptureMode", self._real.CUstreamCaptureMode(0))

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, f: Any, threads: int, smem: int) -> tuple[Any, ...]:  # noqa: N802
        return self._ok("cuOccupancy", 1)

    def cuFuncGetAttribute(self, attr: Any, f: Any) -> tuple[Any, ...]:  # noqa: N802
        return self._ok("cuFuncGetAttribute", 128)

    def _plain(name: str) -> Any:  # type: ignore[misc]  # noqa: N805 - a maker of methods
        def call(self: StubDriver, *args: Any) -> tuple[Any, ...]:
            return self._ok(name)

        call.__name__ = name
        return call

    def cuMemcpyDtoH(self, dst: int, src: int, n: int) -> tuple[Any, ...]:  # noqa: N802
        self._copy_out(dst, src, n)
        return self._ok("cuMemcpyDtoH")

    def _copy_out(self, dst: int, src: int, n: int) -> None:
        for at, data in self.memory.items():
            lo, hi = max(at, src), min(at + len(data), src + n)
            if lo < hi:
                ctypes.memmove(dst + lo - src, data[lo - at : hi - at], hi - lo)

    for _n in ("cuMemsetD8", "cuMemsetD8Async", "cuMemsetD32", "cuMemsetD32Async", "cuStreamSynchronize",
               "cuFuncSetAttribute", "cuCtxSetCurrent", "cuMemFree", "cuMemcpyHtoDAsync"):
        locals()[_n] = _plain(_n)
    del _n, _plain


def tmap_fields(desc: bytes) -> tuple[int, ...]:
    """What a stub descriptor says: (pointer, dims innermost first...)."""
    return tuple(int.from_bytes(desc[8 * k : 8 * k + 8], "little") for k in range(16))


class StubContext:
    """`cuda.Context` over a `StubDriver` (see the module)."""

    def __init__(self, arch: str = "sm_90a", sms: int = 132) -> None:
        from tilelang.runtime.cuda_context import DeviceInfo
        from tilelang.runtime.cuda_memory import BufferPool

        self.d = StubDriver()
        major, minor = int(arch[3]), int(arch[4])
        self.info = DeviceInfo(0, f"stub {arch}", major, minor, sms, 227 * 1024, 80 << 30)
        self.dev = 0
        self.ctx = self.d.CUcontext(0)
        self.stream = self.d.CUstream(0x5EA)
        self.pool = BufferPool(self)
        self.ptx: dict[str, str] = {}  # function name -> its PTX
        self._functions = itertools.count(0x100)
        self._modules: dict[str, Any] = {}  # `load_ptx`'s memo (its key -> module)
        self.loads = 0  # modules `load_ptx` made

    def make_current(self) -> None:
        self.d.calls["make_current"] += 1

    def synchronize(self, span: Any = None) -> None:
        self.d.calls["synchronize"] += 1

    def load_ptx(self, ptx: str, key: str | None = None) -> Any:
        """A module of `ptx`, memoised by `key` as `cuda.Context.load_ptx` memoises it (`loads` counts the
        modules made: the PTX the real context would have assembled and loaded); a module hands out one
        function a name, as `cuda_module.Module.function` does."""
        from tilelang.runtime.cuda_module import Function

        ctx = self
        k = key or str(hash(ptx))
        if k in self._modules:
            return self._modules[k]
        self.loads += 1

        class _Module:
            def __init__(self) -> None:
                self.functions: dict[str, Function] = {}

            def function(self, name: str) -> Function:
                ctx.ptx[name] = ptx
                if name not in self.functions:
                    self.functions[name] = Function(ctx, ctx.d.CUfunction(next(ctx._functions)), name)
                return self.functions[name]

        self._modules[k] = mod = _Module()
        return mod


def stub_device(arch: str = "sm_90a", sms: int = 132) -> Any:
    """A `CudaDevice` over a `StubContext` (its `__init__`'s state, none of its driver calls)."""
    from collections import defaultdict

    from tilelang.runtime.cuda import CudaDevice
    from tilelang.runtime.cuda_arrive import Counters
    from tilelang.runtime.cuda_driver import _check

    dev = CudaDevice.__new__(CudaDevice)
    dev.out = None
    dev.ctx = StubContext(arch, sms)
    dev.arch = arch
    dev.launches = 0
    dev._streams = []
    dev._pending_asserts = defaultdict(list)
    dev._err_words = 4096
    dev._err = dev.ctx.pool.alloc(4 * dev._err_words)
    dev._err_next = 2
    dev._err_busy = {}
    dev._graph_asserts = {}
    dev._capturing = set()
    dev._capture_prints = defaultdict(list)
    dev._graph_prints = {}
    dev._arrive = Counters(dev.ctx, _check)
    return dev


class DevArray:
    """A NumPy array's memory presented as `cuda:0` memory (`__cuda_array_interface__`;
    launches go to `stream`, a raw handle, 0 the legacy default stream)."""

    def __init__(self, host: np.ndarray, stream: int | None = None) -> None:
        self.host = host
        self.shape = host.shape
        self.stream = stream

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        h = self.host
        return {"shape": h.shape, "typestr": h.dtype.str, "version": 3, "strides": None,
                "data": (h.ctypes.data, False), "stream": self.stream}

    @staticmethod
    def zeros(shape: tuple[int, ...], dtype: Any = np.float32, offset: int = 0) -> DevArray:
        """Zeros at a 256-byte boundary plus `offset` elements."""
        n = int(np.prod(shape))
        host = np.zeros(n + offset + 256, dtype=dtype)
        k = (-host.ctypes.data % 256) // host.dtype.itemsize + offset
        return DevArray(host[k : k + n].reshape(shape))


@contextlib.contextmanager
def installed(dev: Any, nat: Any = None) -> Iterator[Any]:
    """`dev` as the API's `cuda:0`, `nat` as the native launcher (None: the binding's path; the native
    launcher built against `cuda_fake`'s stub libcuda, `cuda_fake.stub_native`); restored on exit."""
    from tilelang.api import engines
    from tilelang.runtime import cuda_native

    saved_dev = engines._DEVICES.get("cuda:0")
    saved_native = cuda_native._STATE["module"]
    engines._DEVICES["cuda:0"] = dev
    cuda_native._STATE["module"] = nat
    try:
        yield dev
    finally:
        cuda_native._STATE["module"] = saved_native
        if saved_dev is None:
            engines._DEVICES.pop("cuda:0", None)
        else:
            engines._DEVICES["cuda:0"] = saved_dev
