"""The process-wide state the Python API shares between modules: one device per
engine ("cpu", "cuda:<index>") and the operations started and not yet waited
for (the launches in flight, which every new launch and host-function call
is checked against: BRIEF §6's run-time rules, E0305/E0309)."""

from __future__ import annotations

import itertools
import sys
import threading
from typing import Any

from tilelang.api.errors import ExecutionError
from tilelang.diagnostics.codes import api as acodes


class _Stdout:
    """Device and host `print` go to whatever `sys.stdout` is at the time
    (pytest's capture, a notebook cell)."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


_LOCK = threading.RLock()
_DEVICES: dict[str, Any] = {}
# token -> an `Operation` started and not waited for. A launch registers
# first and then checks the others (so of two launches made at once by two
# threads, at least one sees the other): the general path under `_LOCK`, the
# one-function launch of `operation._make_fast` without it, going on only
# when it is then the one entry. Readers iterate over a copy.
_PENDING: dict[int, Any] = {}
_TOKENS = itertools.count(1)


def _device(engine: str) -> Any:
    """The process's device for `engine` ("cpu" or "cuda:<index>")."""
    with _LOCK:
        dev = _DEVICES.get(engine)
        if dev is None:
            if engine == "cpu":
                from tilelang.runtime.cpu import CpuDevice

                dev = CpuDevice(out=_device_print, sanitizer=_sanitizer())
            else:
                from tilelang.runtime import cuda

                why = cuda.why_unavailable()
                if why is not None:
                    raise ExecutionError(
                        f"cannot run on the GPU: {why}",
                        help='load the module with `device="cpu"` to use the interpreter',
                        code=acodes.NO_GPU,
                    )
                dev = cuda.CudaDevice(int(engine.split(":", 1)[1]), out=_device_print)
            _DEVICES[engine] = dev
        return dev


def _sanitizer() -> Any:
    """With `TILE_SANITIZE=1`, the CPU engine runs every launch under the
    sanitizer (`tilelang.interp.sanitize`): a race between blocks or an
    `unsafe` write outside a tensor is an `ExecutionError`, a load wholly
    outside a tensor a `RuntimeWarning`."""
    from tilelang.run import sanitize_requested

    if not sanitize_requested():
        return None
    from tilelang.interp.sanitize import Sanitizer

    return Sanitizer(on_warning=_warn)


def _warn(d: Any) -> None:
    import warnings

    warnings.warn(f"warning[{d.code}]: {d.message}", RuntimeWarning, stacklevel=2)


def _device_print(text: str) -> None:
    _Stdout().write(text + "\n")


def gpu_available() -> bool:
    """True when a CUDA device can run kernels (never raises)."""
    from tilelang.run import gpu_available as available

    return available()


def in_flight() -> int:
    """How many `.launch()`ed operations have not been waited for (all modules)."""
    with _LOCK:
        return len(_PENDING)


def _resolve_device(device: str) -> str:
    if device not in ("cpu", "gpu", "auto"):
        from tilelang.api.errors import DeviceError

        raise DeviceError(
            f'device must be "cpu", "gpu" or "auto", not {device!r}',
            help='"gpu" runs on an NVIDIA GPU through CUDA, "cpu" on the interpreter, "auto" picks '
            "the GPU when there is one",
            code=acodes.UNKNOWN_DEVICE,
        )
    if device == "auto":
        return "gpu" if gpu_available() else "cpu"
    return device


# The `tilelang.graph()` being recorded (api/graphs.py), or None: a launch pays
# one global read for it. (The profiler's hook is `tilelang.profiler.hook`.)
RECORDING: Any = None
