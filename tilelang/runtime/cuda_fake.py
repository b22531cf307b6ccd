"""A fake CUDA device for tests and benchmarks without a GPU: the Python side
of a GPU launch with the driver replaced by a stand-in libcuda built here.

- `STUB_LIBCUDA`: C text of `cuLaunchKernel`, `cuStreamSynchronize` and
  `cuStreamIsCapturing` that record their arguments (`last[12]`), count the
  launches that succeeded and the synchronisations (`n_launch`, `n_sync`),
  and return `fail_with` / report `capture_status` when a test sets them.
- `stub_native(directory)`: the real native launcher (`cuda_native.py`)
  built and loaded against that stub: the same C path as on the GPU.
- `FakeCuda`: `CudaDevice`'s interface for external memory, streams, the
  fast launcher and the native wait; its general `run` only counts.
- `installed(nat)`: a context manager that makes a `FakeCuda` the API's
  `cuda:0`, describes PyTorch CPU tensors as `cuda:0` memory, gives
  PyTorch a current raw stream of the caller's choosing, and loads `nat` as
  the native launcher; everything is restored on exit.

Used by `tests/api/test_fast_launch.py`, `tests/api/test_native_launch.py`
and `benchmarks/launch.py`. Imports neither cuda-python nor PyTorch at
import time.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

STUB_LIBCUDA = r"""
#include <stdint.h>
uint64_t last[12];
int n_launch, n_sync, capture_status, fail_with;
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned smem, void *stream, void **params, void **extra) {
    last[0] = (uint64_t)f; last[1] = gx; last[2] = gy; last[3] = gz; last[4] = bx;
    last[5] = by; last[6] = bz; last[7] = smem; last[8] = (uint64_t)stream;
    last[9] = (uint64_t)params; last[10] = (uint64_t)extra;
    if (fail_with) return fail_with;
    n_launch++;
    return 0;
}
int cuStreamSynchronize(void *s) { n_sync++; last[11] = (uint64_t)s; return 0; }
int cuStreamIsCapturing(void *s, int *status) {
    *status = capture_status; last[11] = (uint64_t)s; return 0;
}
"""


def can_build() -> bool:
    """Whether this machine has a C compiler and `Python.h` for the stub."""
    import sysconfig

    from tilelang.runtime import cuda_native

    include = sysconfig.get_paths().get("include")
    return bool(cuda_native._compiler() and include and Path(include, "Python.h").exists())


def stub_native(directory: Path) -> tuple[Any, Any]:
    """(the native launcher's extension, the stub library) built in
    `directory`; raises OSError/CalledProcessError where it cannot be built."""
    from tilelang.runtime import cuda_native

    cc = cuda_native._compiler()
    if cc is None:
        raise OSError("no C compiler")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "stub.c").write_text(STUB_LIBCUDA)
    lib_path = directory / "libstub.so"
    subprocess.run(
        [cc, "-O2", "-shared", "-fPIC", str(directory / "stub.c"), "-o", str(lib_path)],
        check=True,
        capture_output=True,
    )
    lib = ctypes.CDLL(str(lib_path))
    return cuda_native.load(cuda_native.build(directory), lib), lib


def count(lib: Any, name: str) -> int:
    """One of the stub's counters (`n_launch`, `n_sync`)."""
    return int(ctypes.c_int.in_dll(lib, name).value)


def set_int(lib: Any, name: str, value: int) -> None:
    """Set one of the stub's knobs (`fail_with`, `capture_status`)."""
    ctypes.c_int.in_dll(lib, name).value = value


def last(lib: Any) -> list[int]:
    """The stub's record of the last calls' arguments."""
    return list((ctypes.c_uint64 * 12).in_dll(lib, "last"))


def _result(e: int) -> int:
    return e


_result.CUDA_SUCCESS = 0  # type: ignore[attr-defined]
_result.CUDA_ERROR_INVALID_CONTEXT = 201  # type: ignore[attr-defined]
_result.CUDA_ERROR_INVALID_HANDLE = 400  # type: ignore[attr-defined]


class FakeCuda:
    """`CudaDevice`'s interface for external memory, streams, the fast
    launcher and the native wait; the general path's `run` only counts.
    `FastLaunch.make` packs the arguments as on the GPU; the native
    launcher's calls reach the stub libcuda."""

    name = "fake-cuda"
    kind = "gpu"

    def __init__(self, nat: Any = None, lib: Any = None) -> None:
        self.nat = nat
        self.lib = lib
        # the profiler's calls, in order, each with the stub's launch count then
        self.log: list[tuple[str, int]] = []
        self.capturing = False
        self._holds = self._opened = 0
        self.launches = 0
        self.runs = 0
        self.made_current = 0
        self._err = SimpleNamespace(ptr=0)
        driver = SimpleNamespace(cuLaunchKernel=lambda *a: (0,), CUresult=_result)
        self.ctx = SimpleNamespace(make_current=self._current, d=driver)
        self._streams: dict[int, object] = {}

    def _current(self) -> None:
        self.made_current += 1

    def prepare(self, kir: Any) -> Any:
        return kir

    def wrap_external(
        self, ptr: int, shape: Any, np_dtype: Any, nbytes: int, bf16: bool = False
    ) -> Any:
        return SimpleNamespace(ptr=ptr, shape=tuple(shape))

    def foreign_stream(self, handle: int) -> object:
        return self._streams.setdefault(int(handle), object())

    def run(
        self, prepared: Any, grid: Any, args: Any, stream: Any = None, span: Any = None
    ) -> None:
        self.runs += 1
        self._note("run")

    def _note(self, what: str) -> None:
        self.log.append((what, count(self.lib, "n_launch") if self.lib is not None else -1))

    # -- the profiler's interface (`CudaDevice.record_event`, `hold_stream`, ...)
    def record_event(self, stream: Any = None) -> int:
        self._note("event")
        return len(self.log)

    def event_seconds(self, start: Any, end: Any) -> float:
        return 1e-6 * (end - start)

    def hold_stream(self, stream: Any) -> int | None:
        if self.capturing:
            return None
        self._holds += 1
        self._note("hold")
        return self._holds

    def open_stream(self, token: int | None) -> None:
        if token is not None and token > self._opened:  # opening twice is fine, as on a GPU
            self._opened = token
            self._note("open")

    def fast_launcher(self, prepared: Any, grid: Any, args: Any, span: Any = None) -> Any:
        from tilelang.ir import nodes as ir
        from tilelang.runtime.cuda_fast import FastLaunch

        slots = [
            SimpleNamespace(what="ptr", param=p.name, kind="ptr")
            if isinstance(p, ir.TensorParam)
            else SimpleNamespace(what="value", param=p.name, kind=p.value.type.dtype.value)
            for p in prepared.params
        ]
        abi = SimpleNamespace(slots=slots, num_threads=128, smem_bytes=0)
        fn = SimpleNamespace(
            handle=0x5151, name=prepared.name
        )  # an int: the native launcher takes it
        index = {p.name: i for i, p in enumerate(prepared.params)}
        return FastLaunch.make(self, fn, abi, grid, args, index)

    def wait_foreign(self, stream: Any, raw: int | None = None) -> None:
        """`CudaDevice.wait_foreign`'s native path (two calls of the extension)."""
        nat = self.nat
        if nat is not None and raw is not None and nat.capturing(raw) == 0 and nat.sync(raw) != 0:
            raise RuntimeError("the stub's cuStreamSynchronize failed")

    def is_capturing(self, stream: Any) -> bool:
        return self.capturing

    def sync_foreign(self, stream: Any) -> None:
        pass

    def sync(self, stream: Any = None) -> None:
        pass


@contextlib.contextmanager
def installed(nat: Any, lib: Any = None) -> Iterator[SimpleNamespace]:
    """A `FakeCuda` over native launcher `nat` (None: the binding's path) as
    the API's `cuda:0`, PyTorch CPU tensors described as `cuda:0` memory
    (when PyTorch is imported), PyTorch's current raw stream read from
    `state.current["raw"]`; `lib`, the stub library, lets the device note
    the stub's launch count in its log. Yields `state` (`dev`, `current`)."""
    from tilelang.api import arrays, engines
    from tilelang.runtime import cuda_native

    dev = FakeCuda(nat, lib)
    current = {"raw": 0}
    torch = sys.modules.get("torch")
    saved_dev = engines._DEVICES.get("cuda:0")
    saved_describe = arrays._torch
    saved_native = cuda_native._STATE["module"]
    missing = object()
    saved_raw = getattr(torch._C, "_cuda_getCurrentRawStream", missing) if torch else missing
    engines._DEVICES["cuda:0"] = dev
    cuda_native._STATE["module"] = nat
    if torch is not None:
        arrays._torch = lambda t: dataclasses.replace(
            saved_describe(t), space="cuda:0", host=None, stream=0
        )
        torch._C._cuda_getCurrentRawStream = lambda index: current["raw"]
    try:
        yield SimpleNamespace(dev=dev, current=current)
    finally:
        cuda_native._STATE["module"] = saved_native
        arrays._torch = saved_describe
        if saved_dev is None:
            engines._DEVICES.pop("cuda:0", None)
        else:
            engines._DEVICES["cuda:0"] = saved_dev
        if torch is not None:
            if saved_raw is missing:
                del torch._C._cuda_getCurrentRawStream
            else:
                torch._C._cuda_getCurrentRawStream = saved_raw
