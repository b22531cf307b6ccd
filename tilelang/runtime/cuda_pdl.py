"""Programmatic dependent launch (PDL, sm_90+) in the runtime: a kernel
compiled with `Target.pdl` (it waits with `griddepcontrol.wait` before its
first memory access and triggers `griddepcontrol.launch_dependents` where
`Target.pdl_trigger` says) is launched with `cuLaunchKernelEx` and
one attribute, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 1, so
its blocks may be scheduled while the previous kernel in the stream drains
and wait there for its memory (the launch's start-up overlaps the previous
kernel's tail; stream capture keeps it as a programmatic graph edge).

Opt-in, process-wide: `TILEC_PDL=1` (or the trigger's place: `entry`,
`late`, `last`, `exit`, `Target.pdl_trigger`, and `+prefetch` or `+bulk` for the
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
import math
import os
from collections.abc import Iterator
from typing import Any

from tilelang.backend.target import parse_pdl

PROGRAMMATIC_STREAM_SERIALIZATION = 6  # CUlaunchAttributeID

_ENV = os.environ.get("TILEC_PDL", "0")
# where a kernel lets the next one be scheduled (`Target.pdl_trigger`) and
# what it prefetches into L2 before its wait (`Target.pdl_prefetch`: "",
# "prefetch" or "bulk"; "loads": its leading loads of tensors the previous
# launch does not write, `early_names`): TILEC_PDL=entry|late|last|exit[+prefetch|
# +bulk|+loads], or 1 for "late"
# a setting it does not take: E0604 where a GPU device opens (`CudaDevice`, as `occupancy.BAD_SETTING`); it
# was a warning, and PDL stayed off
BAD_SETTING: tuple[str, str, str] | None = None
try:
    ON, TRIGGER, PREFETCH = parse_pdl(_ENV)
except ValueError:
    from tilelang.backend.target import PDL_PREFETCHES, PDL_TRIGGERS

    BAD_SETTING = ("TILEC_PDL", _ENV, f"0, 1 or a trigger ({', '.join(PDL_TRIGGERS)}), optionally with "
                   f"+{' or +'.join(PDL_PREFETCHES)}")
    ON, TRIGGER, PREFETCH = False, "late", ""
LAUNCHES = 0  # launches made with the attribute (benchmarks report it)
# "+loads": per stream, what the launches the next one may overlap may still
# be writing when it starts (the byte ranges of their written tensors: the
# last launch's, and the ones before it while they trigger before their
# wait), whether that is known (not after the stream's first launch), and
# the launch count the next launch must find for the record to be about its
# predecessor (the device's id and count: any Tile launch in between, on any
# stream, by any launcher, counts there; None where the caller counts none)
_LAST: dict[int, tuple[tuple[tuple[int, int], ...], bool, tuple[int, int] | None]] = {}
# inside `scoped`: the caller's own kernels, whose launches on another
# library's stream (PyTorch's) nothing else comes between (`early_names`)
_VOUCHED = False
EARLY = 0  # "+loads": launches given at least one tensor to read before their wait


def set_pdl(on: bool, trigger: str | None = None, prefetch: bool | str | None = None) -> bool:
    """Turn PDL on or off for the kernels compiled and launched from now on
    (and set the trigger's place, `Target.pdl_trigger`, and the pre-wait
    prefetch, `Target.pdl_prefetch`, when given); the previous on/off setting."""
    global ON, TRIGGER, PREFETCH
    _LAST.clear()  # launches made under another setting were not recorded
    old, ON = ON, bool(on)
    if trigger is not None:
        TRIGGER = trigger
    if prefetch is not None:
        PREFETCH = ("prefetch" if prefetch else "") if isinstance(prefetch, bool) else prefetch
    return old


@contextlib.contextmanager
def scoped(on: bool, trigger: str = "late", prefetch: bool | str = "") -> Iterator[None]:
    """The setting for the launches inside the `with` (a program's own
    kernels, e.g. the LLM engine's), the previous one after. The caller
    vouches that, inside, no other library's kernel runs between its
    launches on that library's stream (PyTorch's current one), which
    `early_names` cannot see: "+loads" reads early there only inside."""
    global _VOUCHED
    old = (ON, TRIGGER, PREFETCH, _VOUCHED)
    set_pdl(on, trigger, prefetch)
    _VOUCHED = True
    try:
        yield
    finally:
        set_pdl(*old[:3])
        _VOUCHED = old[3]


def mode() -> str:
    """The setting as `Target.pdl_mode` spells it: "" (off), or the trigger [+ "+prefetch" | "+bulk"]."""
    return (TRIGGER + (f"+{PREFETCH}" if PREFETCH else "")) if ON else ""


def target(arch: str, trace: bool = False) -> Any:
    """The compile target of a kernel launched now: `arch` under this setting
    (the trigger and prefetch only when on), with the block timeline's stamps
    when `trace` (`runtime/trace.py`)."""
    from tilelang.backend.target import Target

    return Target(arch, pdl=ON, pdl_trigger=TRIGGER, pdl_prefetch=PREFETCH if ON else False, trace=trace)


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


_WRITTEN: dict[int, tuple[Any, frozenset[str]]] = {}


def _written(kernel: Any) -> frozenset[str]:
    """The tensor parameters `kernel` may write: its `&mut` ones and any an
    `unsafe` store or atomic names (cached per kernel)."""
    hit = _WRITTEN.get(id(kernel))
    if hit is not None and hit[0] is kernel:
        return hit[1]
    from tilelang.ir import nodes as ir

    names = {p.name for p in kernel.params if isinstance(p, ir.TensorParam) and p.mutable}
    body = getattr(kernel, "body", None)
    if body is not None:
        names |= {op.tensor for op in ir.walk(body) if isinstance(op, ir.Store | ir.AtomicRMW)}
    out = frozenset(names)
    _WRITTEN[id(kernel)] = (kernel, out)
    return out


def forget(stream: int) -> None:
    """The launches recorded on `stream` are not the next launch's predecessor
    there: a capture began or ended on it (captured launches do not run; the
    stream's last kernel is the one from before the capture), or a graph was
    launched on it. Nothing is early for the next launch."""
    _LAST.pop(stream, None)


def _span(a: Any) -> tuple[int, int]:
    n = a.np_dtype.itemsize
    for d in a.shape:
        n *= d
    return (a.ptr, a.ptr + n)


def early_names(stream: int, kernel: Any, args: list[Any], grid: tuple[int, ...],
                count: tuple[int, int] | None = None, foreign: bool = False) -> frozenset[str]:
    """Under "+loads" with a "late", "last" or "exit" trigger: the read-only tensor
    parameters of `kernel` (Tile IR; `args` its CudaBuffers and scalars) that
    it may read before its `griddepcontrol.wait` on `stream`, because the
    launches it may overlap there write none of their bytes: the launch
    before it, which has passed its own wait when it triggers after it, so
    that every earlier launch is complete; and where that one triggers before
    its wait (`pdl_early`), the launches that one may overlap too, back to
    the first that triggers after its wait (their writes are recorded
    together). Nothing is early after a stream's first launch or a change of
    setting. Records this launch as the next one's predecessor (not an empty
    grid, which launches nothing). Every other setting: nothing early,
    nothing recorded.

    The predecessor must be the launch recorded, not another kernel between
    them (one that never triggers lets this one start once its blocks have
    exited, and only the wait makes its writes visible): `count` is the
    device's (id, launches made so far), which every Tile launcher counts, so
    a launch the record did not see (a plan's launcher made before the
    setting changed, another stream's launch) leaves nothing early; and on
    another library's stream (`foreign`: PyTorch's), whose own kernels
    nothing here counts, nothing is early unless a `scoped` caller vouches
    for the stream."""
    if not (ON and PREFETCH == "loads" and TRIGGER in ("late", "last", "exit")):
        return frozenset()
    n = math.prod(grid)
    if n == 0:
        return frozenset()
    from tilelang.ir import nodes as ir

    tensors = [(p, a) for p, a in zip(kernel.params, args, strict=True) if isinstance(p, ir.TensorParam)]
    written = _written(kernel)
    writes, known, expect = _LAST.get(stream, ((), False, None))
    known = known and expect == count and not (foreign and not _VOUCHED)
    out = frozenset() if not known else frozenset(
        p.name for p, a in tensors
        if p.name not in written and not any(lo < w_hi and w_lo < hi for lo, hi in [_span(a)] for w_lo, w_hi in writes))
    mine = tuple(_span(a) for p, a in tensors if p.name in written)
    after = None if count is None else (count[0], count[1] + 1)  # this launch counted
    # a launch that triggers before its wait lets the next one overlap what it overlaps
    _LAST[stream] = (mine + writes, known, after) if kernel.pdl_early else (mine, True, after)
    global EARLY
    EARLY += bool(out)
    return out
