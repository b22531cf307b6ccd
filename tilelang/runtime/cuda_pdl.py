"""Programmatic dependent launch (PDL, sm_90+) in the runtime: a kernel
compiled with `Target.pdl` (it waits with `griddepcontrol.wait` before its
first memory access and triggers `griddepcontrol.launch_dependents` where
`Target.pdl_trigger` says) is launched with `cuLaunchKernelEx` and
one attribute, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 1, so
its blocks may be scheduled while the previous kernel in the stream drains
and wait there for its memory (the launch's start-up overlaps the previous
kernel's tail; stream capture keeps it as a programmatic graph edge).

Opt-in, process-wide: `TILEC_PDL=1` (or the trigger's place: `entry`,
`late`, `exit`, `Target.pdl_trigger`, and `+prefetch` or `+bulk` for the
pre-wait L2 prefetches, `Target.pdl_prefetch`) in the environment or
`set_pdl(True)`.
`CudaDevice` reads `ON` when it compiles a kernel (the flag is part of the
variant and of the compile-cache key) and when it launches; a kernel built
with PDL never takes the fast launchers (cuLaunchKernel): it goes through
`Function.launch`, whose PDL branch is `launch` here. Plans that the API
made before the flag changed keep their launcher (a kernel without PDL
launched the old way is still correct): load the module again to use the
new setting everywhere (the LLM engine does, `Plan.pdl`). Targets before
sm_90 refuse the flag when a kernel is compiled (`Target`).

The structs are cuda.h's (CUDA 12+): CUlaunchAttribute is a 4-byte id, 4
bytes of padding and a 64-byte value union (72 bytes); CUlaunchConfig is
seven unsigned ints, the stream, the attribute pointer and their count.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
from collections.abc import Iterator
from typing import Any

PROGRAMMATIC_STREAM_SERIALIZATION = 6  # CUlaunchAttributeID

_ENV = os.environ.get("TILEC_PDL", "0")
ON = _ENV not in ("", "0")
# where a kernel lets the next one be scheduled (`Target.pdl_trigger`) and
# what it prefetches into L2 before its wait (`Target.pdl_prefetch`: "",
# "prefetch" or "bulk"): TILEC_PDL=entry|late|exit[+prefetch|+bulk], or 1
# for "late"
_TRIG, _, _EXTRA = _ENV.partition("+")
TRIGGER = _TRIG if _TRIG in ("entry", "late", "exit") else "late"
PREFETCH = _EXTRA if _EXTRA in ("prefetch", "bulk") else ""
LAUNCHES = 0  # launches made with the attribute (benchmarks report it)


def set_pdl(on: bool, trigger: str | None = None, prefetch: bool | str | None = None) -> bool:
    """Turn PDL on or off for the kernels compiled and launched from now on
    (and set the trigger's place, `Target.pdl_trigger`, and the pre-wait
    prefetch, `Target.pdl_prefetch`, when given); the previous on/off setting."""
    global ON, TRIGGER, PREFETCH
    old, ON = ON, bool(on)
    if trigger is not None:
        TRIGGER = trigger
    if prefetch is not None:
        PREFETCH = ("prefetch" if prefetch else "") if isinstance(prefetch, bool) else prefetch
    return old


@contextlib.contextmanager
def scoped(on: bool, trigger: str = "late", prefetch: bool | str = "") -> Iterator[None]:
    """The setting for the launches inside the `with` (a program's own
    kernels, e.g. the LLM engine's), the previous one after."""
    old = (ON, TRIGGER, PREFETCH)
    set_pdl(on, trigger, prefetch)
    try:
        yield
    finally:
        set_pdl(*old)


def mode() -> str:
    """The setting as `Target.pdl_mode` spells it: "" (off), or the trigger [+ "+prefetch" | "+bulk"]."""
    return (TRIGGER + (f"+{PREFETCH}" if PREFETCH else "")) if ON else ""


class LaunchAttribute(ctypes.Structure):
    _fields_ = [
        ("id", ctypes.c_uint),
        ("pad", ctypes.c_ubyte * 4),
        ("value", ctypes.c_int),  # programmaticStreamSerializationAllowed (offset 0 of the union)
        ("value_rest", ctypes.c_ubyte * 60),
    ]


class LaunchConfig(ctypes.Structure):
    _fields_ = [
        ("gridDimX", ctypes.c_uint),
        ("gridDimY", ctypes.c_uint),
        ("gridDimZ", ctypes.c_uint),
        ("blockDimX", ctypes.c_uint),
        ("blockDimY", ctypes.c_uint),
        ("blockDimZ", ctypes.c_uint),
        ("sharedMemBytes", ctypes.c_uint),
        ("hStream", ctypes.c_void_p),
        ("attrs", ctypes.POINTER(LaunchAttribute)),
        ("numAttrs", ctypes.c_uint),
    ]


LAUNCH_EX = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(LaunchConfig), ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p)


def config(grid: tuple[int, int, int], block: int, smem: int, stream: int) -> tuple[LaunchConfig, LaunchAttribute]:
    """The launch's CUlaunchConfig with its one attribute (keep both alive for the call)."""
    attr = LaunchAttribute(id=PROGRAMMATIC_STREAM_SERIALIZATION, value=1)
    cfg = LaunchConfig(grid[0], grid[1], grid[2], block, 1, 1, smem, stream or None, ctypes.pointer(attr), 1)
    return cfg, attr


@functools.cache
def _launch_ex() -> Any:
    """libcuda's `cuLaunchKernelEx`, or None (an old driver, no libcuda)."""
    try:
        return LAUNCH_EX(("cuLaunchKernelEx", ctypes.CDLL("libcuda.so.1")))
    except (OSError, AttributeError):
        return None


def launch(function: int, grid: tuple[int, int, int], block: int, smem: int, stream: int, params: int) -> int:
    """`cuLaunchKernelEx` with programmatic stream serialization; the CUresult
    code (999, CUDA_ERROR_UNKNOWN, where the driver has no cuLaunchKernelEx)."""
    global LAUNCHES
    f = _launch_ex()
    if f is None:
        return 999
    cfg, _attr = config(grid, block, smem, stream)
    code = int(f(ctypes.byref(cfg), function, params, None))
    LAUNCHES += code == 0
    return code
